import Foundation
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio

/// Each synthesized sound, made once per test process.
let synthesizedSounds: [SynthesizedSound: [Float]] = Dictionary(
    uniqueKeysWithValues: SynthesizedSound.allCases.map { ($0, $0.samples()) }
)

/// FNV-1a-64 over the samples' bit patterns, little-endian: a fingerprint of exact values.
func fingerprint(_ samples: [Float]) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for sample in samples {
        var bits = sample.bitPattern
        for _ in 0..<4 {
            hash = (hash ^ UInt64(bits & 0xFF)) &* 0x0000_0100_0000_01B3
            bits >>= 8
        }
    }
    return hash
}

@Suite("Synthesized sounds")
struct SynthesizedSoundTests {
    @Test(
        "Every sound has its exact length",
        arguments: [
            (SynthesizedSound.gong, 617_400), (.tripleGong, 793_800), (.completion, 882_000), (.rain, 1_058_400),
            (.drone, 1_058_400), (.forest, 1_058_400), (.silent, 44_100), (.inhale, 35_280), (.holdIn, 17_640),
            (.exhale, 44_100), (.holdOut, 17_640),
            (.countIn, 44_100), (.shortBeep, 6_615), (.longBeep, 26_460), (.lastRound, 44_100), (.closing, 132_300),
        ]
    )
    func frameCount(sound: SynthesizedSound, frames: Int) throws {
        let samples = try #require(synthesizedSounds[sound])
        #expect(samples.count == frames)
        #expect(sound.frameCount == Frames(Int64(frames)))
    }

    @Test("A second synthesis gives the same samples, bit for bit", arguments: SynthesizedSound.allCases)
    func deterministic(sound: SynthesizedSound) throws {
        let first = try #require(synthesizedSounds[sound])
        let second = sound.samples()
        #expect(first.map(\.bitPattern) == second.map(\.bitPattern))
    }

    /// The fingerprints pin the exact samples: the same on every machine, since the synthesis
    /// uses no C library function. A deliberate change to a sound changes its fingerprint here
    /// and the default library's folder version (`sounds/v5`).
    @Test(
        "Every sound's samples are the ones recorded",
        arguments: [
            (SynthesizedSound.gong, UInt64(0xE1F4_DF81_C452_8280)), (.tripleGong, 0xDBD8_D396_F724_C07C),
            (.completion, 0x519A_DCF4_B9AA_1E03), (.rain, 0x44FA_131A_75FB_89A0), (.drone, 0x8653_3E27_64EE_560E),
            (.forest, 0xD411_FE98_F788_6917), (.silent, 0x52DD_209C_5F3B_B865),
            (.inhale, 0x8AD5_9F6E_19BF_DAF6), (.holdIn, 0x9C60_1182_FC89_2A19), (.exhale, 0x8294_0C90_DEF8_DCB0),
            (.holdOut, 0x9E4D_62DE_4ECB_5153), (.countIn, 0x3670_0F38_53A7_D898), (.shortBeep, 0x1F3B_C819_DB7A_3FEA),
            (.longBeep, 0x212A_8629_F17C_1A0D), (.lastRound, 0x1A98_6475_CCC0_CFA0), (.closing, 0x2CAB_645D_B82B_E769),
        ]
    )
    func pinned(sound: SynthesizedSound, expected: UInt64) throws {
        let samples = try #require(synthesizedSounds[sound])
        #expect(fingerprint(samples) == expected, "\(sound): 0x\(String(fingerprint(samples), radix: 16))")
    }

    @Test("Peaks at −3 dBFS, no DC, both ends at zero", arguments: SynthesizedSound.allCases.filter { $0 != .silent })
    func levels(sound: SynthesizedSound) throws {
        let samples = try #require(synthesizedSounds[sound])
        let peak = samples.map { abs($0) }.max() ?? 0
        let peakDecibels = 20 * log10(Double(peak))
        #expect(peakDecibels <= -1)
        #expect(abs(peakDecibels - -3) < 0.001, "\(sound) peaks at \(peakDecibels) dBFS")
        let mean = samples.reduce(0.0) { $0 + Double($1) } / Double(samples.count)
        #expect(abs(mean) < 1e-4, "\(sound) has a DC offset of \(mean)")
        #expect(samples.first == 0 && samples.last == 0)
    }

