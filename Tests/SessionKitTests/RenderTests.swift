import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// Reads a whole WAV file as 16-bit values (exact for 16-bit files).
func readPCM16(_ path: String) throws -> (values: [Int16], rate: Int, channels: Int) {
    let decoder = try AudioFileDecoder(path: path)
    var values: [Int16] = []
    var block: [Float] = []
    while case let frames = try decoder.read(into: &block, maximumFrames: 65_536), frames > 0 {
        values.append(contentsOf: block[0..<(frames * decoder.channelCount.count)].map { Int16($0 * 32_768) })
    }
    return (values, decoder.sampleRate.hertz, decoder.channelCount.count)
}

/// What a clip item should hold: the clip streamed on its own at the output format, quantized
/// as the writer quantizes.
func expectedPCM16(of item: TimelineItem, in timeline: Timeline) throws -> [Int16] {
    let source = try #require(item.source)
    let stream: ClipStream
    if let path = source.path {
        stream = try ClipStream(
            decoder: AudioFileDecoder(path: path),
            sourceFrames: source.frameCount,
            outputRate: timeline.sampleRate,
            outputChannels: timeline.channelCount,
            outputFrames: item.frameCount
        )
    } else {
        stream = try ClipStream(
            samples: BuiltinBell.samples(sampleRate: source.sampleRate),
            sampleRate: source.sampleRate,
            channelCount: .mono,
            outputRate: timeline.sampleRate,
            outputChannels: timeline.channelCount,
            outputFrames: item.frameCount
        )
    }
    var values: [Int16] = []
    var block: [Float] = []
    while case let frames = try stream.read(into: &block, maximumFrames: 4_096), frames > 0 {
        values.append(
            contentsOf: block[0..<(frames * timeline.channelCount.count)].map {
                Int16(max(-32_768, min(32_767, ($0 * 32_768).rounded(.toNearestOrEven))))
            }
        )
    }
    return values
}

/// Prepares (offline) and plans `script` over the cache at `cache`.
func planOffline(_ script: Script, cache: String, seed: UInt64 = 1) async throws -> Timeline {
    let pipeline = SessionPipeline(
        clips: ClipIdentity(cacheFolder: cache),
        plan: PlanSettings(seed: seed, sound: SoundSettings(loudness: .off))
    )
    return try pipeline.plan(script, clips: try await pipeline.prepare(texts: script.allTexts))
}

@Suite("Rendering sessions", .serialized, .tags(.concurrent))
struct RenderTests {
    /// A pipeline over the fixture cache, offline.
    static func pipeline(
        seed: UInt64 = 7,
        channels: ChannelCount = .mono,
        sampleRate: SampleRate? = nil,
        cache: String = Repository.cache.path,
        sound: SoundSettings = SoundSettings(loudness: .off),
        audio: String? = nil,
        timeline: String? = nil
    ) -> SessionPipeline {
        SessionPipeline(
            clips: ClipIdentity(cacheFolder: cache),
            plan: PlanSettings(seed: seed, sampleRate: sampleRate, channelCount: channels, sound: sound),
            output: OutputSettings(
                audio: audio.map(OutputDestination.path),
                timeline: timeline.map(OutputDestination.path)
            )
        )
    }

    /// Prepares and plans the fixture script `id` without rendering.
    static func plan(_ id: String, with pipeline: SessionPipeline = pipeline()) async throws -> Timeline {
        let script = try ScriptFile.load(Repository.script(id).path)
        return try pipeline.plan(script, clips: try await pipeline.prepare(texts: script.allTexts))
    }

    @Test("The 10-minute fixture renders frame-exact: clips where the timeline says, silence zero, the bell last")
    func tenMinuteSession() async throws {
        let folder = try TemporaryFolder()
        let pipeline = Self.pipeline(audio: folder.path("s.wav"), timeline: folder.path("s.json"))
        let timeline = try await pipeline.run(ScriptFile.load(Repository.script("ten-minute-session").path)).timeline
        #expect(try folder.contents() == ["s.json", "s.wav"], "no temporary files are left")

        #expect(timeline.sampleRate.hertz == 22_050, "the first segment's clip rate")
        #expect(timeline.totalFrames == Frames(600 * 22_050 + 12 * 22_050), "600 s of session and the 12 s bell")
        #expect(
            timeline.items.map(\.kind) == [
                .segment, .silence, .segment, .silence, .interjection, .silence,
                .interjection, .silence, .segment, .silence, .bell,
            ]
        )
        #expect(timeline.items.compactMap(\.clip).allSatisfy { $0.lateByFrames == .zero })

