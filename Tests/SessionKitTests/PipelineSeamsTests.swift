import Foundation
import SessionAudio
import SessionTimeline
import TestSupport
import Testing

@testable import SessionKit

/// Answers every text with one fixture clip and the marks given: a speech engine that says where
/// its words are.
struct MarkingProvider: SpeechProvider {
    let audio: Data
    let marks: SpeechMarks
    var name: String { "marking" }
    var defaultJobs: Int { 1 }

    func speak(_ request: SpeechRequest) async throws(SessionError) -> SpeechResult {
        SpeechResult(audio: audio, marks: marks)
    }
}

/// The seams issue 38 made: a speech result's marks carried to the timeline's frames, and one
/// check of each setting, voice and sound library per job.
@Suite("The pipeline's seams", .tags(.concurrent))
struct PipelineSeamsTests {
    /// The fixture clip the provider answers with, 22,050 Hz mono, and three marks inside it.
    static func clip() throws -> (data: Data, frames: Frames, marks: SpeechMarks) {
        let clip = try #require(try FixtureClip.all().first { $0.text.hasPrefix("Notice where your attention") })
        let marks = SpeechMarks(
            sampleRate: 22_050,
            words: [
                SpeechMark(text: "Notice", startFrame: 1_001, frameCount: 8_000),
                SpeechMark(text: "where", startFrame: 9_001, frameCount: 4_411),
                SpeechMark(text: "now.", startFrame: 40_000, frameCount: 9_245),
            ],
            sentences: [
                SpeechMark(text: "Notice where your attention is right now.", startFrame: 1_001, frameCount: 48_244)
            ]
        )
        return (try Data(contentsOf: URL(fileURLWithPath: clip.path)), Frames(clip.sourceFrames), marks)
    }

    /// A guided script of one segment at 2 s, `text`, lasting 10 s.
    static func script(_ text: String, in folder: TemporaryFolder) throws -> Script {
        let json = """
            {"id": "marks", "category": "tests", "title": "Marks", "subtitle": "", "orderIndex": 0,
             "durationSeconds": 10, "segments": [{"id": "one", "startSeconds": 2, "phase": "opening",
             "text": "\(text)"}], "interjections": []}
            """
        try Data(json.utf8).write(to: folder.url.appendingPathComponent("marks.json"))
        return try ScriptFile.load(folder.path("marks.json"))
    }

    static func pipeline(_ folder: TemporaryFolder, source: ClipSource) -> SessionPipeline {
        SessionPipeline(
            clips: ClipIdentity(cacheFolder: folder.path("cache")),
            // 44.1 kHz from a 22,050 Hz clip, after a second of lead-in: every mark moves and scales.
            plan: PlanSettings(
                seed: 1,
                sampleRate: 44_100,
                sound: SoundSettings(leadInSeconds: 1, loudness: .off)
            ),
            source: source,
            output: OutputSettings(
                audio: .path(folder.path("s.wav")),
                timeline: .path(folder.path("s.wav.timeline.json"))
            )
        )
    }

    @Test("A provider's marks reach the timeline at the output's frames, in its JSON, and from the cache next time")
    func marksToFrames() async throws {
        let folder = try TemporaryFolder()
        let (audio, _, marks) = try Self.clip()
        let script = try Self.script("Notice where your attention is right now.", in: folder)
        let outcome = try await Self.pipeline(folder, source: .provider(MarkingProvider(audio: audio, marks: marks)))
            .run(script)
        let item = try #require(outcome.timeline.items.first { $0.kind == .segment })
        // The clip starts at 1 s of lead-in + 2 s, at 44.1 kHz; each mark's ends doubled.
        #expect(item.startFrame == Frames(3 * 44_100))
        let expected = marks.words.map {
            SpeechMark(
                text: $0.text,
                startFrame: item.startFrame + Frames($0.startFrame.count * 2),
                frameCount: Frames($0.frameCount.count * 2)
            )
        }
        #expect(item.clip?.words == expected)
        #expect(item.clip?.words?.first?.startFrame == Frames(132_300 + 2_002))
        #expect(item.clip?.sentences?.first?.frameCount == Frames(96_488))
        // The timeline file says the same, and reads back.
        let written = try SessionVerifier.readTimeline(at: folder.path("s.wav.timeline.json"))
        #expect(written.items.first { $0.kind == .segment }?.clip?.words == expected)
        let json = try String(contentsOfFile: folder.path("s.wav.timeline.json"), encoding: .utf8)
        #expect(json.contains("\"words\""))
        // Offline, from the cache: the marks come from the clip's sidecar.
        let again = try await Self.pipeline(folder, source: .offline).run(script)
        #expect(again.timeline.items.first { $0.kind == .segment }?.clip?.words == expected)
        #expect(again.clips.alreadyCached == 1)
    }

