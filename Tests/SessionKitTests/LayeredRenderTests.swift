import Crypto
import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// Rendering with layers: the bed, gongs, loudness and the limiter, checked against the samples,
/// an independent meter (ffmpeg's ebur128 filter) and the previous version's bytes.
@Suite("Rendering layers", .serialized, .tags(.concurrent))
struct LayeredRenderTests {
    /// A library folder holding one gong: 0.5 s of a decaying 440 Hz tone at 44.1 kHz.
    static func gongLibrary() throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        let rate = 44_100
        let samples = (0..<(rate / 2)).map { index -> Float in
            let time = Double(index) / Double(rate)
            return Float(0.5 * sin(2 * Double.pi * 440 * time) * exp(-4 * time))
        }
        let writer = try SoundFileWriter(
            path: folder.path("ding.wav"),
            sampleRate: 44_100,
            channelCount: .mono,
            format: .float32
        )
        try writer.write(samples, frames: samples.count)
        try writer.close()
        try Data(#"[{"id": "gong", "name": "Ding", "file": "ding", "gain": 1}]"#.utf8)
            .write(to: folder.url.appendingPathComponent("sounds.json"))
        return folder
    }

    static func pipeline(
        _ sound: SoundSettings,
        library: String? = nil,
        audio: String,
        timeline: String? = nil
    ) -> SessionPipeline {
        SessionPipeline(
            clips: ClipIdentity(cacheFolder: Repository.cache.path),
            plan: PlanSettings(seed: 7, sound: sound, soundLibrary: library),
            output: OutputSettings(audio: .path(audio), timeline: timeline.map(OutputDestination.path))
        )
    }

