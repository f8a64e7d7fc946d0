import Foundation
import SessionTimeline
import TestSupport
import Testing

/// `render-session show`: the table on stdout, exactly; the sidecar of an audio file; queues;
/// the width; one error line.
@Suite("The show command", .serialized)
struct ShowCommandTests {
    static let timeline = "Fixtures/positions/five-seconds.timeline.json"
    static let queue = "Fixtures/positions/queue.json"

    /// Renders the fixture session with a rain bed and interval gongs into `folder`, its timeline
    /// beside it; returns the audio's path.
    static func renderLayered(in folder: TemporaryFolder) throws -> String {
        let audio = folder.path("s.wav")
        let render = try renderSession(
            [
                "render", "Fixtures/scripts/ten-minute-session.json", "--cache", "Fixtures/cache", "--offline",
                "--seed", "7", "--ambience", "rain", "--interval-gong", "gong", "--interval-minutes", "5",
                "-o", audio, "--timeline", audio + ".timeline.json",
            ]
        )
        #expect(render.status == 0, "\(render.standardError)")
        return audio
    }

    @Test(
        "A timeline's table, exactly: phases, items and gaps in time order, the gong in its phase, loudness and chapters"
    )
    func table() throws {
        let shown = try renderSession(["show", Self.timeline])
        #expect(shown.status == 0 && shown.standardError.isEmpty, "\(shown.standardError)")
        let expected = """
            Five seconds
            guided, voice unknown, 1000 Hz mono, 0:05.000 (5,000 frames)

               #     start       end    length lane         kind / name    text                             gain
            opening  0:00.000 – 0:01.500 (1.500 s)
               0  0:00.000  0:01.000   1.000 s narration                   Welcome.                      +0.0 dB
              o0  0:00.800  0:02.800   2.000 s cue          gong                                         +0.0 dB
               1  0:01.000  0:01.500   0.500 s narration    gap
            body  0:01.500 – 0:05.000 (3.500 s)
               2  0:01.500  0:03.500   2.000 s narration                   Breathe.                      +0.0 dB
               3  0:03.500  0:03.750   0.250 s interjection                Soft.                         +0.0 dB
               4  0:03.750  0:05.000   1.250 s cue          bell                                         +0.0 dB

            Loudness: off
            Chapters: 1 opening 0:00.000, 2 body 0:01.500

            """
        #expect(shown.standardOutput == expected)
        // Standard input gives the same.
        let piped = try renderSession(
            ["show", "-"],
            input: try Data(contentsOf: Repository.root.appendingPathComponent(Self.timeline))
        )
        #expect(piped.standardOutput == expected)
    }

