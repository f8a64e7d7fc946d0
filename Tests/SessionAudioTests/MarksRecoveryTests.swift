import Foundation
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio

@Suite("A cached eSpeak NG clip's marks, recovered by speaking it again", .tags(.concurrent))
struct MarksRecoveryTests {
    static let text =
        "Welcome. Find a position that lets you be both relaxed and awake. Take one slow breath in, and let it go."

    /// The MP3 clip of `text` as the voice speaks it, with faint noise added (about −60 dBFS),
    /// written to `folder`, with the marks its own events give on the clip as decoded.
    ///
    /// The voice speaks a text the same to the sample every time, so a clip it made is its
    /// speech again exactly but for the MP3 encoding. The noise makes the clip's samples differ
    /// from the speech spoken again, as a clip made by another eSpeak NG build would.
    static func clip(
        of text: String,
        in folder: TemporaryFolder
    ) throws -> (path: String, marks: (words: [SpeechMark], sentences: [SpeechMark])) {
        var spoken = try EmbeddedVoice.synthesize(text: text, voice: "en-us", speed: 1)
        var noise = SeededGenerator(seed: 7)
        spoken.samples = spoken.samples.map { sample in
            let added = Int(sample) + Int(noise.next() % 65) - 32
            return Int16(clamping: added)
        }
        let path = folder.path("clip-\(UUID().uuidString).mp3")
        try Data(SpeechClip.mp3(spoken.samples, sampleRate: spoken.sampleRate, voice: "eSpeak NG"))
            .write(to: URL(fileURLWithPath: path))
        let decoded = try EmbeddedVoice.monoSamples(of: path).samples
        #expect(decoded.count == spoken.samples.count, "the clip decodes gapless")
        return (path, try #require(ESpeakMarks.marks(of: text, events: spoken.events, samples: decoded)))
    }

    @Test(
        "Spoken again, a word after silence lands within 10 ms of where the clip's own events put it, every word within 60 ms"
    )
    func sameSpeech() throws {
        let folder = try TemporaryFolder()
        let (path, original) = try Self.clip(of: Self.text, in: folder)
        let clip = try EmbeddedVoice.monoSamples(of: path).samples
        let recovered = try #require(
            try EmbeddedVoice.recoveredMarks(text: Self.text, voice: "en-us", speed: 1, clipAt: path)
        )
        #expect(recovered.sampleRate.hertz == 22_050)
        #expect(recovered.words.map(\.text) == original.words.map(\.text))
        #expect(recovered.sentences.map(\.text) == original.sentences.map(\.text))
        let (tenMilliseconds, sixtyMilliseconds) = (Int64(220), Int64(1_323))
        var afterSilence = 0
        for (word, expected) in zip(recovered.words, original.words) {
            let start = abs(word.startFrame.count - expected.startFrame.count)
            let first = Int(expected.startFrame.count)
            // 50 ms of silence before the word's own start: a word a listener hears begin.
            let silent = first >= 1_102 && clip[(first - 1_102)..<first].allSatisfy { $0.magnitude < 328 }
            if silent { afterSilence += 1 }
            let limit = silent ? tenMilliseconds : sixtyMilliseconds
            #expect(start <= limit, "\(word.text) starts \(start) frames from the clip's own mark")
            let end = abs((word.startFrame + word.frameCount).count - (expected.startFrame + expected.frameCount).count)
            #expect(end <= sixtyMilliseconds, "\(word.text) ends \(end) frames from the clip's own mark")
        }
        #expect(afterSilence >= 3, "the text has words after silence: \(afterSilence)")
    }

    @Test("A clip of another text, of noise, or at another speed gets no marks")
    func otherSpeech() throws {
        let folder = try TemporaryFolder()
        let (path, _) = try Self.clip(of: Self.text, in: folder)
        #expect(
            try EmbeddedVoice.recoveredMarks(
                text: "Notice the weight of your body and the sounds around you, then open your eyes.",
                voice: "en-us",
                speed: 1,
                clipAt: path
            ) == nil
        )
        // Noise as long as the clip: a wrong file in the cache.
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<150_000).map { _ in Int16.random(in: -8_000...8_000, using: &generator) }
        let noisePath = folder.path("noise.mp3")
        try Data(SpeechClip.mp3(noise, sampleRate: 22_050, voice: "noise")).write(to: URL(fileURLWithPath: noisePath))
        #expect(try EmbeddedVoice.recoveredMarks(text: Self.text, voice: "en-us", speed: 1, clipAt: noisePath) == nil)
        // The same text at another speed is other speech: its words would be misplaced.
        #expect(try EmbeddedVoice.recoveredMarks(text: Self.text, voice: "en-us", speed: 1.6, clipAt: path) == nil)
    }

    @Test("The voice speaks a text the same whatever it spoke before, and recovers the same marks")
    func sameWhateverCameBefore() throws {
        let folder = try TemporaryFolder()
        let first = try EmbeddedVoice.speech(text: Self.text, voice: "en-us", speed: 1)
        let other = try EmbeddedVoice.speech(text: "A different sentence, spoken between.", voice: "en-us", speed: 1.2)
        let again = try EmbeddedVoice.speech(text: Self.text, voice: "en-us", speed: 1)
        #expect(other.mp3 != first.mp3)
        #expect(again.mp3 == first.mp3, "the same bytes after another text")
        #expect(again.marks == first.marks)

        let (path, _) = try Self.clip(of: Self.text, in: folder)
        let recovered = try EmbeddedVoice.recoveredMarks(text: Self.text, voice: "en-us", speed: 1, clipAt: path)
        _ = try EmbeddedVoice.speech(text: "Something else, so a kept state would differ.", voice: "en-us", speed: 1)
        let recoveredAgain = try EmbeddedVoice.recoveredMarks(text: Self.text, voice: "en-us", speed: 1, clipAt: path)
        #expect(recovered != nil)
        #expect(recoveredAgain == recovered, "recovered marks do not depend on what was spoken before")
    }
}
