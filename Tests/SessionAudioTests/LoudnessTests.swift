import Foundation
import SessionAudio
import SessionTimeline
import TestSupport
import Testing

/// `seconds` of a sine at `frequency` Hz and linear `amplitude`, starting at `phase` radians, with
/// 50 ms raised-cosine fades in and out (an abrupt start rings in any band-limited meter).
func sine(
    frequency: Double,
    rate: Int,
    seconds: Double,
    amplitude: Double,
    phase: Double = 0,
    fades: Bool = true
) -> [Float] {
    let count = Int(seconds * Double(rate))
    let fade = fades ? Int(0.05 * Double(rate)) : 0
    return (0..<count).map { index in
        var value = amplitude * sin(2 * Double.pi * frequency * Double(index) / Double(rate) + phase)
        let edge = min(index, count - 1 - index)
        if edge < fade { value *= 0.5 - 0.5 * cos(Double.pi * Double(edge) / Double(fade)) }
        return Float(value)
    }
}

/// Every frame of `path`, decoded.
func decodeFully(_ path: String) throws -> (samples: [Float], rate: SampleRate, channels: ChannelCount) {
    let decoder = try AudioFileDecoder(path: path)
    var all: [Float] = []
    var buffer: [Float] = []
    while case let frames = try decoder.read(into: &buffer, maximumFrames: 4_096), frames > 0 {
        all += buffer.prefix(frames * decoder.channelCount.count)
    }
    return (all, decoder.sampleRate, decoder.channelCount)
}

@Suite("Loudness")
struct LoudnessTests {
    static let speechClip = FixtureClip.anyPath  // 22,050 Hz mono, 16.8 s

    @Test("Integrated loudness of fixture clips agrees with ffmpeg's ebur128 filter within 0.1 LU", .requiresFFmpeg)
    func agreesWithFFmpeg() async throws {
        let clips = try FixtureClip.all()
        let chosen = [clips.first { $0.channels == 1 }!, clips.first { $0.channels == 2 }!]
        for clip in chosen {
            let ours = try AudioFileDecoder.measureLoudness(path: clip.path)
            let theirs = try await FFmpeg.ebur128(clip.path)
            let loudness = try #require(ours.loudness)
            #expect(
                abs(loudness - theirs.integratedLoudness) <= 0.1,
                "\(clip.text): ours \(loudness) LUFS, ffmpeg's \(theirs.integratedLoudness) LUFS"
            )
            #expect(ours.frameCount == Frames(clip.sourceFrames), "gapless, the exact length as decoded")
        }
    }

    @Test(
        "A sound's loudest 400 ms agrees with ffmpeg's momentary maximum within 0.2 LU, for a 150 ms beep and a 3 s tone; the beep has no integrated loudness",
        .requiresFFmpeg
    )
    func loudestMomentaryAgreesWithFFmpeg() async throws {
        let folder = try TemporaryFolder()
        for (name, seconds, frequency) in [("beep", 0.15, 880.0), ("tone", 3.0, 440.0)] {
            let samples = sine(frequency: frequency, rate: 44_100, seconds: seconds, amplitude: 0.7, fades: false)
            let path = folder.path("\(name).wav")
            let writer = try SoundFileWriter(path: path, sampleRate: 44_100, channelCount: .mono, format: .float32)
            try writer.write(samples, frames: samples.count)
            try writer.close()
            let ours = try AudioFileDecoder.measureLoudness(path: path, asSound: true)
            let loudest = try #require(ours.loudestMomentary)
            let theirs = try #require(try await FFmpeg.ebur128(sound: path, gain: 1).loudestMomentary)
            #expect(abs(loudest - theirs) <= 0.2, "\(name): ours \(loudest) LUFS, ffmpeg's \(theirs) LUFS")
            // A sine of amplitude 0.7 at 0 dB of K-weighting is −6.1 LUFS over a whole window; the
            // beep fills 150 of its 400 ms: 10 log10(0.375) = −4.3 LU less.
            let whole = -0.691 + 10 * log10(0.7 * 0.7 / 2)
            let expected = seconds < 0.4 ? whole + 10 * log10(seconds / 0.4) : whole
            #expect(abs(loudest - expected) <= 0.7, "\(name): \(loudest) LUFS, about \(expected) by hand")
            #expect(
                (ours.loudness == nil) == (seconds < 0.4),
                "\(name): integrated \(String(describing: ours.loudness))"
            )
        }
        // Without `asSound` nothing is read every 10 ms.
        #expect(try AudioFileDecoder.measureLoudness(path: folder.path("tone.wav")).loudestMomentary == nil)
    }

    @Test("Decoding to verify meters in the same pass; the frame scan measures no loudness")
    func verifyAndMeasure() throws {
        let verified = try AudioFileDecoder.verifyMPEG(path: Self.speechClip)
        let measured = try AudioFileDecoder.measureLoudness(path: Self.speechClip, levelsSpeech: true)
        #expect(verified == measured, "the same decode, the same numbers")
        #expect(try #require(verified.leveledLoudness) < verified.loudness!)
        #expect(verified.loudness != nil)
        let scanned = try AudioFileDecoder.measure(path: Self.speechClip)
        #expect(scanned.loudness == nil)
        #expect(scanned.frameCount == measured.frameCount && scanned.gapless == measured.gapless)
    }

    @Test("A full-scale 997 Hz sine in one channel reads −3.01 LUFS, however it is split into calls")
    func referenceSine() throws {
        let samples = sine(frequency: 997, rate: 48_000, seconds: 3, amplitude: 1, fades: false)
        let whole = try LoudnessMeter(sampleRate: 48_000, channelCount: 1)
        whole.add(samples)
        let loudness = try #require(whole.integratedLoudness)
        #expect(abs(loudness - -3.01) <= 0.05, "\(loudness)")
        let split = try LoudnessMeter(sampleRate: 48_000, channelCount: 1)
        var start = 0
        for size in [1, 999, 7, 48_000, 12_345] + Array(repeating: 30_000, count: 5) where start < samples.count {
            let end = min(samples.count, start + size)
            split.add(Array(samples[start..<end]))
            start = end
        }
        #expect(start == samples.count)
        #expect(split.integratedLoudness == loudness, "identical, not just close")
    }

    @Test("Silence and anything under one 400 ms block have no loudness")
    func gated() throws {
        let silence = try LoudnessMeter(sampleRate: 22_050, channelCount: 2)
        silence.add([Float](repeating: 0, count: 22_050 * 2 * 3))
        #expect(silence.integratedLoudness == nil)
        let short = try LoudnessMeter(sampleRate: 22_050, channelCount: 1)
        short.add(sine(frequency: 440, rate: 22_050, seconds: 0.399, amplitude: 0.5, fades: false))
        #expect(short.integratedLoudness == nil, "399 ms is not a block")
        short.add(sine(frequency: 440, rate: 22_050, seconds: 0.01, amplitude: 0.5, fades: false))
        #expect(short.integratedLoudness != nil, "409 ms is")
        let nothing = try LoudnessMeter(sampleRate: 22_050, channelCount: 1)
        #expect(nothing.integratedLoudness == nil)
    }

    @Test("A channel count libebur128 refuses is an error, not a crash")
    func refused() {
        #expect(throws: AudioError.self) { try LoudnessMeter(sampleRate: 22_050, channelCount: 1_024) }
    }
}