    /// Takes a WAV's `cue ` and `LIST`/`adtl` chunks out, fixing the RIFF size.
    static func removeChapterChunks(_ path: String) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var offset = 12
        var kept = Array(bytes[0..<12])
        func size(at offset: Int) -> Int { bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | Int($1) } }
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let length = id == "data" ? bytes.count - offset - 8 : size(at: offset + 4)
            let end = min(bytes.count, offset + 8 + length + (id == "data" ? 0 : length % 2))
            let isChapters =
                id == "cue " || (id == "LIST" && Array(bytes[offset + 8..<offset + 12]) == Array("adtl".utf8))
            if !isChapters { kept += bytes[offset..<end] }
            offset = end
        }
        let riffSize = UInt32(kept.count - 8)
        kept.replaceSubrange(4..<8, with: withUnsafeBytes(of: riffSize.littleEndian, Array.init))
        bytes = kept
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func sha256(_ path: String) throws -> String {
        SHA256.hash(data: try Data(contentsOf: URL(fileURLWithPath: path))).map { String(format: "%02x", $0) }.joined()
    }

    @Test("--loudness off without sounds writes the previous version's bytes for the 10-minute fixture")
    func loudnessOffIsVersionOne() async throws {
        let folder = try TemporaryFolder()
        let pipeline = Self.pipeline(SoundSettings(loudness: .off), audio: folder.path("s.wav"))
        try await pipeline.run(ScriptFile.load(Repository.script("ten-minute-session").path))
        // `render-session render Fixtures/scripts/ten-minute-session.json --cache Fixtures/cache
        // --seed 7` as version 0.x (before layers) wrote it, once the chapters (issue 12) are taken out,
        // but for the closing bell, which issue 39 made ring (12 s, its fundamental's T60 22 s).
        let path = folder.path("s.wav")
        try Self.removeChapterChunks(path)
        #expect(try Self.sha256(path) == "769b02e6608dac63972d58fe90d3f6a3c76f4efddf50bbd98b0b3077996394a8")
    }

    @Test(
        "With soundsOverLeadIn, a start gong sits at frame 0 over the lead-in and the interval gongs at their frames, sample for sample"
    )
    func gongsAtTheirFrames() async throws {
        let library = try Self.gongLibrary()
        let folder = try TemporaryFolder()
        let pipeline = Self.pipeline(
            SoundSettings(
                startGong: "gong",
                intervalGong: "gong",
                intervalMinutes: 0.05,
                leadInSeconds: 1,
                loudness: .off,
                // The start gong over the lead-in, at frame 0, rather than at its end.
                soundsOverLeadIn: true
            ),
            library: library.url.path,
            audio: folder.path("s.wav")
        )
        let timeline = try await pipeline.run(ScriptFile.load(Repository.script("edge-cases").path)).timeline
        let rate = timeline.sampleRate
        #expect(timeline.leadInFrames == rate.frames(atSeconds: 1))
        let gongs = timeline.overlays.filter { $0.kind == .gong }
        #expect(gongs.first?.startFrame == .zero)
        // Every 3 s of the 20 s script (3, 6, … 18 s), after the 1 s lead-in.
        #expect(
            Array(gongs.dropFirst().map(\.startFrame)) == (1...6).map { rate.frames(atSeconds: 1 + 3 * Double($0))! }
        )

        // The first second is lead-in: only the gong sounds there, at gain 1.
        let wav = try readPCM16(folder.path("s.wav"))
        let gongLength = Int(gongs[0].frameCount.count)
        let stream = try ClipStream(
            decoder: AudioFileDecoder(path: library.path("ding.wav")),
            sourceFrames: gongs[0].source.frameCount,
            outputRate: rate,
            outputChannels: .mono,
            outputFrames: gongs[0].frameCount
        )
        var expected: [Float] = []
        var block: [Float] = []
        while case let frames = try stream.read(into: &block, maximumFrames: 4_096), frames > 0 {
            expected += block[0..<frames]
        }
        let quantized = expected.map { Int16(max(-32_768, min(32_767, ($0 * 32_768).rounded(.toNearestOrEven)))) }
        #expect(Array(wav.values[0..<gongLength]) == quantized)
    }

    @Test("A missing sound is an error before any work, naming the nearest; allowed, it is left out with one warning")
    func missingSound() async throws {
        let library = try Self.gongLibrary()
        let folder = try TemporaryFolder()
        let warnings = Locked<[String]>([])
        var pipeline = Self.pipeline(
            SoundSettings(startGong: "gnog", loudness: .off),
            library: library.url.path,
            audio: folder.path("s.wav")
        )
        pipeline.observer = PipelineObserver(warning: { line in warnings.withLock { $0.append(line) } })
        let error = await #expect(throws: SessionError.self) {
            try await pipeline.run(ScriptFile.load(Repository.script("edge-cases").path)).timeline
        }
        let notFound =
            #"Start gong "gnog" (the start gong setting) is not in the sound library \#(library.url.path) (did you mean "gong"?)"#
        #expect(error?.code == .missingSound)
        #expect(error?.lines == [notFound + "; allowing missing sounds leaves it out"])
        #expect(!FileManager.default.fileExists(atPath: folder.path("s.wav")))

        pipeline.plan.allowsMissingSounds = true
        let timeline = try await pipeline.run(ScriptFile.load(Repository.script("edge-cases").path)).timeline
        let tried = SoundLibrary.extensions.map { library.path("gnog.\($0)") }
        #expect(warnings.withLock { $0 } == [notFound + "; it is left out"])
        #expect(timeline.overlays.isEmpty)
        #expect(timeline.skippedSounds == [SkippedSound(lane: "cues", kind: "gong", name: "gnog", lookedFor: tried)])
    }

    @Test("A sound that exists but cannot be decoded is an error naming it")
    func undecodableSound() async throws {
        let library = try TemporaryFolder()
        try Data("not audio".utf8).write(to: library.url.appendingPathComponent("gong.wav"))
        let folder = try TemporaryFolder()
        let pipeline = Self.pipeline(
            SoundSettings(startGong: "gong"),
            library: library.url.path,
            audio: folder.path("s.wav")
        )
        let error = await #expect(throws: SessionError.self) {
            try await pipeline.run(ScriptFile.load(Repository.script("edge-cases").path)).timeline
        }
        #expect(error?.code == .unusableSound)
        #expect(error?.lines.count == 1)
        #expect(error?.lines.first?.hasPrefix(#"Start gong "gong": "#) == true)
        #expect(error?.lines.first?.contains(library.path("gong.wav")) == true)
    }

    @Test(
        "Loudness on: every clip at its gain within ±0.5 LU of the target, the mix within ±1 LU and under the ceiling, by ffmpeg's meter",
        .requiresFFmpeg,
        arguments: [false, true]
    )
    func loudnessAndPeaks(leveling: Bool) async throws {
        let folder = try TemporaryFolder()
        let pipeline = Self.pipeline(
            SoundSettings(loudness: .target(-16), truePeak: -1, speechLeveling: leveling),
            audio: folder.path("s.wav")
        )
        let timeline = try await pipeline.run(ScriptFile.load(Repository.script("ten-minute-session").path)).timeline
        let rate = Double(timeline.sampleRate.hertz)
        #expect(timeline.loudness?.speechLeveling == leveling)
        #expect((timeline.loudness?.leveler != nil) == leveling)
        // The speech anchor's gain, in every gain, makes up what the limiter takes off the speech.
        let anchorGain = try #require(timeline.loudness?.speechGain)
        #expect(anchorGain >= 0 && anchorGain < 3, "\(anchorGain) dB")
        for item in timeline.items where item.clip != nil {
            let source = try #require(item.audio?.source)
            if leveling {
                // The gain brings the clip as leveled to the target; the leveled clip is measured
                // by the same meter as the clip, so only the arithmetic is checked here.
                let leveled = try #require(source.leveledLoudness)
                #expect(abs(20 * log10(item.gain) - anchorGain + leveled - -16) < 0.001)
                #expect(try leveled < #require(source.loudness))
            } else {
                // The clip alone at its gain: what normalization promises.
                let alone = folder.path("item-\(item.index).wav")
                let samples = try expectedPCM16(of: item, in: timeline).map { Float($0) / 32_768 * Float(item.gain) }
                let writer = try SoundFileWriter(
                    path: alone,
                    sampleRate: timeline.sampleRate,
                    channelCount: .mono,
                    format: .float32
                )
                try writer.write(samples, frames: samples.count)
                try writer.close()
                let normalized = try await FFmpeg.ebur128(alone).integratedLoudness
                #expect(
                    abs(normalized - anchorGain - -16) <= 0.5,
                    "item \(item.index) at gain \(item.gain), less \(anchorGain) dB: \(normalized) LUFS"
                )
            }
            // The same stretch of the finished mix, after the limiter.
            let mixed = try await FFmpeg.ebur128(
                folder.path("s.wav"),
                from: Double(item.startFrame.count) / rate,
                duration: Double(item.frameCount.count) / rate
            ).integratedLoudness
            #expect(abs(mixed - -16) <= 1, "item \(item.index) in the mix: \(mixed) LUFS")
        }
        let whole = try await FFmpeg.ebur128(folder.path("s.wav"))
        #expect(whole.truePeakUpperBoundDecibels <= -1.0, "true peak \(whole.truePeakDecibels) dBTP")
        let reported = try #require(timeline.loudness)
        #expect(abs((reported.program ?? 0) - whole.integratedLoudness) <= 0.2, "our meter agrees with ffmpeg's")
        #expect(abs((reported.truePeak ?? 0) - whole.truePeakDecibels) <= 0.3)
    }
}