        let wav = try readPCM16(folder.path("s.wav"))
        #expect(wav.rate == 22_050 && wav.channels == 1)
        #expect(Int64(wav.values.count) == timeline.totalFrames.count)
        for item in timeline.items {
            let range = Int(item.startFrame.count)..<Int((item.startFrame + item.frameCount).count)
            if item.kind == .silence {
                #expect(wav.values[range].allSatisfy { $0 == 0 }, "silence \(item.index) is digital zero")
            } else {
                #expect(
                    Array(wav.values[range]) == (try expectedPCM16(of: item, in: timeline)),
                    "item \(item.index) (\(item.kind)) sits at its start frame"
                )
            }
        }
        let written = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: folder.url.appendingPathComponent("s.json"))
        )
        #expect(written == timeline.asWritten)
    }

    @Test("Rendering twice with one seed gives byte-identical files; another seed changes the draws")
    func reproducible() async throws {
        let folder = try TemporaryFolder()
        let script = try ScriptFile.load(Repository.script("ten-minute-session").path)
        for name in ["a", "b"] {
            try await Self.pipeline(seed: 42, audio: folder.path("\(name).wav")).run(script)
        }
        let first = try Data(contentsOf: folder.url.appendingPathComponent("a.wav"))
        #expect(first == (try Data(contentsOf: folder.url.appendingPathComponent("b.wav"))))
        #expect(
            TimelineJSON.encode(try await Self.plan("ten-minute-session", with: Self.pipeline(seed: 42)))
                == TimelineJSON.encode(try await Self.plan("ten-minute-session", with: Self.pipeline(seed: 42)))
        )
        var draws = Set<[String]>()
        for seed in 0..<20 {
            let timeline = try await Self.plan("ten-minute-session", with: Self.pipeline(seed: UInt64(seed)))
            draws.insert(
                timeline.items.filter { $0.kind == .interjection }.map {
                    "\($0.clip!.plannedStartFrame):\($0.clip!.text)"
                }
            )
        }
        #expect(draws.count > 10, "different seeds draw different interjections")
    }

    @Test("Edge cases: late clips, ties, other rates and channels, content past the end, stereo output")
    func edgeCases() async throws {
        let folder = try TemporaryFolder()
        let pipeline = Self.pipeline(seed: 3, channels: .stereo, sampleRate: 48_000, audio: folder.path("e.wav"))
        let timeline = try await pipeline.run(ScriptFile.load(Repository.script("edge-cases").path)).timeline
        let kinds = timeline.items.map(\.kind)
        #expect(
            kinds == [
                .segment, .segment, .silence, .segment, .interjection, .silence, .interjection, .silence, .segment,
                .bell,
            ]
        )
        let clips = timeline.items.compactMap(\.clip)
        #expect(clips[1].lateByFrames > .zero, "the clip planned at 2 s starts late")
        #expect(clips[2].segmentId == "tie" && clips[3].segmentId == nil, "on a tie the segment goes first")
        let interjection = try #require(timeline.items.first { $0.kind == .interjection })
        #expect(
            interjection.clip?.phase == timeline.phases.last { $0.startFrame <= interjection.startFrame }?.name,
            "an interjection's phase is the one it starts in"
        )
        #expect(clips[3].plannedStartFrame == Frames(504_000), "a window inside one second plans at its start, 10.5 s")
        let last = try #require(timeline.items.first { $0.clip?.segmentId == "past-the-end" })
        #expect(
            timeline.items[1].source?.sampleRate.hertz == 16_000 && last.source?.sampleRate.hertz == 44_100
                && last.source?.gapless == true
        )
        let bell = try #require(timeline.items.last)
        #expect(bell.startFrame > Frames(20 * 48_000), "content past durationSeconds pushes the bell back")
        #expect(bell.startFrame == last.startFrame + last.frameCount, "with no silence before it")

        let wav = try readPCM16(folder.path("e.wav"))
        #expect(wav.rate == 48_000 && wav.channels == 2)
        #expect(Int64(wav.values.count) == timeline.totalFrames.count * 2)
        for item in timeline.items where item.kind != .silence {
            let range = Int(item.startFrame.count * 2)..<Int((item.startFrame + item.frameCount).count * 2)
            #expect(Array(wav.values[range]) == (try expectedPCM16(of: item, in: timeline)), "item \(item.index)")
        }
    }

    @Test("Planning opens no clip: it takes every length from what prepare measured")
    func planReusesMeasurements() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.copyItem(at: Repository.cache, to: folder.url.appendingPathComponent("cache"))
        let pipeline = Self.pipeline(cache: folder.path("cache"))
        let script = try ScriptFile.load(Repository.script("ten-minute-session").path)
        let clips = try await pipeline.prepare(texts: script.allTexts)
        #expect(clips.alreadyCached == 8 && clips.problems.isEmpty)
        // With every clip gone, a plan that measured again would fail.
        try FileManager.default.removeItem(atPath: folder.path("cache"))
        let timeline = try pipeline.plan(script, clips: clips)
        let reference = try await Self.plan("ten-minute-session")
        func placements(_ timeline: Timeline) -> [String] {
            timeline.items.map { "\($0.kind) \($0.startFrame) \($0.frameCount) \($0.clip?.key ?? "-")" }
        }
        #expect(placements(timeline) == placements(reference))
        #expect(timeline.totalFrames == reference.totalFrames)
    }

    @Test("A 270 s silence at 8 kHz is 2,160,000 frames in 4,320,044 bytes")
    func silenceFile() throws {
        let folder = try TemporaryFolder()
        let rate: SampleRate = 8_000
        try SilenceFile.write(
            frameCount: rate.frames(atSeconds: 270)!,
            sampleRate: rate,
            to: .path(folder.path("s.wav"))
        )
        let size = try FileManager.default.attributesOfItem(atPath: folder.path("s.wav"))[.size] as? Int
        #expect(size == 4_320_044)
        let pcm = try readPCM16(folder.path("s.wav"))
        #expect(pcm.values.count == 2_160_000 && pcm.rate == 8_000 && pcm.channels == 1)
        #expect(pcm.values.allSatisfy { $0 == 0 })
    }

    @Test("A clip that fails mid-render leaves the previous output intact and no temporary files")
    func failedRenderLeavesNothing() async throws {
        let folder = try TemporaryFolder()
        let cache = folder.url.appendingPathComponent("cache")
        try FileManager.default.copyItem(at: Repository.cache, to: cache)
        let pipeline = Self.pipeline(
            cache: cache.path,
            audio: folder.path("out.wav"),
            timeline: folder.path("out.json")
        )
        let timeline = try await Self.plan("ten-minute-session", with: pipeline)
        try Data("previous".utf8).write(to: folder.url.appendingPathComponent("out.wav"))
        // Cut the closing clip to a third after planning, as if another process had damaged it.
        let closing = try #require(timeline.items.first { $0.clip?.segmentId == "closing" })
        let closingPath = try #require(closing.source?.path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: closingPath))
        try bytes.prefix(bytes.count / 3).write(to: URL(fileURLWithPath: closingPath))

        #expect {
            try pipeline.render(timeline)
        } throws: { error in
            let error = error as? SessionError
            return error?.code == .unusableClips && error?.lines.count == 1
                && error?.lines[0].hasPrefix(#"Clip for "Begin to let the practice go."#) == true
                // The decoder's own check (the LAME tag promises more) finds it before the frame
                // count measured at planning does.
                && error?.lines[0].contains("the file is cut short: its LAME/Xing tag promises") == true
        }
        #expect(try String(contentsOf: folder.url.appendingPathComponent("out.wav"), encoding: .utf8) == "previous")
        #expect(try folder.contents() == ["cache", "out.wav"])
    }

    @Test("A missing output folder is created; one that cannot be is reported before any work")
    func outputFolder() async throws {
        let folder = try TemporaryFolder()
        let script = try ScriptFile.load(Repository.script("edge-cases").path)
        try await Self.pipeline(audio: folder.path("new/deeper/out.wav")).run(script)
        #expect(FileManager.default.fileExists(atPath: folder.path("new/deeper/out.wav")))
        try Data().write(to: folder.url.appendingPathComponent("file"))
        await #expect(
            throws: SessionError(.cannotWrite, "Cannot write \(folder.path("file/out.wav")): Not a directory")
        ) {
            try await Self.pipeline(audio: folder.path("file/out.wav")).run(script)
        }
    }

    @Test("A bell file replaces the built-in bell, converted to the output format")
    func customBell() async throws {
        let folder = try TemporaryFolder()
        let writer = try SoundFileWriter(
            path: folder.path("bell.wav"),
            sampleRate: 48_000,
            channelCount: .stereo,
            format: .pcm16
        )
        try writer.write([Float](repeating: 0, count: 48_000 * 2), frames: 48_000)
        try writer.close()
        let pipeline = Self.pipeline(
            sound: SoundSettings(bell: folder.path("bell.wav"), loudness: .off),
            audio: folder.path("out.wav")
        )
        let timeline = try await Self.plan("edge-cases", with: pipeline)
        let bell = try #require(timeline.items.last)
        #expect(bell.kind == .bell && bell.source?.path == folder.path("bell.wav"))
        #expect(bell.frameCount == Frames(22_050), "one second at 48 kHz is 22,050 frames at the output's 22.05 kHz")
        try pipeline.render(timeline)
        #expect(Int64(try readPCM16(folder.path("out.wav")).values.count) == timeline.totalFrames.count)
    }
}
