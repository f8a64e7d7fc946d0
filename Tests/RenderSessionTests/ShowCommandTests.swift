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
    static func renderLayered(in folder: TemporaryFolder) async throws -> String {
        let audio = folder.path("s.wav")
        let render = try await renderSession(
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
    func table() async throws {
        let shown = try await renderSession(["show", Self.timeline])
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
        let piped = try await renderSession(
            ["show", "-"],
            input: try Data(contentsOf: Repository.root.appendingPathComponent(Self.timeline))
        )
        #expect(piped.standardOutput == expected)
    }

    @Test("A queue: its items in its own time, with their files, a heading where the phase changes")
    func queue() async throws {
        let shown = try await renderSession(["show", Self.queue])
        #expect(shown.status == 0, "\(shown.standardError)")
        let lines = shown.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[0] == "Three items" && lines[1] == "queue, 3 items, 0 overlays, 0:13.043")
        #expect(lines.contains { $0.hasPrefix("   1  0:03.000  0:12.043   9.043 s silence      silence-8000h…") })
        #expect(lines.filter { $0 == "opening" || $0 == "body" }.count == 2)
    }

    @Test("A rendered file is shown from the timeline beside it; every item and overlay has a row, every line fits")
    func renderedFile() async throws {
        let folder = try TemporaryFolder()
        let audio = try await ShowCommandTests.renderLayered(in: folder)
        let byAudio = try await renderSession(["show", audio, "--width", "100"])
        let byTimeline = try await renderSession(["show", audio + ".timeline.json", "--width", "100"])
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
            let shown = try await renderSession(["show", audio, "--width", "\(width)"])
            let longest = shown.standardOutput.split(separator: "\n").map(\.count).max() ?? 0
            #expect(longest <= width, "--width \(width): a line of \(longest)")
        }
    }

    /// The fixture's five-second timeline written into `folder` with its title and first text
    /// replaced by these JSON string contents (escapes as JSON writes them); returns its path.
    static func fiveSeconds(in folder: TemporaryFolder, title: String, firstText: String) throws -> String {
        var json = try String(contentsOf: Repository.root.appendingPathComponent(Self.timeline), encoding: .utf8)
        json = json.replacingOccurrences(of: "\"Five seconds\"", with: "\"\(title)\"")
        json = json.replacingOccurrences(of: "\"Welcome.\"", with: "\"\(firstText)\"")
        let path = folder.path("t.json")
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("A title or text with control characters is printed escaped, never sent to the terminal")
    func hostileText() async throws {
        let folder = try TemporaryFolder()
        let path = try Self.fiveSeconds(in: folder, title: "Five\\u001b[2Jseconds", firstText: "Wel\\u0007come.")
        let shown = try await renderSession(["show", path])
        #expect(shown.status == 0, "\(shown.standardError)")
        #expect(!shown.standardOutputBytes.contains(0x1B) && !shown.standardOutputBytes.contains(0x07))
        #expect(shown.standardOutput.hasPrefix("Five\\u{1b}[2Jseconds\n"))
        #expect(shown.standardOutput.contains("Wel\\u{7}come."))
    }

    @Test("A paragraph break in a text or title is ¶ in the table, a line break in the picture's tooltip, never \\u{a}")
    func paragraphBreaks() async throws {
        let folder = try TemporaryFolder()
        let path = try Self.fiveSeconds(
            in: folder,
            title: "Five\\n\\nseconds",
            firstText: "Welcome.\\n\\nBreathe in,\\nout."
        )
        let shown = try await renderSession(["show", path, "--width", "160"])
        #expect(shown.status == 0, "\(shown.standardError)")
        #expect(!shown.standardOutput.contains("\\u{a}"))
        #expect(shown.standardOutput.hasPrefix("Five ¶ seconds\n"))
        #expect(shown.standardOutput.contains(" Welcome. ¶ Breathe in, out. "))
        let svg = try await renderSession(["show", path, "-o", "-"])
        #expect(svg.status == 0, "\(svg.standardError)")
        #expect(svg.standardOutput.contains("<title>Welcome.\n\nBreathe in,\nout.</title>"))
        #expect(!svg.standardOutput.contains("\\u{a}"))
    }

    @Test("A file that is missing or not a timeline: one error line naming it, exit 65, nothing on stdout")
    func unreadable() async throws {
        let folder = try TemporaryFolder()
        let missing = try await renderSession(["show", folder.path("nothing.json")])
        #expect(missing.status == 65 && missing.standardOutput.isEmpty)
        #expect(missing.standardError == "error: Cannot read timeline \(folder.path("nothing.json")): no such file\n")
        // An audio file without a timeline beside it names the timeline looked for.
        let audio = folder.path("x.wav")
        try Data().write(to: URL(fileURLWithPath: audio))
        let bare = try await renderSession(["show", audio])
        #expect(bare.status == 65)
        #expect(bare.standardError == "error: Cannot read timeline \(audio).timeline.json: no such file\n")
        let width = try await renderSession(["show", Self.timeline, "--width", "20"])
        #expect(width.status == 64 && width.standardError.contains("--width"))
    }
}