    @Test("Marks are trusted only for the bytes they were made with: a clip swapped in the cache has none")
    func marksFollowTheBytes() async throws {
        let folder = try TemporaryFolder()
        let (audio, _, marks) = try Self.clip()
        let text = "Notice where your attention is right now."
        let script = try Self.script(text, in: folder)
        let outcome = try await Self.pipeline(folder, source: .provider(MarkingProvider(audio: audio, marks: marks)))
            .run(script)
        let key = try #require(outcome.timeline.items.first { $0.kind == .segment }?.clip?.key)
        // Another fixture clip under the same key: long enough to hold every mark, so only the
        // bytes give it away.
        let other = try #require(try FixtureClip.all().first { $0.text.hasPrefix("If you have drifted") })
        try FileManager.default.removeItem(atPath: folder.path("cache/\(key).mp3"))
        try FileManager.default.copyItem(atPath: other.path, toPath: folder.path("cache/\(key).mp3"))
        let swapped = try await Self.pipeline(folder, source: .offline).run(script)
        let item = try #require(swapped.timeline.items.first { $0.kind == .segment })
        #expect(item.clip?.words == nil && item.clip?.sentences == nil)
        #expect(
            item.clip?.wordsUnavailable
                == "the cached clip is not eSpeak NG's speech of its text at this speed, so its words could not be recovered"
        )
        let written = try String(contentsOfFile: folder.path("s.wav.timeline.json"), encoding: .utf8)
        #expect(!written.contains("\"words\""))
        #expect(written.contains("\"wordsUnavailable\""))
        // An item with words has no reason.
        #expect(outcome.timeline.items.first { $0.kind == .segment }?.clip?.wordsUnavailable == nil)
    }

    @Test("Marks that do not fit the audio fail the clip, naming why, and nothing is stored")
    func brokenMarks() async throws {
        let folder = try TemporaryFolder()
        let (audio, frames, marks) = try Self.clip()
        var broken = marks
        broken.words.append(SpeechMark(text: "after", startFrame: frames, frameCount: 10))
        let script = try Self.script("Notice where your attention is right now.", in: folder)
        let error = await #expect(throws: SessionError.self) {
            try await Self.pipeline(folder, source: .provider(MarkingProvider(audio: audio, marks: broken))).run(script)
        }
        #expect(error?.code == .missingClips || error?.code == .unusableClips)
        #expect(
            error?.lines.first?.contains(
                "the engine's marks do not fit its audio: word 4 (\"after\") at frames \(frames.count)+10 is out of order or past the clip's \(frames.count)"
            ) == true,
            "\(error?.lines ?? [])"
        )
        let stored = (try? FileManager.default.contentsOfDirectory(atPath: folder.path("cache"))) ?? []
        #expect(stored.allSatisfy { !$0.hasSuffix(".mp3") && !$0.hasSuffix(".marks.json") }, "\(stored)")
    }

    @Test("A render checks its settings, opens its sound library and checks its voice once each")
    func onceEach() async throws {
        let folder = try TemporaryFolder()
        let library = try LayeredRenderTests.gongLibrary()
        var pipeline = SessionPipeline(
            clips: ClipIdentity(cacheFolder: folder.path("cache"), voice: "espeak:en-gb"),
            plan: PlanSettings(
                seed: 7,
                sound: SoundSettings(startGong: "gong", intervalGong: "gong", intervalMinutes: 1),
                soundLibrary: library.url.path
            ),
            source: .provider(LocalSpeechProvider()),
            output: OutputSettings(audio: .path(folder.path("s.mp3")), timeline: .path(folder.path("s.json")))
        )
        pipeline.output.verifies = true
        let probe = PipelineProbe()
        let script = try ScriptFile.load(Repository.script("edge-cases").path)
        let outcome = try await PipelineProbe.$current.withValue(probe) { try await pipeline.run(script) }
        #expect(probe.count(of: .settingsCheck) == 1)
        #expect(probe.count(of: .soundLibraryOpen) == 1)
        #expect(probe.count(of: .voiceCheck) == 1)
        #expect(outcome.verification?.isClean == true, "\(outcome.verification?.problems.map(\.message) ?? [])")
        #expect(outcome.clips.synthesized == script.allTexts.count)
        #expect(outcome.encoding?.codec.isEmpty == false)
    }

    @Test("A batch checks its settings and opens its sound library once for all its sessions")
    func batchOnce() async throws {
        let folder = try TemporaryFolder()
        let library = try LayeredRenderTests.gongLibrary()
        let pipeline = SessionPipeline(
            clips: ClipIdentity(cacheFolder: Repository.cache.path),
            plan: PlanSettings(sound: SoundSettings(startGong: "gong"), soundLibrary: library.url.path)
        )
        let probe = PipelineProbe()
        let report = try await PipelineProbe.$current.withValue(probe) {
            try await BatchRenderer.run(
                try ScriptLibrary(paths: [Repository.fixtures.appendingPathComponent("scripts").path]),
                options: BatchOptions(outputFolder: folder.path("out"), pipeline: pipeline, variants: 2)
            )
        }
        #expect(report.results.count == 4)
        #expect(report.results.allSatisfy { if case .rendered = $0 { true } else { false } })
        #expect(probe.count(of: .settingsCheck) == 1)
        #expect(probe.count(of: .soundLibraryOpen) == 1)
        #expect(probe.count(of: .voiceCheck) == 1)
    }

    @Test("The loudest moments are the highest-peaked half seconds, loudest first, each with the half second before it")
    func loudestMoments() {
        let rate = SampleRate(8_000)
        let moments = LoudestMoments(sampleRate: rate, channelCount: .mono)
        // 40 half seconds, the k-th at a peak of k/40 (one sample), in blocks that do not line up.
        var signal: [Float] = []
        for block in 1...40 {
            var half = [Float](repeating: 0.001, count: 4_000)
            half[1_234] = Float(block) / 40
            signal += half
        }
        var offset = 0
        while offset < signal.count {
            let frames = min(3_001, signal.count - offset)
            moments.add(Array(signal[offset..<(offset + frames)]), frames: frames)
            offset += frames
        }
        let kept = moments.finish()
        #expect(kept.count == LoudestMoments.count)
        #expect(kept.first?.count == 8_000 && kept.allSatisfy { $0.count == 8_000 })
        #expect(kept.map { $0[4_000 + 1_234] } == (17...40).reversed().map { Float($0) / 40 })
        #expect(kept.first?[1_234] == Float(39) / 40, "the context is the half second before")
    }

    @Test(
        "The codec probe finds a lossless file's peak and loudness unchanged, and what Opus at 24 kb/s adds to a limited signal's peak",
        arguments: [false, true]
    )
    func codecProbe(lossy: Bool) throws {
        let rate = SampleRate(48_000)
        // Half seconds of a 997 Hz tone with a 5 kHz one over it, peaking at −3 dBFS, each with its context.
        let moment = (0..<48_000).map { frame -> Float in
            let time = Double(frame) / 48_000
            return Float(0.5 * sin(2 * .pi * 997 * time) + 0.2079 * sin(2 * .pi * 5_000 * time))
        }
        let peak = 20 * log10(Double(moment.map(abs).max() ?? 0))
        let encoder = lossy ? try EncoderSettings(format: .opus, bitrate: 24) : EncoderSettings.wav
        let result = try CodecProbe.run(
            Array(repeating: moment, count: 4),
            sampleRate: rate,
            channelCount: .mono,
            encoder: encoder
        )
        if lossy {
            #expect(
                result.decodedPeak > peak,
                "Opus at 24 kb/s adds to the peak: \(result.decodedPeak) against \(peak)"
            )
            #expect(result.decodedPeak < peak + 3)
            #expect(abs(result.loudnessChange) < 1.5, "\(result.loudnessChange) LU")
        } else {
            // 16-bit WAV: the samples' own peak, up to what lies between them, and the same loudness.
            #expect(
                result.decodedPeak >= peak - 0.01 && result.decodedPeak < peak + 0.5,
                "\(result.decodedPeak) against \(peak)"
            )
            #expect(abs(result.loudnessChange) < 0.01, "\(result.loudnessChange) LU")
        }
    }
}
