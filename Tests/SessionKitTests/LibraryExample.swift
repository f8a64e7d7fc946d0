import Foundation
import SessionKit
import SessionTimeline
import TestSupport
import Testing

// docs/library.md shows the code between these markers; a test below checks it still does.
// begin example
/// Renders one session as an app's build step would, and returns when each spoken clip starts.
func renderForApp(
    scriptPath: String,
    cacheFolder: String,
    outputFolder: String
) async throws -> [(text: String, seconds: Double)] {
    // 1. Load and validate the script: a SessionError lists every problem with its JSON path.
    let script = try ScriptFile.load(scriptPath)

    // 2. Describe the job: which clips (the cache key), the plan, where missing clips come
    //    from, and what is written where.
    let pipeline = SessionPipeline(
        clips: ClipIdentity(cacheFolder: cacheFolder, voice: "espeak:en-us", speed: 1.0),
        plan: PlanSettings(seed: 7, sampleRate: 22_050),
        source: .provider(EmbeddedSpeechProvider()),
        output: OutputSettings(
            audio: .path("\(outputFolder)/\(script.id).wav"),
            timeline: .path("\(outputFolder)/\(script.id).timeline.json")
        )
    )

    // 3. Fill the cache with every clip the script can need, whatever its kind (guided, timer,
    //    breathing, workout, stretching); each clip is measured once.
    let clips = try await pipeline.prepare(scripts: [script])
    // 4. Plan: every clip, silence and the bell at an exact frame, in the voice that spoke them.
    let timeline = try pipeline.adopting(clips).plan(script, clips: clips)
    // 5. Render the WAV and the timeline JSON (each appears only when complete).
    try pipeline.render(timeline)

    // 6. Read the timeline: frames inside, seconds only at the edge.
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
        #expect(timeline.seed == 7 && timeline.totalFrames == Frames(608 * 22_050))
        let wav =
            try FileManager.default.attributesOfItem(atPath: folder.path("out/ten-minute-session.wav"))[.size] as? Int
        #expect(
            wav == 608 * 22_050 * 2 + 82 + 84 + 84 + 44,
            "16-bit mono samples after the header, the title's LIST chunk and the four chapters' cue and LIST/adtl chunks (labels of 12, 14, 12 and 12 bytes and a JUNK filler)"
        )
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
