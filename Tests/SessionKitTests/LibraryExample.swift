import Foundation
import SessionKit
import SessionTimeline
import TestSupport
import Testing

// docs/library.md shows the code between these markers; a test below checks it still does.
// begin example
/// Renders one session as an app's build step would: clips from the cache, a missing one spoken
/// by the app backend's TTS proxy at `proxyURL` (or, without one, the embedded eSpeak NG voice);
/// the file checked against its timeline. Returns when each spoken clip starts.
func renderForApp(
    scriptPath: String,
    cacheFolder: String,
    outputFolder: String,
    proxyURL: URL? = nil,
    appCheckToken: String? = nil
) async throws -> [(text: String, seconds: Double)] {
    // 1. Load and validate the script: a SessionError lists every problem with its JSON path.
    let script = try ScriptFile.load(scriptPath)

    // 2. Where missing clips come from: any SpeechProvider (a type of your own too).
    let provider: any SpeechProvider =
        if let proxyURL {
            try ProxySpeechProvider(
                baseURL: proxyURL,
                headers: appCheckToken.map { [(name: "X-Firebase-AppCheck", value: $0)] } ?? []
            )
        } else {
            EmbeddedSpeechProvider()
        }

    // 3. Describe the job: which clips (the cache key), the plan, the source, what is written
    //    where, and that the file is decoded and checked once written.
    var pipeline = SessionPipeline(
        clips: ClipIdentity(cacheFolder: cacheFolder, voice: "espeak:en-us", speed: 1.0),
        plan: PlanSettings(seed: 7, sampleRate: 22_050),
        source: .provider(provider),
        output: OutputSettings(
            audio: .path("\(outputFolder)/\(script.id).wav"),
            timeline: .path("\(outputFolder)/\(script.id).timeline.json")
        )
    )
    pipeline.output.verifies = true

    // 4. One call: every setting, voice, sound and output checked before any work, then every
    //    clip the script can need prepared (each measured once), every clip, silence and the
    //    bell placed at an exact frame, the WAV and timeline JSON written (each only when
    //    complete) and the WAV verified.
    let outcome = try await pipeline.run(script)
    for warning in outcome.warnings { print("warning: \(warning)") }
    if let report = outcome.verification, !report.isClean {
        throw SessionError(.cannotWrite, "\(report.path): \(report.problems[0].message)")
    }

    // 5. Read the timeline: frames inside, seconds only at the edge.
    let timeline = outcome.timeline
    return timeline.items.compactMap { item in
        item.clip.map { (text: $0.text, seconds: timeline.sampleRate.seconds(of: item.startFrame)) }
    }
}
// end example

@Suite("The library example in docs/library.md")
struct LibraryExampleTests {
    @Test("The example renders the 10-minute fixture and reads its timeline")
    func runs() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.copyItem(at: Repository.cache, to: folder.url.appendingPathComponent("cache"))
        let spoken = try await renderForApp(
            scriptPath: Repository.script("ten-minute-session").path,
            cacheFolder: folder.path("cache"),
            outputFolder: folder.path("out")
        )
        #expect(spoken.count == 5, "3 segments and 2 interjections")
        #expect(spoken.first?.seconds == 0 && spoken.first?.text.hasPrefix("Welcome.") == true)
        #expect(spoken.map(\.seconds) == spoken.map(\.seconds).sorted())
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: folder.url.appendingPathComponent("out/ten-minute-session.timeline.json"))
        )
        #expect(timeline.seed == 7 && timeline.totalFrames == Frames(612 * 22_050))
        let wav =
            try FileManager.default.attributesOfItem(atPath: folder.path("out/ten-minute-session.wav"))[.size] as? Int
        #expect(
            wav == 612 * 22_050 * 2 + 82 + 84 + 84 + 44,
            "16-bit mono samples after the header, the title's LIST chunk and the four chapters' cue and LIST/adtl chunks (labels of 12, 14, 12 and 12 bytes and a JUNK filler)"
        )
    }

    @Test("The example's proxy, built from outside, speaks the clips the cache lacks, with the App Check header")
    func proxy() async throws {
        let folder = try TemporaryFolder()
        let server = try await TTSServer()
        let spoken = try await renderForApp(
            scriptPath: Repository.script("edge-cases").path,
            cacheFolder: folder.path("cache"),
            outputFolder: folder.path("out"),
            proxyURL: server.baseURL,
            appCheckToken: "token-1"
        )
        let script = try ScriptFile.load(Repository.script("edge-cases").path)
        let stats = try await server.stats()
        #expect(stats.count == script.allTexts.count, "one request for each text, none twice")
        #expect(
            stats.requests.allSatisfy { $0.path == "/tts/synthesize" && $0.headers["x-firebase-appcheck"] == "token-1" }
        )
        #expect(spoken.count == 6, "4 segments and 2 interjections")
    }

    @Test("docs/library.md shows exactly the example the suite runs")
    func documented() throws {
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let example = try #require(
            source.components(separatedBy: "// begin example\n").dropFirst().first?
                .components(separatedBy: "// end example").first
        )
        let doc = try String(contentsOf: Repository.root.appendingPathComponent("docs/library.md"), encoding: .utf8)
        #expect(
            doc.contains("```swift\n" + example + "```"),
            "copy the example between the markers into docs/library.md"
        )
    }
}