/// `render-session show -o x.svg`: the picture, deterministic, every sound findable by its data.
@Suite("The show command's picture", .serialized)
struct ShowPictureTests {
    @Test("One element per sound with its frames, kind and lane; the same bytes every time; well-formed XML")
    func svg() async throws {
        let folder = try TemporaryFolder()
        let audio = try await ShowCommandTests.renderLayered(in: folder)
        let first = try await renderSession(["show", audio, "-o", folder.path("a.svg")])
        #expect(first.status == 0 && first.standardOutput == folder.path("a.svg") + "\n", "\(first.standardError)")
        let again = try await renderSession(["show", audio + ".timeline.json", "-o", "-"])
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
        // Every item one element, the gaps too (kind `gap`).
        #expect(found.filter { $0.0 == "index" }.map(\.1) == timeline.items.map(\.index))
        #expect(found.filter { $0.0 == "overlay" }.count == timeline.overlays.count)
        for item in timeline.items {
            let element = found.first { $0.0 == "index" && $0.1 == item.index }
            #expect(element?.2 == item.startFrame.count && element?.3 == item.frameCount.count, "item \(item.index)")
            #expect(element?.4 == (item.kind == .silence ? "gap" : item.kind.rawValue))
        }
        for overlay in timeline.overlays {
            let element = found.first { $0.0 == "overlay" && $0.1 == overlay.index }
            #expect(element?.2 == overlay.startFrame.count && element?.3 == overlay.frameCount.count)
        }
        // Phases shaded with their names and frames (labelled when wide enough), gaps labelled with their seconds.
        for phase in timeline.phases {
            #expect(
                svg.contains(
                    "data-phase=\"\(phase.name)\" data-start-frame=\"\(phase.startFrame.count)\" data-end-frame=\"\(phase.endFrame.count)\""
                ),
                "\(phase.name)"
            )
        }
        #expect(svg.contains(">opening</text>") && svg.contains(">silence</text>") && svg.contains(">closing</text>"))
        for gap in timeline.items where gap.kind == .silence {
            // Wide enough for its label from 20 s on, in a 10-minute session 1,084 px wide.
            let seconds = timeline.sampleRate.seconds(of: gap.frameCount)
            if seconds >= 20 { #expect(svg.contains(">\(Int(seconds.rounded())) s</text>"), "gap \(gap.index)") }
        }
        // Well-formed: Python's XML parser reads it without a complaint.
        let lint = try await ChildProcess.run(
            "/usr/bin/env",
            ["python3", "-c", "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])", folder.path("a.svg")]
        )
        #expect(lint.termination == .exited(0), "python's XML parser reads the SVG: \(lint.standardErrorText)")
    }

