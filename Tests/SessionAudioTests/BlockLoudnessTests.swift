import Foundation
import SessionAudio
import SessionTimeline
import TestSupport
import Testing

/// The hand-written output meter is held to libebur128 (the meter the clips are measured with)
/// and to ffmpeg's `ebur128` filter, on speech, beds and tones, mono and stereo.
@Suite("BlockLoudness agrees with libebur128 and ffmpeg")
struct BlockLoudnessTests {
    /// Interleaves `left` and `right`.
    static func stereo(_ left: [Float], _ right: [Float]) -> [Float] {
        zip(left, right).flatMap { [$0, $1] }
    }

    /// The material: a speech clip, the library's rain and drone beds, and tones at 1 kHz and
    /// 100 Hz (stereo, one channel 6 dB down), each with its rate and channel count.
    static func material() throws -> [(name: String, samples: [Float], rate: SampleRate, channels: ChannelCount)] {
        let speech = try decodeFully(FixtureClip.anyPath)
        let bedRate = SynthesizedSound.sampleRate
        let tone = sine(frequency: 1_000, rate: 48_000, seconds: 8, amplitude: 0.25)
        let low = sine(frequency: 100, rate: 44_100, seconds: 8, amplitude: 0.5)
        return [
            ("speech", speech.samples, speech.rate, speech.channels),
            ("rain", SynthesizedSound.rain.samples(), bedRate, .mono),
            ("drone", SynthesizedSound.drone.samples(), bedRate, .mono),
            ("tone 1 kHz", tone, 48_000, .mono),
            ("tone 100 Hz stereo", stereo(low, low.map { $0 / 2 }), 44_100, .stereo),
            // Speech, quiet for a while, then speech again: the gates matter.
            (
                "speech, silence, speech",
                speech.samples + [Float](repeating: 0, count: speech.rate.hertz * 5) + speech.samples.map { $0 / 4 },
                speech.rate, speech.channels
            ),
        ]
    }

    @Test("Integrated loudness within 0.1 LU of libebur128, the loudest short-term above the integrated")
    func integrated() throws {
        for item in try Self.material() {
            var ours = BlockLoudness(sampleRate: item.rate, channelCount: item.channels)
            let frames = item.samples.count / item.channels.count
            // In uneven blocks, as the mixer hands them over.
            var done = 0
            while done < frames {
                let count = min(3_000 + done % 1_777, frames - done)
                ours.add(item.samples, from: done, frames: count)
                done += count
            }
            let reference = try LoudnessMeter(sampleRate: item.rate, channelCount: item.channels)
            reference.add(item.samples)
            let expected = try #require(reference.integratedLoudness)
            let measured = try #require(ours.integratedLoudness)
            #expect(abs(measured - expected) <= 0.1, "\(item.name): ours \(measured), libebur128 \(expected)")
            #expect((ours.maximumShortTermLoudness ?? -100) >= measured - 0.1, "\(item.name)")
        }
    }