/// Ducking, measured on a hand-made timeline whose clip is silent, so that the output is the bed alone.
@Suite("Ducking the bed")
struct DuckingTests {
    static func render(duck: Double, in folder: TemporaryFolder) throws -> [Float] {
        let rate: SampleRate = 8_000
        let bed = (0..<8_000).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / 8_000)) }
        for (name, samples) in [("bed.wav", bed), ("clip.wav", [Float](repeating: 0, count: 4_000))] {
            let writer = try SoundFileWriter(
                path: folder.path(name),
                sampleRate: rate,
                channelCount: .mono,
                format: .float32
            )
            try writer.write(samples, frames: samples.count)
            try writer.close()
        }
        let clip = AudioSourceInfo(path: folder.path("clip.wav"), sampleRate: rate, frameCount: 4_000, gapless: false)
        let timeline = Timeline(
            scriptId: "duck",
            title: "",
            seed: 0,
            sampleRate: rate,
            channelCount: .mono,
            items: [
                TimelineItem(index: 0, startFrame: 0, frameCount: 8_000, content: .silence),
                TimelineItem(
                    index: 1,
                    startFrame: 8_000,
                    frameCount: 4_000,
                    content: .segment(
                        PlacedClip(
                            text: "…",
                            phase: "p",
                            segmentId: "s",
                            plannedStartFrame: 8_000,
                            lateByFrames: 0,
                            key: "k"
                        ),
                        ItemAudio(source: clip, gain: 1)
                    )
                ),
                TimelineItem(index: 2, startFrame: 12_000, frameCount: 8_000, content: .silence),
            ],
            overlays: [
                TimelineOverlay(
                    index: 0,
                    lane: .ambience,
                    kind: .ambience,
                    name: "bed",
                    startFrame: 0,
                    frameCount: 20_000,
                    gain: 1,
                    source: AudioSourceInfo(
                        path: folder.path("bed.wav"),
                        sampleRate: rate,
                        frameCount: 8_000,
                        gapless: false
                    ),
                    bed: TimelineOverlay.Bed(
                        loopCrossfadeFrames: 0,
                        fadeInFrames: 0,
                        fadeOutFrames: 0,
                        duckDecibels: duck,
                        duckRampFrames: 400
                    )
                )
            ]
        )
        let output = folder.path("duck-\(duck).wav")
        let pipeline = SessionPipeline(output: OutputSettings(sampleFormat: .float32, audio: .path(output)))
        try pipeline.render(timeline)
        let decoder = try AudioFileDecoder(path: output)
        var samples: [Float] = []
        var block: [Float] = []
        while case let frames = try decoder.read(into: &block, maximumFrames: 4_096), frames > 0 {
            samples += block[0..<frames]
        }
        return samples
    }

    @Test("The bed is lowered by exactly --duck dB under a clip, ramping over the frames before and after it")
    func ducking() throws {
        let folder = try TemporaryFolder()
        let plain = try Self.render(duck: 0, in: folder)
        let ducked = try Self.render(duck: 12, in: folder)
        #expect(plain.count == 20_000 && ducked.count == 20_000)
        let floor = Float(pow(10, -12.0 / 20))
        var previous: Float = 1
        for frame in 0..<20_000 where abs(plain[frame]) > 0.01 {
            let ratio = ducked[frame] / plain[frame]
            switch frame {
            case ..<7_600, 12_400...: #expect(abs(ratio - 1) < 1e-5, "frame \(frame) is not ducked")
            case 8_000..<12_000: #expect(abs(ratio - floor) < 1e-5, "frame \(frame) is ducked 12 dB")
            case 7_600..<8_000:
                #expect(ratio <= previous + 1e-5 && ratio >= floor - 1e-5, "frame \(frame) ramps down")
                previous = ratio
            default:
                #expect(ratio >= floor - 1e-5 && ratio <= 1 + 1e-5, "frame \(frame) ramps up")
            }
        }
    }
}