    @Test("No two sounds have the same samples")
    func distinct() throws {
        let fingerprints = Set(SynthesizedSound.allCases.map { fingerprint(synthesizedSounds[$0] ?? []) })
        #expect(fingerprints.count == SynthesizedSound.allCases.count)
    }

    @Test(
        "Gongs start at once; beds fade in over half a second",
        arguments: SynthesizedSound.allCases.filter { !$0.isCue && $0 != .silent }
    )
    func attack(sound: SynthesizedSound) throws {
        let samples = try #require(synthesizedSounds[sound])
        // The largest step between neighbouring samples in the first 5 ms, against the peak.
        let opening = samples.prefix(221)
        let openingPeak = opening.map { abs($0) }.max() ?? 0
        if sound.isBed {
            #expect(openingPeak < 0.001, "\(sound) starts quietly")
            let rms = { (slice: ArraySlice<Float>) in
                (slice.map { Double($0 * $0) }.reduce(0, +) / Double(slice.count)).squareRoot()
            }
            #expect(rms(samples[22_050..<44_100]) > 3 * rms(samples[0..<11_025]), "\(sound) rises")
        } else {
            #expect(openingPeak > 0.05, "\(sound) is struck at the start")
        }
        let steps = zip(samples, samples.dropFirst()).prefix(200).map { abs($1 - $0) }
        #expect((steps.max() ?? 0) < 0.1, "\(sound) does not click at its start")
    }

    /// A click is a jump out of or into silence; a cue that is late or slow to sound would blur a
    /// countdown's beat.
    @Test(
        "Cues fade in and out within milliseconds, and sound within 0.1 s",
        arguments: SynthesizedSound.allCases.filter(\.isCue)
    )
    func cueEdges(sound: SynthesizedSound) throws {
        let samples = try #require(synthesizedSounds[sound])
        #expect(samples.prefix(11).allSatisfy { abs($0) < 0.01 }, "\(sound) does not click at its start")
        #expect(samples.suffix(11).allSatisfy { abs($0) < 0.01 }, "\(sound) does not click at its end")
        #expect((samples.prefix(4_410).map { abs($0) }.max() ?? 0) > 0.1, "\(sound) sounds at once")
    }

    /// The pitch is measured by counting upward zero crossings, which the cues' weak upper
    /// harmonics do not add to: breathing in rises, out falls, and each beep has its own pitch.
    @Test(
        "Each cue has its pitch",
        arguments: [
            (SynthesizedSound.inhale, 0..<6_615, 293.7), (.inhale, 28_665..<35_280, 440),
            (.exhale, 0..<6_615, 440), (.exhale, 37_485..<44_100, 293.7), (.holdIn, 0..<17_640, 440),
            (.holdOut, 0..<17_640, 293.7), (.shortBeep, 0..<6_615, 880), (.longBeep, 0..<26_460, 1_318.5),
            (.lastRound, 0..<5_292, 1_046.5), (.lastRound, 17_640..<44_100, 1_046.5),
        ]
    )
    func pitch(sound: SynthesizedSound, range: Range<Int>, hertz: Double) throws {
        let samples = try #require(synthesizedSounds[sound])[range]
        let crossings = zip(samples, samples.dropFirst()).count(where: { $0 < 0 && $1 >= 0 })
        let measured = Double(crossings) * 44_100 / Double(range.count)
        #expect(abs(measured / hertz - 1) < 0.05, "\(sound) at \(range): \(measured) Hz")
    }

    @Test("last-round is two short beeps and a long one, with silence between")
    func lastRoundRhythm() throws {
        let samples = try #require(synthesizedSounds[.lastRound])
        for gap in [5_292..<8_820, 14_112..<17_640] {
            #expect(samples[gap].allSatisfy { $0 == 0 }, "silent at \(gap)")
        }
        for beep in [0..<5_292, 8_820..<14_112, 17_640..<44_100] {
            #expect((samples[beep].map { abs($0) }.max() ?? 0) > 0.5, "a beep at \(beep)")
        }
    }