    @Test("Text with markup or control characters is escaped; -n keeps a file; only .svg, .png and .html are written")
    func hostileAndRules() async throws {
        let folder = try TemporaryFolder()
        var json = try String(
            contentsOf: Repository.root.appendingPathComponent(ShowCommandTests.timeline),
            encoding: .utf8
        )
        json = json.replacingOccurrences(of: "\"Five seconds\"", with: "\"<b>Five & \\u001b seconds</b>\"")
        let path = folder.path("t.json")
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        let shown = try await renderSession(["show", path, "-o", "-"])
        #expect(shown.status == 0)
        #expect(shown.standardOutput.contains(">&lt;b&gt;Five &amp; \\u{1b} seconds&lt;/b&gt;</text>"))
        #expect(!shown.standardOutputBytes.contains(0x1B))

        let kept = folder.path("kept.svg")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: kept))
        let refused = try await renderSession(["show", path, "-o", kept, "-n"])
        #expect(refused.status != 0 && refused.standardError.hasPrefix("error: "))
        #expect(try String(contentsOfFile: kept, encoding: .utf8) == "mine")

        let gif = try await renderSession(["show", path, "-o", folder.path("x.gif")])
        #expect(gif.status == 64 && gif.standardError.contains("is not .svg, .png or .html"))
        #expect(!FileManager.default.fileExists(atPath: folder.path("x.gif")))
        let embed = try await renderSession(["show", path, "-o", folder.path("x.svg"), "--embed-audio"])
        #expect(embed.status == 64 && embed.standardError.contains("--embed-audio: only a preview page"))
        let table = try await renderSession(["show", path, "--audio", path])
        #expect(table.status == 64 && table.standardError.contains("--audio: only a picture or a page"))
        // A page needs audio: a timeline that is no sidecar has none.
        let page = try await renderSession(["show", path, "-o", folder.path("x.html")])
        #expect(page.status == 65)
        #expect(
            page.standardError
                == "error: Cannot write the preview page of \(path): it needs the rendered file; name it with --audio\n"
        )
        #expect(!FileManager.default.fileExists(atPath: folder.path("x.html")))
    }

    @Test(
        "Noncharacters, bidirectional controls and invisible characters are escaped: the SVG stays well-formed, the table readable"
    )
    func noncharacters() async throws {
        let folder = try TemporaryFolder()
        var json = try String(
            contentsOf: Repository.root.appendingPathComponent(ShowCommandTests.timeline),
            encoding: .utf8
        )
        json = json.replacingOccurrences(
            of: "\"Five seconds\"",
            with: #""Five\uFFFE\uFFFF\uFDD0 seconds \u202Eevil\u200B\u0001""#
        )
        let path = folder.path("t.json")
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        let escapes = #"Five\u{fffe}\u{ffff}\u{fdd0} seconds \u{202e}evil\u{200b}\u{1}"#
        let picture = try await renderSession(["show", path, "-o", folder.path("t.svg")])
        #expect(picture.status == 0, "\(picture.standardError)")
        let svg = try String(contentsOfFile: folder.path("t.svg"), encoding: .utf8)
        #expect(svg.contains(escapes), "the title's escapes")
        #expect(!svg.unicodeScalars.contains { [0xFFFE, 0xFFFF, 0xFDD0, 0x202E, 0x200B, 0x1].contains($0.value) })
        let lint = try await ChildProcess.run(
            "/usr/bin/env",
            ["python3", "-c", "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])", folder.path("t.svg")]
        )
        #expect(lint.termination == .exited(0), "python's XML parser reads the SVG: \(lint.standardErrorText)")
        let table = try await renderSession(["show", path])
        #expect(table.status == 0 && table.standardOutput.contains(escapes), "\(table.standardOutput)")
    }

    /// The PNG's width and height, from its IHDR chunk; `nil` when it is not a PNG.
    static func pngSize(_ data: Data) -> (width: Int, height: Int)? {
        let bytes = [UInt8](data)
        guard bytes.count > 24, bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
            bytes[12..<16] == [0x49, 0x48, 0x44, 0x52]
        else { return nil }
        let number = { (at: Int) in bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (number(16), number(20))
    }

    @Test("PNG through cairo: the scene's size, the same bytes every time, the waveform when there is audio")
    func png() async throws {
        let folder = try TemporaryFolder()
        let audio = try await ShowCommandTests.renderLayered(in: folder)
        let first = try await renderSession(["show", audio, "-o", folder.path("a.png")])
        #expect(first.status == 0 && first.standardOutput == folder.path("a.png") + "\n", "\(first.standardError)")
        let second = try await renderSession(["show", audio + ".timeline.json", "-o", folder.path("b.png")])
        #expect(second.status == 0, "\(second.standardError)")
        let a = try Data(contentsOf: URL(fileURLWithPath: folder.path("a.png")))
        let b = try Data(contentsOf: URL(fileURLWithPath: folder.path("b.png")))
        #expect(a == b, "the sidecar finds the same audio, and the same input draws the same bytes")
        #expect(Self.pngSize(a)! == (1_200, 384))
        // The timeline alone, away from its audio: the lanes only.
        try FileManager.default.copyItem(atPath: audio + ".timeline.json", toPath: folder.path("t.json"))
        let lanes = try await renderSession(["show", folder.path("t.json"), "-o", folder.path("c.png")])
        #expect(lanes.status == 0, "\(lanes.standardError)")
        #expect(Self.pngSize(try Data(contentsOf: URL(fileURLWithPath: folder.path("c.png"))))! == (1_200, 220))
        // An independent reader decodes it whole: ffmpeg turns it into 1200 × 384 RGB pixels.
        let decode = try await ChildProcess.run(
            "/usr/bin/env",
            [
                "ffmpeg", "-v", "error", "-i", folder.path("a.png"), "-f", "rawvideo", "-pix_fmt", "rgb24",
                folder.path("a.rgb"),
            ]
        )
        #expect(decode.termination == .exited(0), "\(decode.standardErrorText)")
        let pixels = try Data(contentsOf: URL(fileURLWithPath: folder.path("a.rgb")))
        #expect(pixels.count == 1_200 * 384 * 3)
        #expect(Set(pixels).count > 64, "more than a blank page")
    }

    @Test(
        "With audio the SVG has the waveform, one point per column each way, each column's extremes as ffmpeg decodes them"
    )
    func waveform() async throws {
        let folder = try TemporaryFolder()
        let audio = try await ShowCommandTests.renderLayered(in: folder)
        let drawn = try await renderSession(["show", audio, "-o", "-"])
        #expect(drawn.status == 0, "\(drawn.standardError)")
        let polygons = drawn.standardOutput.matches(of: #/<polygon class="waveform" points="([^"]*)"/#)
        #expect(polygons.count == 1)
        let points = polygons.first.map { $0.output.1.split(separator: " ") } ?? []
        #expect(points.count == 2 * 1_084)
        #expect(drawn.standardOutput.matches(of: #/<polyline class="loudness" /#).count >= 1)
        // The highest point of the waveform is the file's highest sample, to the pixel's hundredth.
        let (samples, _) = try await FFmpeg.decode(audio)
        let middle = 64.0 + 4 * 34 + 16 + 36
        let highest = points.prefix(1_084).compactMap { Double($0.split(separator: ",")[1]) }.min() ?? 0
        let expected = middle - Double(min(1, samples.max() ?? 0)) * 36
        #expect(abs(highest - expected) <= 0.005, "\(highest) vs \(expected)")
        // The curve's loudest point is the loudest 3 s the render measured (in its timeline), within
        // what sampling at the columns' ends (every 0.56 s) misses: 1 LU is 1.4 pixels.
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: audio + ".timeline.json"))
        )
        let loudest = try #require(timeline.loudness?.maxShortTerm)
        let curves = drawn.standardOutput.matches(of: #/<polyline class="loudness" points="([^"]*)"/#)
        let top = curves.flatMap { $0.output.1.split(separator: " ") }.compactMap {
            Double($0.split(separator: ",")[1])
        }
        let loudnessTop = middle + 36 + 12
        let drawnLoudest = -5 - ((top.min() ?? 0) - loudnessTop) / 64 * 45
        #expect(abs(drawnLoudest - loudest) < 1, "\(drawnLoudest) vs \(loudest) LUFS")
    }

    @Test("The preview page: the audio relative to the page or embedded; a file not the timeline's is refused")
    func page() async throws {
        let folder = try TemporaryFolder()
        let audio = try await ShowCommandTests.renderLayered(in: folder)
        try FileManager.default.createDirectory(atPath: folder.path("pages"), withIntermediateDirectories: true)
        let written = try await renderSession(["show", audio, "-o", folder.path("pages/p.html")])
        #expect(written.status == 0 && written.standardOutput == folder.path("pages/p.html") + "\n")
        let page = try String(contentsOfFile: folder.path("pages/p.html"), encoding: .utf8)
        // The captions the page carries (the fixture clips have words): a track in a data: URL.
        #expect(
            page.contains(
                "<audio id=\"player\" controls preload=\"auto\" src=\"../s.wav\"><track id=\"captions\" kind=\"captions\" label=\"Words\" srclang=\"en\" default src=\"data:text/vtt;base64,"
            )
        )
        #expect(page.contains("<div id=\"transcript\">") && page.contains("<span class=\"word\" data-start-frame=\""))
        #expect(page.contains("<polygon class=\"waveform\""))

        let embedded = try await renderSession(["show", audio, "-o", folder.path("e.html"), "--embed-audio"])
        #expect(embedded.status == 0, "\(embedded.standardError)")
        let inside = try String(contentsOfFile: folder.path("e.html"), encoding: .utf8)
        let base64 = try #require(inside.firstMatch(of: #/src="data:audio/wav;base64,([A-Za-z0-9+\/=]+)"/#)?.output.1)
        #expect(Data(base64Encoded: String(base64)) == (try Data(contentsOf: URL(fileURLWithPath: audio))))

        // The fixture's 5-second timeline with the 10-minute file: refused, nothing written.
        let wrong = try await renderSession([
            "show", ShowCommandTests.timeline, "--audio", audio, "-o", folder.path("w.html"),
        ])
        #expect(wrong.status == 65)
        #expect(wrong.standardError.hasPrefix("error: Cannot draw \(audio): it decodes to 13494600 frames at 22050 Hz"))
        #expect(wrong.standardError.split(separator: "\n").count == 1)
        #expect(!FileManager.default.fileExists(atPath: folder.path("w.html")))
    }

    @Test("batch --preview: a page per session and index.html with a row each, linked, verified")
    func batchPreview() async throws {
        let folder = try TemporaryFolder()
        let batch = try await renderSession([
            "batch", "Fixtures/scripts", "-o", folder.path("out"), "--cache", "Fixtures/cache", "--offline",
            "--preview",
        ])
        #expect(batch.status == 0, "\(batch.standardError)")
        #expect(batch.standardError.contains(", previews in \(folder.path("out/index.html")) (2 verified clean), in "))
        let index = try String(contentsOfFile: folder.path("out/index.html"), encoding: .utf8)
        let rows = index.matches(of: #/<tr class="(clean|problem)" data-session="([^"]+)"><td><a href="([^"]+)">/#)
        #expect(rows.map { String($0.output.2) } == ["edge-cases", "ten-minute-session"])
        #expect(rows.allSatisfy { $0.output.1 == "clean" })
        for row in rows {
            let page = folder.path("out/" + row.output.3)
            let html = try String(contentsOfFile: page, encoding: .utf8)
            #expect(html.contains("src=\"\(row.output.2).wav\""), "\(page)")
        }
        #expect(index.contains("<td>passed</td>"))
    }

    @Test("batch --preview refuses, before any work, a script whose id would make its page the batch's index.html")
    func batchPreviewIndexId() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("scripts"), withIntermediateDirectories: true)
        let script = try String(contentsOfFile: "Fixtures/scripts/ten-minute-session.json", encoding: .utf8)
            .replacingOccurrences(of: #""id": "ten-minute-session""#, with: #""id": "index""#)
        try script.write(toFile: folder.path("scripts/index.json"), atomically: true, encoding: .utf8)
        let arguments = [
            "batch", folder.path("scripts"), "-o", folder.path("out"), "--cache", "Fixtures/cache", "--offline",
        ]
        let refused = try await renderSession(arguments + ["--preview"])
        #expect(refused.status == 65)
        #expect(
            refused.standardError
                == "error: \(folder.path("scripts/index.json")): the id \"index\" would give this session's preview page the name of the batch's index.html; give the script another id, or make no previews\n"
        )
        #expect(!FileManager.default.fileExists(atPath: folder.path("out")), "nothing made")
        let plain = try await renderSession(arguments)
        #expect(plain.status == 0, "without --preview the id is only a file name: \(plain.standardError)")
    }

    @Test("docs/session.svg, which the README shows, is what show draws for the fixture today")
    func documentedPicture() async throws {
        let timeline = try await renderSession([
            "timeline", "Fixtures/scripts/ten-minute-session.json", "--cache", "Fixtures/cache", "--offline", "--seed",
            "7",
            "--ambience", "rain", "--interval-gong", "gong", "--interval-minutes", "5",
        ])
        #expect(timeline.status == 0, "\(timeline.standardError)")
        let drawn = try await renderSession(["show", "-", "-o", "-"], input: Data(timeline.standardOutputBytes))
        let documented = try String(
            contentsOf: Repository.root.appendingPathComponent("docs/session.svg"),
            encoding: .utf8
        )
        #expect(
            drawn.standardOutput == documented,
            "docs/session.svg is stale: make it again with docs/cli.md's command"
        )
    }

    @Test("docs/session.png, the README's picture, is what show draws for the fixture rendered today")
    func documentedPNG() async throws {
        let folder = try TemporaryFolder()
        let audio = try await ShowCommandTests.renderLayered(in: folder)
        let drawn = try await renderSession(["show", audio, "-o", folder.path("s.png")])
        #expect(drawn.status == 0, "\(drawn.standardError)")
        // Compared pixel by pixel, not byte by byte: the lanes, labels and axes must be the same,
        // but the waveform and loudness are drawn from a render, whose last bits differ from one
        // machine to another (a CI machine's render moved 1.6 % of the pixels, 0.4 % by more
        // than a quarter of their range). A stale picture moves more: a lane, a label or a level.
        let drawnPixels = try await FFmpeg.pixels(folder.path("s.png"))
        let documented = try await FFmpeg.pixels(Repository.root.appendingPathComponent("docs/session.png").path)
        #expect(drawnPixels.width == documented.width && drawnPixels.height == documented.height)
        let pixelCount = min(drawnPixels.rgb.count, documented.rgb.count) / 3
        let moved = (0..<pixelCount).count { pixel in
            (0..<3).contains { abs(Int(drawnPixels.rgb[3 * pixel + $0]) - Int(documented.rgb[3 * pixel + $0])) > 64 }
        }
        #expect(
            moved * 100 <= pixelCount,
            "docs/session.png is stale (\(moved) of \(pixelCount) pixels differ): make it again with scripts/docs-pictures"
        )
    }
}
