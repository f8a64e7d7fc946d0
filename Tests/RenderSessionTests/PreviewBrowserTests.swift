import Foundation
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// The preview page in a real browser: headless Chromium driven through WebDriver
/// (`Tests/Browser/preview-page.py`), on a page `show` writes for a rendered fixture; and
/// Chromium's own decoder as a second reader of our AAC files (`Tests/Browser/decode-audio.py`).
@Suite("The preview page and our audio in headless Chromium", .serialized, .requiresBrowser)
struct PreviewBrowserTests {
    /// One check the driver made.
    struct Check: Decodable {
        var name: String
        var ok: Bool
        var detail: String
    }

    @Test(
        "Loads offline with no console error and no request; one element per item; the title once; Tab reaches the sounds, named, Enter plays one; a click on a sound plays it, on the waveform or an empty lane seeks there; arrows step over gaps; ← while playing goes back to the item before within 1.5 s of a start; playing moves the playhead and the current item; Chromium reads the captions it carries, a word click seeks to it, cuechange fires; light and dark; on a phone nothing overflows and the playhead stays in view; the batch's index on a phone, light and dark; screenshots at both sizes in both schemes have content"
    )
    func page() async throws {
        let folder = try TemporaryFolder()
        let audio = folder.path("edge-cases.wav")
        let render = try await renderSession([
            "render", "Fixtures/scripts/edge-cases.json", "--cache", "Fixtures/cache", "--offline", "--seed", "3",
            "-o", audio, "--timeline", audio + ".timeline.json",
        ])
        #expect(render.status == 0, "\(render.standardError)")
        let page = folder.path("page.html")
        let shown = try await renderSession(["show", audio, "-o", page])
        #expect(shown.status == 0, "\(shown.standardError)")
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: audio + ".timeline.json"))
        )
        // The batch's index as a batch writes it, with a row whose texts are long.
        let row = try JSONDecoder().decode(
            BatchPreview.Row.self,
            from: Data(
                """
                {"name": "a-session-whose-name-is-long-enough-to-be-wider-than-a-phone", "page": "page.html",
                 "title": "A session with a long title, long enough to wrap on a phone", "kind": "guided",
                 "length": "0:40.000", "speechLoudness": -18.1, "programLoudness": -20.4, "lateClips": 0,
                 "verification": "the loudness is 2.0 LU from the target, more than the 1.0 LU allowed",
                 "isRendered": true, "isClean": false}
                """.utf8
            )
        )
        let index = folder.path("index.html")
        try Data(BatchPreview.html([row]).utf8).write(to: URL(fileURLWithPath: index))

        let printed = try await Self.runDriver(
            "preview-page.py",
            [
                page, "--items", "\(timeline.items.count + timeline.overlays.count)", "--click-index", "3",
                "--words", "\(timeline.items.reduce(0) { $0 + ($1.clip?.words?.count ?? 0) })",
                "--index", index, "--screenshots", folder.path("shots"),
            ]
        )

        struct Report: Decodable { var checks: [Check] }
        let checks = try JSONDecoder().decode(Report.self, from: printed).checks
        let expected = [
            "loads", "no-console-errors", "no-network", "item-count", "title-once", "keyboard", "click-plays",
            "plot-click", "arrow-keys", "back-key", "playback", "words", "color-scheme", "phone", "index-page",
            "screenshot",
        ]
        #expect(checks.map(\.name) == expected)
        for check in checks { #expect(check.ok, "\(check.name): \(check.detail)") }
        for shot in ["wide-light", "wide-dark", "phone-light", "phone-dark"] {
            #expect(FileManager.default.fileExists(atPath: folder.path("shots/\(shot).png")), "\(shot)")
        }
    }

    @Test(
        "Chromium's decodeAudioData, a reader apart from ffmpeg, gives an M4A and an M4B exactly the timeline's frames, the first sound where the WAV has it"
    )
    func chromiumDecodesAAC() async throws {
        let folder = try TemporaryFolder()
        var timelines: [String: Timeline] = [:]
        for suffix in ["wav", "m4a", "m4b"] {
            let audio = folder.path("edge-cases.\(suffix)")
            let render = try await renderSession([
                "render", "Fixtures/scripts/edge-cases.json", "--cache", "Fixtures/cache", "--offline", "--seed", "3",
                "-o", audio, "--timeline", audio + ".timeline.json",
            ])
            #expect(render.status == 0, "\(render.standardError)")
            timelines[suffix] = try JSONDecoder().decode(
                Timeline.self,
                from: Data(contentsOf: URL(fileURLWithPath: audio + ".timeline.json"))
            )
        }
        let wav = try #require(timelines["wav"])
        let printed = try await Self.runDriver(
            "decode-audio.py",
            ["\(wav.sampleRate.hertz)"] + ["wav", "m4a", "m4b"].map { folder.path("edge-cases.\($0)") }
        )

        struct Decoded: Decodable {
            var path: String
            var frames: Int64?
            var firstSound: Int64?
            var error: String?
        }
        struct Report: Decodable { var files: [Decoded] }
        let files = try JSONDecoder().decode(Report.self, from: printed).files
        try #require(files.count == 3)
        let reference = try #require(files[0].firstSound)
        for (file, suffix) in zip(files, ["wav", "m4a", "m4b"]) {
            #expect(file.error == nil, "\(suffix): \(file.error ?? "")")
            #expect(file.frames == timelines[suffix]?.totalFrames.count, "\(suffix)")
            // The codec moves the first sample over 0.01 by a few frames at most (264 in both here).
            #expect(
                abs((file.firstSound ?? -1) - reference) <= 16,
                "\(suffix): \(file.firstSound ?? -1) against \(reference)"
            )
        }
    }

    /// Runs `Tests/Browser/<script>` with `arguments` under Debian's Python; returns what it printed,
    /// expecting exit status 0 (else the failure names the script, with its output and errors).
    static func runDriver(_ script: String, _ arguments: [String]) async throws -> Data {
        let driver = try await ChildProcess.run(
            BrowserSupport.python,
            [Repository.root.appendingPathComponent("Tests/Browser/\(script)").path] + arguments
        )
        #expect(
            driver.termination == .exited(0),
            "\(script): \(driver.standardOutputText) \(driver.standardErrorText)"
        )
        return Data(driver.standardOutput)
    }
}