    /// Seed 002's keepalive bed: it keeps a player playing and must add nothing to the mix.
    @Test("silent is one second of digital silence: every sample +0.0, and a loopable bed")
    func silent() throws {
        let samples = try #require(synthesizedSounds[.silent])
        #expect(samples.count == 44_100 && SynthesizedSound.silent.isBed && !SynthesizedSound.silent.isCue)
        #expect(samples.allSatisfy { $0.bitPattern == 0 }, "all +0.0, no −0.0")
    }

    /// The forest's birds: calls stand out of the wind by their pitch (2.5 to 6 kHz, where the
    /// wind's hiss is weak), at seeded times, none within 1 s of either end.
    @Test("forest has bird calls between its wind, none within a second of either end")
    func forestBirds() throws {
        let samples = try #require(synthesizedSounds[.forest])
        // A band-pass at 4 kHz: a bird makes the band's 20 ms power jump above 5 times its median,
        // which the gusts and the leaves' flutter (at most about 4 times) do not reach.
        var band = Biquad.bandPass(4_000, bandwidth: 1_500)
        let filtered = samples.map { band.process(Double($0)) }
        let windows = stride(from: 0, to: filtered.count - 882, by: 882).map { start in
            filtered[start..<(start + 882)].reduce(0) { $0 + $1 * $1 } / 882
        }
        let median = windows.sorted()[windows.count / 2]
        let loud = windows.indices.filter { windows[$0] > 5 * median }
        #expect(loud.count > 20, "\(loud.count) loud windows")
        let seconds = loud.map { Double($0 * 882) / 44_100 }
        #expect(
            (seconds.min() ?? 0) >= 1 && (seconds.max() ?? 24) < 23,
            "calls from \(seconds.min() ?? 0) to \(seconds.max() ?? 0) s"
        )
        // Calls at several places, not one burst: at least five seconds of the 24 have one.
        #expect(Set(seconds.map { Int($0) }).count >= 5, "\(Set(seconds.map { Int($0) }).sorted())")
    }

    /// A bowl as one hears it: its fundamental's third-octave band, in 100 ms blocks, with the bowl
    /// leveled as a session levels it (loudest 400 ms 2 LU under the −16 LUFS target) over the
    /// default rain bed as a session plays it (integrated at the target, times its gain 0.15).
    @Test(
        "A bowl rings: fundamental T60 ≥ 20 s, beating ≤ 6 dB deep, above the rain for ≥ 8 s",
        arguments: [("gong", 216.0), ("completion", 131), ("bell", 196)]
    )
    func bowlRings(name: String, fundamental: Double) throws {
        let bowl =
            switch name {
            case "gong": try #require(synthesizedSounds[.gong])
            case "completion": try #require(synthesizedSounds[.completion])
            default: BuiltinBell.samples(sampleRate: 44_100)
            }
        let rain = try #require(synthesizedSounds[.rain])
        let bowlMeter = try LoudnessMeter(sampleRate: 44_100, channelCount: .mono, momentary: true)
        bowlMeter.add(bowl)
        let rainMeter = try LoudnessMeter(sampleRate: 44_100, channelCount: .mono)
        rainMeter.add(rain)
        let bowlGain = PortableMath.gain(decibels: -18 - (try #require(bowlMeter.loudestMomentary)))
        let rainGain = 0.15 * PortableMath.gain(decibels: -16 - (try #require(rainMeter.integratedLoudness)))
        /// The band's level in each 100 ms block, dB.
        func bandLevels(_ samples: [Float], gain: Double) -> [Double] {
            let width = fundamental * (PortableMath.exp(PortableMath.ln2 / 6) - PortableMath.exp(-PortableMath.ln2 / 6))
            var (first, second) = (
                Biquad.bandPass(fundamental, bandwidth: width), Biquad.bandPass(fundamental, bandwidth: width)
            )
            let filtered = samples.map { second.process(first.process(Double($0) * gain)) }
            return stride(from: 0, to: filtered.count - 4_410, by: 4_410).map { start in
                10 * log10(filtered[start..<(start + 4_410)].reduce(0) { $0 + $1 * $1 } / 4_410 + 1e-30)
            }
        }
        let levels = bandLevels(bowl, gain: bowlGain)
        let rainLevels = bandLevels(rain, gain: rainGain)
        // The decay and the beating over 1…6 s: a straight line through the levels, and the swing about it.
        let span = Array(levels[10..<60])
        let times = span.indices.map { Double($0) / 10 }
        let (meanTime, meanLevel) = (times.reduce(0, +) / 50, span.reduce(0, +) / 50)
        let slope =
            zip(times, span).reduce(0) { $0 + ($1.0 - meanTime) * ($1.1 - meanLevel) }
            / times.reduce(0) { $0 + ($1 - meanTime) * ($1 - meanTime) }
        let residuals = zip(times, span).map { $1 - (meanLevel + slope * ($0 - meanTime)) }
        let t60 = -60 / slope
        let depth = (residuals.max() ?? 0) - (residuals.min() ?? 0)
        let lastAbove = levels.indices.last { $0 < rainLevels.count && levels[$0] > rainLevels[$0] } ?? 0
        let audibleSeconds = Double(lastAbove + 1) / 10
        #expect(t60 >= 20, "\(name): fundamental T60 \(t60) s")
        #expect(depth <= 6, "\(name): beating \(depth) dB deep")
        #expect(audibleSeconds >= 8, "\(name): above the rain for \(audibleSeconds) s")
    }

    @Test("PortableMath agrees with the C library to 1e-14")
    func portableMath() {
        for step in -2_000...2_000 {
            let x = Double(step) * 0.0123
            #expect(abs(PortableMath.sin(x) - sin(x)) < 1e-14, "sin \(x)")
            #expect(abs(PortableMath.cos(x) - cos(x)) < 1e-14, "cos \(x)")
            let e = Double(step) * 0.01
            #expect(abs(PortableMath.exp(e) - exp(e)) <= 1e-14 * exp(e), "exp \(e)")
        }
    }

    @Test("A FLAC file holds the samples to 24 bits, and libsndfile reads it back")
    func flacRoundTrip() throws {
        let folder = try TemporaryFolder()
        let samples = try #require(synthesizedSounds[.gong])
        let writer = try SoundFileWriter(
            path: folder.path("gong.flac"),
            sampleRate: 44_100,
            channelCount: .mono,
            settings: try EncoderSettings(format: .flac, sampleFormat: .pcm24),
            metadata: AudioMetadata(),
            frameCount: Frames(Int64(samples.count))
        )
        try writer.write(samples, frames: samples.count)
        try writer.close()
        let measurement = try AudioFileDecoder.measure(path: folder.path("gong.flac"))
        #expect(measurement.frameCount == 617_400)
        #expect(measurement.formatName == "FLAC (Free Lossless Audio Codec)")
        let decoded = try decodeAll(folder.path("gong.flac"))
        #expect(decoded.rate == 44_100 && decoded.channels == 1)
        let error = zip(decoded.samples, samples).map { abs($0 - $1) }.max() ?? 1
        #expect(error <= 0.5 / 8_388_608 + 1e-9)
    }
}

@Suite("Formats through AudioFileDecoder")
struct ContainerFormatTests {
    /// Runs `sox` with `arguments`; false if it is not installed.
    static func sox(_ arguments: [String]) async throws -> Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sox") else { return false }
        return try await ChildProcess.run("/usr/bin/sox", arguments).termination == .exited(0)
    }

    @Test(
        "libsndfile reads CAF and Ogg Vorbis files that sox makes",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sox"), "sox is not installed"),
        arguments: [
            ("caf", "CAF (Apple Core Audio File)", 4_410 as Int64), ("ogg", "OGG (OGG Container format)", 4_410),
        ]
    )
    func readsContainer(fileExtension: String, formatName: String, frames: Int64) async throws {
        let folder = try TemporaryFolder()
        let source = folder.path("tone.wav")
        try writeWAV(sine(frequency: 440, rate: 44_100, frames: 4_410), rate: 44_100, channels: 1, to: source)
        let target = folder.path("tone.\(fileExtension)")
        #expect(try await Self.sox([source, target]))
        let measurement = try AudioFileDecoder.measure(path: target)
        #expect(measurement.formatName == formatName)
        #expect(measurement.frameCount == Frames(frames))
        #expect(measurement.sampleRate == 44_100 && measurement.channelCount == .mono)
    }
}