    @Test("A queue: its items in its own time, with their files, a heading where the phase changes")
    func queue() throws {
        let shown = try renderSession(["show", Self.queue])
        #expect(shown.status == 0, "\(shown.standardError)")
        let lines = shown.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[0] == "Three items" && lines[1] == "queue, 3 items, 0 overlays, 0:13.043")
        #expect(lines.contains { $0.hasPrefix("   1  0:03.000  0:12.043   9.043 s silence      silence-8000h…") })
        #expect(lines.filter { $0 == "opening" || $0 == "body" }.count == 2)
    }

    @Test("A rendered file is shown from the timeline beside it; every item and overlay has a row, every line fits")
    func renderedFile() throws {
        let folder = try TemporaryFolder()
        let audio = try ShowCommandTests.renderLayered(in: folder)
        let byAudio = try renderSession(["show", audio, "--width", "100"])
        let byTimeline = try renderSession(["show", audio + ".timeline.json", "--width", "100"])
        #expect(byAudio.status == 0 && byAudio.standardOutput == byTimeline.standardOutput)
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: audio + ".timeline.json"))
        )
        let lines = byAudio.standardOutput.split(separator: "\n").map(String.init)
        let itemRows = lines.filter { $0.range(of: #"^ *\d+ +\d+:"#, options: .regularExpression) != nil }
        let overlayRows = lines.filter { $0.range(of: #"^ *o\d+ +\d+:"#, options: .regularExpression) != nil }
        #expect(itemRows.count == timeline.items.count && overlayRows.count == timeline.overlays.count)
        #expect(lines.filter { $0.hasSuffix(" gap") }.count == timeline.items.filter { $0.kind == .silence }.count)
        for phase in timeline.phases {
            #expect(lines.contains { $0.hasPrefix(phase.name + "  ") && $0.contains(", speech ") }, "\(phase.name)")
        }
        #expect(lines.contains { $0.hasPrefix("Loudness: target -16.0 LUFS on the speech") })
        for width in [60, 100, 140] {
            let shown = try renderSession(["show", audio, "--width", "\(width)"])
            let longest = shown.standardOutput.split(separator: "\n").map(\.count).max() ?? 0
            #expect(longest <= width, "--width \(width): a line of \(longest)")
        }
    }

    @Test("A title or text with control characters is printed escaped, never sent to the terminal")
    func hostileText() throws {
        let folder = try TemporaryFolder()
        var json = try String(contentsOf: Repository.root.appendingPathComponent(Self.timeline), encoding: .utf8)
        json = json.replacingOccurrences(of: "\"Five seconds\"", with: "\"Five\\u001b[2Jseconds\"")
        json = json.replacingOccurrences(of: "\"Welcome.\"", with: "\"Wel\\u0007come.\"")
        let path = folder.path("t.json")
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        let shown = try renderSession(["show", path])
        #expect(shown.status == 0, "\(shown.standardError)")
        #expect(!shown.standardOutputBytes.contains(0x1B) && !shown.standardOutputBytes.contains(0x07))
        #expect(shown.standardOutput.hasPrefix("Five\\u{1b}[2Jseconds\n"))
        #expect(shown.standardOutput.contains("Wel\\u{7}come."))
    }

    @Test("A file that is missing or not a timeline: one error line naming it, exit 65, nothing on stdout")
    func unreadable() throws {
        let folder = try TemporaryFolder()
        let missing = try renderSession(["show", folder.path("nothing.json")])
        #expect(missing.status == 65 && missing.standardOutput.isEmpty)
        #expect(missing.standardError == "error: Cannot read timeline \(folder.path("nothing.json")): no such file\n")
        // An audio file without a timeline beside it names the timeline looked for.
        let audio = folder.path("x.wav")
        try Data().write(to: URL(fileURLWithPath: audio))
        let bare = try renderSession(["show", audio])
        #expect(bare.status == 65)
        #expect(bare.standardError == "error: Cannot read timeline \(audio).timeline.json: no such file\n")
        let width = try renderSession(["show", Self.timeline, "--width", "20"])
        #expect(width.status == 64 && width.standardError.contains("--width"))
    }
}

/// `render-session show -o x.svg`: the picture, deterministic, every sound findable by its data.
@Suite("The show command's picture", .serialized)
struct ShowPictureTests {
    @Test("One element per sound with its frames, kind and lane; the same bytes every time; well-formed XML")
    func svg() throws {
        let folder = try TemporaryFolder()
        let audio = try ShowCommandTests.renderLayered(in: folder)
        let first = try renderSession(["show", audio, "-o", folder.path("a.svg")])
        #expect(first.status == 0 && first.standardOutput == folder.path("a.svg") + "\n", "\(first.standardError)")
        let again = try renderSession(["show", audio + ".timeline.json", "-o", "-"])
        let svg = try String(contentsOfFile: folder.path("a.svg"), encoding: .utf8)
        #expect(again.standardOutput == svg, "the same timeline, the same bytes")
        #expect(svg.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\""))

        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: audio + ".timeline.json"))
        )
        let pattern =
            #/<g class="item" data-(index|overlay)="(\d+)" data-start-frame="(\d+)" data-frame-count="(\d+)" data-kind="([a-z]+)" data-lane="([a-z]+)">/#
        let found = svg.matches(of: pattern).map {
            (String($0.output.1), Int($0.output.2)!, Int64($0.output.3)!, Int64($0.output.4)!, String($0.output.5))
        }
        let sounds = timeline.items.filter { $0.kind != .silence }
        #expect(found.filter { $0.0 == "index" }.count == sounds.count)
        #expect(found.filter { $0.0 == "overlay" }.count == timeline.overlays.count)
        for item in sounds {
            let element = found.first { $0.0 == "index" && $0.1 == item.index }
            #expect(element?.2 == item.startFrame.count && element?.3 == item.frameCount.count, "item \(item.index)")
            #expect(element?.4 == item.kind.rawValue)
        }
        for overlay in timeline.overlays {
            let element = found.first { $0.0 == "overlay" && $0.1 == overlay.index }
            #expect(element?.2 == overlay.startFrame.count && element?.3 == overlay.frameCount.count)
        }
        // Phases named, gaps labelled with their seconds.
        for phase in timeline.phases { #expect(svg.contains(">\(phase.name)</text>"), "\(phase.name)") }
        for gap in timeline.items where gap.kind == .silence {
            // Wide enough for its label from 20 s on, in a 10-minute session 1,084 px wide.
            let seconds = timeline.sampleRate.seconds(of: gap.frameCount)
            if seconds >= 20 { #expect(svg.contains(">\(Int(seconds.rounded())) s</text>"), "gap \(gap.index)") }
        }
        // Well-formed: Python's XML parser reads it without a complaint.
        let lint = Process()
        lint.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        lint.arguments = [
            "python3", "-c", "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])", folder.path("a.svg"),
        ]
        try lint.run()
        lint.waitUntilExit()
        #expect(lint.terminationStatus == 0, "python's XML parser reads the SVG")
    }

    @Test("Text with markup or control characters is escaped; -n keeps a file; only .svg is drawn")
    func hostileAndRules() throws {
        let folder = try TemporaryFolder()
        var json = try String(
            contentsOf: Repository.root.appendingPathComponent(ShowCommandTests.timeline),
            encoding: .utf8
        )
        json = json.replacingOccurrences(of: "\"Five seconds\"", with: "\"<b>Five & \\u001b seconds</b>\"")
        let path = folder.path("t.json")
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        let shown = try renderSession(["show", path, "-o", "-"])
        #expect(shown.status == 0)
        #expect(shown.standardOutput.contains(">&lt;b&gt;Five &amp; \\u{1b} seconds&lt;/b&gt;</text>"))
        #expect(!shown.standardOutputBytes.contains(0x1B))

        let kept = folder.path("kept.svg")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: kept))
        let refused = try renderSession(["show", path, "-o", kept, "-n"])
        #expect(refused.status != 0 && refused.standardError.hasPrefix("error: "))
        #expect(try String(contentsOfFile: kept, encoding: .utf8) == "mine")

        let png = try renderSession(["show", path, "-o", folder.path("x.png")])
        #expect(png.status == 64 && png.standardError.contains("is not .svg"))
        #expect(!FileManager.default.fileExists(atPath: folder.path("x.png")))
    }

    @Test("docs/session.svg, which the README shows, is what show draws for the fixture today")
    func documentedPicture() throws {
        let timeline = try renderSession([
            "timeline", "Fixtures/scripts/ten-minute-session.json", "--cache", "Fixtures/cache", "--offline", "--seed",
            "7",
            "--ambience", "rain", "--interval-gong", "gong", "--interval-minutes", "5",
        ])
        #expect(timeline.status == 0, "\(timeline.standardError)")
        let drawn = try renderSession(["show", "-", "-o", "-"], input: Data(timeline.standardOutputBytes))
        let documented = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/session.svg"),
            encoding: .utf8
        )
        #expect(
            drawn.standardOutput == documented,
            "docs/session.svg is stale: make it again with docs/cli.md's command"
        )
    }
}
