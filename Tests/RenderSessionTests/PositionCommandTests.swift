import Foundation
import TestSupport
import Testing

/// `render-session position`: exact JSON on stdout, one error line, and the exit statuses.
@Suite("The position command", .serialized)
struct PositionCommandTests {
    static let timeline = "Fixtures/positions/five-seconds.timeline.json"
    static let queue = "Fixtures/positions/queue.json"

    @Test(
        "--at prints the item, offset, phase and kind as one line of JSON",
        arguments: [
            (
                [timeline, "--at", "0"],
                #"{"itemIndex":0,"kind":"segment","offsetFrames":0,"offsetSeconds":0,"phase":"opening"}"#
            ),
            // Under the gong (0.8–2.8 s): the narration item beneath it.
            (
                [timeline, "--at", "1.3"],
                #"{"itemIndex":1,"kind":"silence","offsetFrames":300,"offsetSeconds":0.3,"phase":"opening"}"#
            ),
            (
                [timeline, "--at", "3.6"],
                #"{"itemIndex":3,"kind":"interjection","offsetFrames":100,"offsetSeconds":0.1,"phase":"body"}"#
            ),
            // The end is the last item's end.
            (
                [timeline, "--at", "5"],
                #"{"itemIndex":4,"kind":"bell","offsetFrames":1250,"offsetSeconds":1.25,"phase":"body"}"#
            ),
            (
                [queue, "--at", "12.04"],
                #"{"itemIndex":1,"kind":"silence","offsetFrames":72320,"offsetSeconds":9.04,"phase":"opening","timelineIndex":1}"#
            ),
            // m:ss and h:mm:ss, as ffmpeg's -ss takes them.
            (
                [queue, "--at", "0:12.04"],
                #"{"itemIndex":1,"kind":"silence","offsetFrames":72320,"offsetSeconds":9.04,"phase":"opening","timelineIndex":1}"#
            ),
            (
                [timeline, "--at", "0:00:03.6"],
                #"{"itemIndex":3,"kind":"interjection","offsetFrames":100,"offsetSeconds":0.1,"phase":"body"}"#
            ),
            ([timeline, "--item", "2", "--offset", "0:0.1"], #"{"elapsedFrames":1600,"elapsedSeconds":1.6}"#),
            ([timeline, "--item", "2", "--offset", "0.1"], #"{"elapsedFrames":1600,"elapsedSeconds":1.6}"#),
            ([timeline, "--item", "4", "--offset", "1.25"], #"{"elapsedFrames":5000,"elapsedSeconds":5}"#),
            ([queue, "--item", "1", "--offset", "2.5"], #"{"elapsedSeconds":5.5}"#),
        ]
    )
    func answers(arguments: [String], json: String) async throws {
        let result = try await renderSession(["position"] + arguments)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == json + "\n")
        #expect(result.standardError.isEmpty)
    }

    @Test("- reads the file from standard input")
    func standardInput() async throws {
        let data = try Data(contentsOf: Repository.root.appendingPathComponent(Self.queue))
        let result = try await renderSession(["position", "-", "--at", "3"], input: data)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.standardOutput
                == #"{"itemIndex":1,"kind":"silence","offsetFrames":0,"offsetSeconds":0,"phase":"opening","timelineIndex":1}"#
                + "\n"
        )
    }

    @Test("A queue that breaks its shape is one error line naming it, exit 65")
    func brokenQueue() async throws {
        let text = try String(contentsOf: Repository.root.appendingPathComponent(Self.queue), encoding: .utf8)
        let cases = [
            (
                text.replacingOccurrences(of: #""index": 1,"#, with: #""index": 5,"#),
                "error: Cannot read queue <stdin>: items[1].index: 5 is not the item's position 1\n"
            ),
            (
                text.replacingOccurrences(of: #""sourceSampleRate": 8000"#, with: #""sourceSampleRate": 100"#),
                "error: Cannot read queue <stdin>: items[1].sourceSampleRate: 100 Hz is outside 1000…768000 Hz\n"
            ),
            (
                text.replacingOccurrences(of: #""schemaVersion": 1"#, with: #""schemaVersion": 2"#),
                "error: Cannot read queue <stdin>: schemaVersion 2 is not supported; this version reads 1\n"
            ),
        ]
        for (json, error) in cases {
            let result = try await renderSession(["position", "-", "--at", "0"], input: Data(json.utf8))
            #expect(result.status == 65)
            #expect(result.standardOutput.isEmpty)
            #expect(result.standardError == error)
        }
    }

    @Test(
        "A value outside the session is one error line with the range, exit 65",
        arguments: [
            (
                [timeline, "--at", "700"],
                "\(timeline): --at: 700 is past the session's end; positions run from 0 to 5 s"
            ),
            (
                [timeline, "--at", "-0.5"],
                "\(timeline): --at: -0.5 is before the session's start; positions run from 0 to 5 s"
            ),
            (
                [timeline, "--item", "5", "--offset", "0"],
                "\(timeline): --item: 5 is not an item; items run from 0 to 4"
            ),
            (
                [queue, "--item", "1", "--offset", "9.5"],
                "\(queue): --offset: 9.5 is past item 1's end; offsets in it run from 0 to 9.043125 s"
            ),
            (
                ["no-such.json", "--at", "1"],
                "Cannot read timeline no-such.json: no such file"
            ),
        ]
    )
    func outOfRange(arguments: [String], line: String) async throws {
        let result = try await renderSession(["position"] + arguments)
        #expect(result.status == 65)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError == "error: \(line)\n")
    }

    @Test(
        "Anything but exactly one of the two forms is a usage error, exit 64",
        arguments: [
            (
                ["--at", "1", "--item", "0", "--offset", "0"],
                "error: Give either --at or --item with --offset, not both\n"
            ),
            (["--item", "0"], "error: --item needs --offset, the time into the item\n"),
            (["--offset", "1"], "error: --offset needs --item, the item it is into\n"),
            ([], "error: Give --at SECONDS, or --item N with --offset SECONDS\n"),
            (
                ["--at", "x"],
                "error: The value 'x' is invalid for '--at <[[h:]m:]s>': a time is seconds, m:ss or h:mm:ss (150, 2:30, 1:02:03.5)\n"
            ),
            (
                ["--at", "2:60"],
                "error: The value '2:60' is invalid for '--at <[[h:]m:]s>': a time is seconds, m:ss or h:mm:ss (150, 2:30, 1:02:03.5)\n"
            ),
            (
                ["--at", "1:2:3:4"],
                "error: The value '1:2:3:4' is invalid for '--at <[[h:]m:]s>': a time is seconds, m:ss or h:mm:ss (150, 2:30, 1:02:03.5)\n"
            ),
        ]
    )
    func usage(arguments: [String], message: String) async throws {
        let result = try await renderSession(["position", Self.timeline] + arguments)
        #expect(result.status == 64)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.hasPrefix(message), "\(result.standardError)")
    }
}