    @Test("Integrated loudness and range as ffmpeg's ebur128 reads the same audio written to WAV", .requiresFFmpeg)
    func againstFFmpeg() async throws {
        let folder = try TemporaryFolder()
        for item in try Self.material() {
            let path = folder.path("\(item.name).wav")
            let writer = try SoundFileWriter(
                path: path,
                sampleRate: item.rate,
                channelCount: item.channels,
                format: .float32
            )
            try writer.write(item.samples, frames: item.samples.count / item.channels.count)
            _ = try writer.close()
            var ours = BlockLoudness(sampleRate: item.rate, channelCount: item.channels)
            ours.add(item.samples, frames: item.samples.count / item.channels.count)
            let ffmpeg = try await FFmpeg.ebur128(path)
            let measured = try #require(ours.integratedLoudness)
            #expect(
                abs(measured - ffmpeg.integratedLoudness) <= 0.1,
                "\(item.name): ours \(measured), ffmpeg \(ffmpeg.integratedLoudness)"
            )
            if let range = ffmpeg.range, range > 0 {
                #expect(
                    abs((ours.loudnessRange ?? 0) - range) <= 0.5,
                    "\(item.name): ours \(ours.loudnessRange ?? 0), ffmpeg \(range)"
                )
            }
        }
    }

    @Test(
        "Speech flagged in groups: each group's loudness is that of its frames alone, and all groups' that of them joined"
    )
    func speechGroups() throws {
        let speech = try decodeFully(FixtureClip.anyPath)
        let quiet = speech.samples.map { $0 / 2 }
        var ours = BlockLoudness(sampleRate: speech.rate, channelCount: .mono, speechGroups: 2)
        let gap = [Float](repeating: 0.01, count: speech.rate.hertz * 3)
        ours.add(speech.samples, frames: speech.samples.count, speechGroup: 0)
        ours.add(gap, frames: gap.count)
        ours.add(quiet, frames: quiet.count, speechGroup: 1)

        func libebur128(_ samples: [Float]) throws -> Double {
            let meter = try LoudnessMeter(sampleRate: speech.rate, channelCount: .mono)
            meter.add(samples)
            return try #require(meter.integratedLoudness)
        }
        #expect(abs((ours.speechLoudness(ofGroup: 0) ?? 0) - (try libebur128(speech.samples))) <= 0.1)
        #expect(abs((ours.speechLoudness(ofGroup: 1) ?? 0) - (try libebur128(quiet))) <= 0.1)
        #expect(abs((ours.speechLoudness ?? 0) - (try libebur128(speech.samples + quiet))) <= 0.1)
        #expect(abs((ours.integratedLoudness ?? 0) - (try libebur128(speech.samples + gap + quiet))) <= 0.1)
    }

    @Test("Digital silence is skipped once the filters settle, and no figure changes by it", arguments: [1, 2])
    func silenceSkipped(channels: Int) throws {
        let speech = try decodeFully(FixtureClip.anyPath)
        let mono =
            speech.channels == .mono
            ? speech.samples
            : stride(from: 0, to: speech.samples.count, by: 2).map {
                speech.samples[$0]
            }
        let gap = [Float](repeating: 0, count: speech.rate.hertz * 4)
        let signal = mono + gap + mono.map { $0 / 3 } + gap + [0.5, -0.5] + gap + mono
        let samples = signal.flatMap { Array(repeating: $0, count: channels) }
        // The same with the silence replaced by 10⁻³⁰, which is never skipped.
        let unskippable = samples.map { $0 == 0 ? Float(1e-30) : $0 }
        let count = ChannelCount(channels)!
        var skipped = BlockLoudness(sampleRate: speech.rate, channelCount: count, speechGroups: 2)
        var filtered = BlockLoudness(sampleRate: speech.rate, channelCount: count, speechGroups: 2)
        let frames = signal.count
        var done = 0
        while done < frames {
            let length = min(2_500 + done % 977, frames - done)
            let group = done < frames / 2 ? 0 : 1
            skipped.add(samples, from: done, frames: length, speechGroup: group)
            filtered.add(unskippable, from: done, frames: length, speechGroup: group)
            done += length
        }
        let pairs: [(String, Double?, Double?)] = [
            ("integrated", skipped.integratedLoudness, filtered.integratedLoudness),
            ("range", skipped.loudnessRange, filtered.loudnessRange),
            ("max short-term", skipped.maximumShortTermLoudness, filtered.maximumShortTermLoudness),
            ("speech", skipped.speechLoudness, filtered.speechLoudness),
            ("speech of group 1", skipped.speechLoudness(ofGroup: 1), filtered.speechLoudness(ofGroup: 1)),
        ]
        for (name, ours, reference) in pairs {
            let ours = try #require(ours, "\(name)")
            let reference = try #require(reference, "\(name)")
            #expect(abs(ours - reference) < 1e-9, "\(name): \(ours) skipping silence, \(reference) filtering it")
        }
    }
}
