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
        let audio = folder.path("s.wav")
        let render = try renderSession([
            "render", "Fixtures/scripts/ten-minute-session.json", "--cache", "Fixtures/cache", "--offline", "--seed",
            "7",
            "--ambience", "rain", "--interval-gong", "gong", "--interval-minutes", "5",
            "-o", audio, "--timeline", audio + ".timeline.json",
        ])
        #expect(render.status == 0, "\(render.standardError)")
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
