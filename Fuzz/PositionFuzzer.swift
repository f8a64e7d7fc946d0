// libFuzzer target for the files `render-session position` reads: a timeline JSON (decoded as
// `Timeline`) or a queue JSON (QueueFile.swift), turned into a PlaybackMap and asked positions.
//
// Compiled into a SessionKit module made of the three files it needs (QueueFile.swift,
// JSONProblem.swift, SessionError.swift; see scripts/fuzz), over the SessionTimeline module.
//
// A thrown SessionError (an unreadable file) or ScriptError (a position out of range, rates that
// cannot be counted together) is an expected outcome. Findings are crashes (an overflow in the
// tick arithmetic, say), sanitizer reports, timeouts, out-of-memory, and these broken promises:
// - a map's duration is finite and not negative;
// - every time from 0 to the duration locates to an item that exists, an offset within it, and
//   back (elapsed) to within half a tick and half a frame (of the slowest rate) of the time asked;
// - a time past the end, negative or not a number is refused, never answered.
import Foundation
import SessionTimeline

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    let map: PlaybackMap
    do {
        if QueueFile.isQueue(bytes) {
            map = try PlaybackMap(items: try QueueFile.items(in: bytes, name: "queue.json"))
        } else {
            guard let timeline = try? JSONDecoder().decode(Timeline.self, from: bytes) else { return 0 }
            map = try PlaybackMap(timeline: timeline)
        }
    } catch let error as SessionError {
        expect(error.code == .unreadableTimeline && error.lines.count == 1, "\(error)")
        return 0
    } catch {
        return 0
    }
    let duration = map.durationSeconds
    expect(duration.isFinite && duration >= 0, "duration \(duration)")
    for fraction in [0, 0.25, 0.5, 0.999, 1] {
        let seconds = duration * fraction
        guard let position = try? map.locate(seconds: seconds) else {
            expect(map.items.isEmpty, "no position at \(seconds) of \(duration) s")
            continue
        }
        expect(map.items.indices.contains(position.itemIndex), "item \(position.itemIndex) of \(map.items.count)")
        let item = map.items[position.itemIndex]
        expect(
            position.offsetFrames >= .zero && position.offsetFrames <= item.frameCount,
            "offset \(position.offsetFrames) in an item of \(item.frameCount)"
        )
        guard let back = try? map.elapsed(itemIndex: position.itemIndex, offsetFrames: position.offsetFrames) else {
            expect(false, "no elapsed time for a located position")
            return 0
        }
        // docs/position.md's rule: to the nearest tick, then to the nearest frame. So half a tick
        // plus half a frame of the slowest rate (a time that rounds to an item's end is the next
        // item's start, which may be at another rate than the item the time fell in).
        let slowest = map.items.map(\.sampleRate.hertz).min() ?? item.sampleRate.hertz
        let halfFrame = 0.5 / Double(slowest) + 0.5 / Double(map.ticksPerSecond) + 1e-9 * max(1, duration)
        expect(abs(back.seconds - seconds) <= halfFrame, "\(seconds) s located and back is \(back.seconds) s")
    }
    for outside in [-1, duration + 1, .nan, .infinity] {
        expect((try? map.locate(seconds: outside)) == nil, "located \(outside) s in \(duration) s")
    }
    return 0
}
