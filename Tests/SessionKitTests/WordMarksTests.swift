import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

@Suite("Words where they are heard", .tags(.concurrent))
struct WordMarksTests {
    /// Single words, each its own clip after silence (three start with a plosive, whose burst
    /// eSpeak's word event precedes), then two sentences of continuous speech.
    static let script = """
        {"id": "words", "category": "test", "title": "Words", "orderIndex": 1, "durationSeconds": 14,
         "interjections": [], "segments": [
           {"id": "a", "phase": "opening", "startSeconds": 0, "text": "Peace."},
           {"id": "b", "phase": "opening", "startSeconds": 2, "text": "Breathe."},
           {"id": "c", "phase": "opening", "startSeconds": 4, "text": "Calm."},
           {"id": "d", "phase": "opening", "startSeconds": 6, "text": "Together."},
           {"id": "e", "phase": "closing", "startSeconds": 8, "text": "Notice the breath. Let it go, slowly."}
         ]}
        """

    @Test(
        "eSpeak NG: a word after silence starts within 10 ms of where the rendered file sounds; words and sentences are the script's, in order"
    )
    func eSpeakWordsAtTheirSound() async throws {
        try await Self.wordsAtTheirSound(clips: { ClipIdentity(cacheFolder: $0) }, provider: EmbeddedSpeechProvider())
    }

    @Test(
        "Piper: a word after silence starts within 10 ms of where the rendered file sounds; words and sentences are the script's, in order",
        .requiresPiper
    )
    func piperWordsAtTheirSound() async throws {
        try await Self.wordsAtTheirSound(
            clips: { ClipIdentity(cacheFolder: $0, voice: PiperSupport.voice) },
            provider: PiperSpeechProvider(installation: PiperSupport.installation!)
        )
    }

    /// Renders ``script`` with `provider`'s voice and holds its words to the rendered file's sound.
    static func wordsAtTheirSound(
        clips: (String) -> ClipIdentity,
        provider: some SpeechProvider
    ) async throws {
        let folder = try TemporaryFolder()
        let scriptPath = folder.path("words.json")
        try Self.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let pipeline = SessionPipeline(
            clips: clips(folder.path("cache")),
            plan: PlanSettings(seed: 1),
            source: .provider(provider),
            output: OutputSettings(
                audio: .path(folder.path("words.wav")),
                timeline: .path(folder.path("words.json.timeline"))
            )
        )
        let timeline = try await pipeline.run(ScriptFile.load(scriptPath)).timeline
        let (samples, channels) = try await FFmpeg.decode(folder.path("words.wav"))
        #expect(channels == 1)
        let rate = Int64(timeline.sampleRate.hertz)
        let spoken = timeline.items.compactMap { item in item.clip.map { (item, $0) } }
        try #require(spoken.count == 5)

        for (index, expected) in ["Peace", "Breathe", "Calm", "Together"].enumerated() {
            let (item, clip) = spoken[index]
            let words = try #require(clip.words, "\(expected) has its word")
            #expect(words.map(\.text) == [expected])
            let word = try #require(words.first)
            let onset = try #require(
                samples[Int(item.startFrame.count)...].firstIndex { abs($0) >= VerificationRules.onsetLevel },
                "\(expected) sounds"
            )
            let gap = abs(word.startFrame.count - Int64(onset))
            #expect(gap <= rate / 100, "\(expected): the word starts \(gap) frames from the file's onset")
            #expect(word.startFrame + word.frameCount <= item.startFrame + item.frameCount)
            #expect(clip.sentences?.map(\.text) == ["\(expected)."])
        }

        let (item, clip) = spoken[4]
        let words = try #require(clip.words)
        #expect(words.map(\.text) == ["Notice", "the", "breath", "Let", "it", "go", "slowly"])
        for (word, next) in zip(words, words.dropFirst()) {
            #expect(word.startFrame + word.frameCount <= next.startFrame, "\(word.text) ends before \(next.text)")
        }
        #expect(words.first!.startFrame >= item.startFrame)
        #expect(words.last!.startFrame + words.last!.frameCount <= item.startFrame + item.frameCount)
        let sentences = try #require(clip.sentences)
        #expect(sentences.map(\.text) == ["Notice the breath.", "Let it go, slowly."])
        #expect(sentences.map(\.startFrame) == [words[0].startFrame, words[3].startFrame])
        #expect(sentences[1].startFrame + sentences[1].frameCount == words[6].startFrame + words[6].frameCount)
        // Each word is sound: at least one of its frames reaches the onset level.
        for word in words {
            let frames = samples[Int(word.startFrame.count)..<Int((word.startFrame + word.frameCount).count)]
            #expect(frames.contains { abs($0) >= VerificationRules.onsetLevel }, "\(word.text) is heard")
        }

        // The timeline file carries them, and reads back the same.
        let written = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder.path("words.json.timeline")))
        )
        #expect(written.items.map { $0.clip?.words } == timeline.items.map { $0.clip?.words })
    }

    @Test("Marks are kept beside the clip and used again from the cache, for those bytes only")
    func marksFromTheCache() async throws {
        let folder = try TemporaryFolder()
        let scriptPath = folder.path("words.json")
        try Self.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let script = try ScriptFile.load(scriptPath)
        let preparer = ClipPreparer(
            identity: ClipIdentity(cacheFolder: folder.path("cache")),
            provider: EmbeddedSpeechProvider()
        )
        let prepared = try await preparer.prepare(texts: script.allTexts)
        #expect(prepared.synthesized == 5)
        let cold = try await planOffline(script, cache: folder.path("cache")).items.compactMap { $0.clip?.words }
        #expect(cold.count == 5)
        let sidecars = try FileManager.default.contentsOfDirectory(atPath: folder.path("cache")).filter {
            $0.hasSuffix(".marks.json")
        }
        #expect(sidecars.count == 5)
        let warm = try await planOffline(script, cache: folder.path("cache")).items.compactMap { $0.clip?.words }
        #expect(warm == cold)
    }
}
