import Dispatch
import Foundation
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio
@testable import SessionKit

/// A clip read on another thread hands out exactly the stream's frames, its errors where they
/// are met, and stops when it is dropped.
@Suite("Clips read ahead", .tags(.concurrent))
struct ClipReadAheadTests {
    static let rate: SampleRate = 24_000

    /// 100,000 frames of a ramp (every sample different), leveled as speech at −20 LUFS.
    static func stream() throws(AudioError) -> ClipStream {
        let samples = (0..<100_000).map { Float($0 % 1_000) / 2_000 - 0.25 }
        return try ClipStream(
            samples: samples,
            sampleRate: rate,
            channelCount: .mono,
            outputRate: rate,
            outputChannels: .mono,
            outputFrames: 100_000,
            levelingReference: -20
        )
    }

    /// Everything a source hands out, read `sizes` frames at a time (cycled).
    static func drain(_ read: (inout [Float], Int) throws -> Int, sizes: [Int]) rethrows -> [Float] {
        var all: [Float] = []
        var buffer: [Float] = []
        var turn = 0
        while case let frames = try read(&buffer, sizes[turn % sizes.count]), frames > 0 {
            all += buffer[0..<frames]
            turn += 1
        }
        return all
    }

    @Test("The same frames as the stream read directly, whatever the reads' sizes, and the leveler's work")
    func sameFrames() throws {
        let direct = try Self.stream()
        let expected = try Self.drain({ try direct.read(into: &$0, maximumFrames: $1) }, sizes: [4_096])
        #expect(expected.count == 100_000)
        for sizes in [[1, 7_000], [16_384], [8_192, 3]] {
            let ahead = ClipReadAhead(channels: 1, queue: DispatchQueue(label: "test")) { () throws(AudioError) in
                try Self.stream()
            }
            let got = try Self.drain({ try ahead.read(into: &$0, maximumFrames: $1) }, sizes: sizes)
            #expect(got == expected, "reads of \(sizes)")
            #expect(try ahead.finish() == direct.leveling)
        }
    }

    @Test("An error opening the clip is thrown by the first read, not before")
    func openFailure() throws {
        let ahead = ClipReadAhead(channels: 1, queue: DispatchQueue(label: "test")) { () throws(AudioError) in
            throw AudioError(.cannotDecode, path: "/x.mp3", reason: "not audio")
        }
        var buffer: [Float] = []
        #expect(throws: AudioError.self) { try ahead.read(into: &buffer, maximumFrames: 10) }
        // And again: the failure is where the clip ends.
        #expect(throws: AudioError.self) { try ahead.finish() }
    }

    @Test("Dropped after one read, its thread stops, and the queue serves the next clip")
    func dropped() throws {
        let queue = DispatchQueue(label: "test")
        var ahead: ClipReadAhead? = ClipReadAhead(channels: 1, queue: queue) { () throws(AudioError) in
            try Self.stream()
        }
        var buffer: [Float] = []
        #expect(try ahead?.read(into: &buffer, maximumFrames: 100) == 100)
        ahead = nil
        // Its reading thread, blocked with four blocks unread, ends: the queue runs what follows.
        let done = DispatchSemaphore(value: 0)
        queue.async { done.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success, "the first reader's thread ended")
        let next = ClipReadAhead(channels: 1, queue: queue) { () throws(AudioError) in try Self.stream() }
        #expect(try Self.drain({ try next.read(into: &$0, maximumFrames: $1) }, sizes: [10_000]).count == 100_000)
    }
}
