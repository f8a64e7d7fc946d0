import Foundation
import SessionAudio
import SessionTimeline
import Testing

@Suite("Ceiling dips: the moments a codec took over the ceiling, lowered alone")
struct CeilingDipsTests {
    @Test("A moment is lowered by its excess and the margin, held 50 ms either side, gliding back over 50 ms more")
    func shape() {
        var dips = CeilingDips(sampleRate: 48_000)
        #expect(dips.isEmpty && dips.deepestDecibels == 0 && dips.loweredFrames == 0)
        dips.lower(at: [(frame: 48_000, excess: 0.7)], margin: 0.3)
        #expect(abs(dips.deepestDecibels - -1.0) < 1e-9)
        #expect(abs(dips.decibels(at: 48_000) - -1.0) < 1e-9)
        #expect(abs(dips.decibels(at: 48_000 - 2_400) - -1.0) < 1e-9, "held 50 ms before")
        #expect(abs(dips.decibels(at: 48_000 + 2_399) - -1.0) < 1e-9, "and 50 ms after")
        let halfway = dips.decibels(at: 48_000 - 2_400 - 1_200)
        #expect(halfway > -1.0 && halfway < -0.4, "gliding: \(halfway)")
        #expect(dips.decibels(at: 48_000 - 4_800) == 0 && dips.decibels(at: 48_000 + 4_800) == 0)
        #expect(dips.loweredFrames == 4 * 2_400, "0.2 s in all")
    }

    @Test("Moments within 50 ms share one dip as deep as the deepest; a second correction deepens what is there")
    func merging() {
        var dips = CeilingDips(sampleRate: 48_000)
        let changed = dips.lower(
            at: [(frame: 10_000, excess: 0.2), (frame: 12_000, excess: 0.9), (frame: 96_000, excess: 0.1)],
            margin: 0.3
        )
        #expect(dips.dips.count == 2)
        #expect(abs(dips.decibels(at: 10_000) - -1.2) < 1e-9, "the pair's deeper excess")
        let expected: [Range<Int64>] = [5_200..<16_800, 91_200..<100_800]
        #expect(changed == expected, "what changes is each new dip with its glides")
        let outside: [Int64] = [5_199, 16_800, 91_199, 100_800]
        for frame in outside {
            #expect(dips.decibels(at: frame) == 0, "frame \(frame) is outside what changed, and unchanged")
        }
        #expect(dips.loweredFrames == (12_000 + 4_800) - (10_000 - 4_800) + 4 * 2_400)
        dips.lower(at: [(frame: 10_000, excess: 0.5)], margin: 0.3)
        #expect(abs(dips.decibels(at: 10_000) - -2.0) < 1e-9, "on top of the first")
        #expect(abs(dips.deepestDecibels - -2.0) < 1e-9)
    }

    @Test("Applied to interleaved blocks it gives every channel the gain its frame has, whatever the block split")
    func apply() {
        var dips = CeilingDips(sampleRate: 48_000)
        dips.lower(at: [(frame: 6_000, excess: 2.7)], margin: 0.3)
        let frames = 12_000
        var whole = [Float](repeating: 0.5, count: frames * 2)
        dips.apply(to: &whole, frames: frames, channels: 2, at: 0)
        var split: [Float] = []
        var start = 0
        for size in [1_000, 3_333, 5_000, 2_667] {
            var block = [Float](repeating: 0.5, count: size * 2)
            dips.apply(to: &block, frames: size, channels: 2, at: Int64(start))
            split += block
            start += size
        }
        #expect(split == whole)
        for frame in [0, 3_000, 6_000, 8_000, 11_999] {
            let expected = Float(0.5 * pow(10, dips.decibels(at: Int64(frame)) / 20))
            #expect(abs(whole[2 * frame] - expected) < 1e-6 && whole[2 * frame + 1] == whole[2 * frame])
        }
        #expect(whole[2 * 6_000] < 0.5 * 0.71 && whole[0] == 0.5)
    }
}
