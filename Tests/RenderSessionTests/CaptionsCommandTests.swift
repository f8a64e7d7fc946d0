import Foundation
import TestSupport
import Testing

/// Why Debian's WebVTT and SubRip parsers cannot be run here, or `nil` when they can.
private let parsersMissing = BrowserSupport.pythonMissing(
    "import webvtt, pysrt",
    install: "no webvtt or pysrt (apt-get install python3-webvtt python3-pysrt)"
)

/// Reads captions with parsers we did not write: Debian's python3-webvtt and python3-pysrt; each
/// cue as [start, end, text] (times as the parser prints them; WebVTT's text with its tags).
private let parse = """
    import json, sys, webvtt, pysrt
    path = sys.argv[1]
    if path.endswith(".vtt"):
        cues = [[c.start, c.end, c.raw_text] for c in webvtt.read(path)]
    else:
        # pysrt.open uses a file mode Python 3.11 refuses; its parser takes the text as well.
        with open(path, encoding="utf-8") as file:
            cues = [[str(c.start), str(c.end), c.text] for c in pysrt.from_string(file.read())]
    print(json.dumps(cues))
    """

@Suite("Captions from the command", .serialized)
struct CaptionsCommandTests {
    static let script = """
        {"id": "words", "category": "test", "title": "Words", "orderIndex": 1, "durationSeconds": 12,
         "interjections": [], "segments": [
           {"id": "a", "phase": "opening", "startSeconds": 0, "text": "Welcome. Take a moment to arrive, and let the weight of your body settle into the chair beneath you."},
           {"id": "b", "phase": "closing", "startSeconds": 8, "text": "Notice the breath."}
         ]}
        """

    @Test(
        "render --captions writes WebVTT with its chapters that ffprobe and a WebVTT parser read at the words' times; captions writes SubRip from the timeline",
        .enabled(
            if: FFmpeg.path != nil && parsersMissing == nil,
            Comment(rawValue: parsersMissing ?? "ffmpeg is not installed")
        )
    )
    func renderAndCaptions() async throws {
        let folder = try TemporaryFolder()
        let script = folder.path("words.json")
        try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
        let render = try await renderSession([
            "render", script, "--cache", folder.path("cache"), "--seed", "1", "-o", folder.path("s.wav"),
            "--timeline", folder.path("s.json"), "--captions", folder.path("s.vtt"),
        ])
        #expect(render.status == 0, "\(render.standardError)")
        #expect(
            render.standardOutput.split(separator: "\n")
                == [folder.path("s.wav"), folder.path("s.json"), folder.path("s.vtt"), folder.path("s.chapters.vtt")]
                .map { Substring($0) }
        )
        let timeline = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.path("s.json"))))
                as? [String: Any]
        )
        let rate = try #require(timeline["sampleRate"] as? Int)
        let items = try #require(timeline["items"] as? [[String: Any]])
        let sentences = items.flatMap { ($0["sentences"] as? [[String: Any]]) ?? [] }
        #expect(
            sentences.map { $0["text"] as? String } == [
                "Welcome.",
                "Take a moment to arrive, and let the weight of your body settle into the chair beneath you.",
                "Notice the breath.",
            ]
        )

        // ffmpeg's WebVTT demuxer: a packet per cue, at each sentence's (or cue's) first word.
        let ffprobe = try #require(FFmpeg.probePath)
        let probed = try await ChildProcess.run(
            ffprobe,
            ["-v", "error", "-show_entries", "packet=pts_time", "-of", "csv=p=0", folder.path("s.vtt")]
        )
        #expect(probed.status == 0, "\(probed.standardErrorText)")
        let probe = probed.standardOutputText
        let starts = probe.split(separator: "\n").compactMap { Double($0) }
        #expect(starts.count == 4, "two lines of 42 characters cannot hold the long sentence: \(probe)")
        let firstWords = sentences.map { Double($0["startFrame"] as! Int) / Double(rate) }
        for start in firstWords {
            #expect(starts.contains { $0 >= start && $0 - start < 0.001 }, "a cue starts at \(start) s: \(starts)")
        }

        // Debian's WebVTT parser: the cues' times and text, tags and all.
        let parsed = try await ChildProcess.run(BrowserSupport.python, ["-c", parse, folder.path("s.vtt")])
        #expect(parsed.status == 0, "\(parsed.standardErrorText)")
        let cues = try #require(try JSONSerialization.jsonObject(with: Data(parsed.standardOutput)) as? [[String]])
        #expect(cues.count == 4)
        #expect(cues.first?[2] == "Welcome.")
        #expect(cues.last?[2].hasPrefix("Notice <00:00:") == true, "\(cues.last ?? [])")
        #expect(
            cues.allSatisfy { cue in
                cue[2].split(separator: "\n").allSatisfy { line in
                    line.replacing(/<[0-9:.]+>/, with: "").count <= 42
                }
            }
        )

        let chapters = try String(contentsOfFile: folder.path("s.chapters.vtt"), encoding: .utf8)
        #expect(chapters.hasPrefix("WEBVTT\n\n00:00:00.000 --> "))
        #expect(chapters.contains("\nopening\n") && chapters.contains("\nclosing\n"))

        // From the timeline alone, as SubRip, read by Debian's SubRip parser.
        let captions = try await renderSession(["captions", folder.path("s.json"), "-o", folder.path("s.srt")])
        #expect(captions.status == 0, "\(captions.standardError)")
        #expect(captions.standardOutput == folder.path("s.srt") + "\n")
        let srt = try await ChildProcess.run(BrowserSupport.python, ["-c", parse, folder.path("s.srt")])
        let srtCues = try #require(try JSONSerialization.jsonObject(with: Data(srt.standardOutput)) as? [[String]])
        let untagged = cues.map { $0[2].replacing(/<[0-9:.]+>/, with: "") }
        #expect(srtCues.map { $0[2] } == untagged)
        #expect(srtCues.map { $0[0] } == cues.map { $0[0].replacing(".", with: ",") })

        // The same captions printed, and refusals in one line.
        let printed = try await renderSession(["captions", folder.path("s.json")])
        #expect(printed.standardOutput == (try String(contentsOfFile: folder.path("s.vtt"), encoding: .utf8)))
        let wrong = try await renderSession(["captions", folder.path("s.json"), "-o", folder.path("s.txt")])
        #expect(wrong.status == 64)
        #expect(
            wrong.standardError.hasPrefix(
                "error: -o: cannot write captions to \(folder.path("s.txt")); the name must end in .vtt, .srt or .json"
            ),
            "\(wrong.standardError)"
        )
        let wrongRender = try await renderSession([
            "render", script, "--cache", folder.path("cache"), "-o", folder.path("t.wav"), "--captions", "t.txt",
        ])
        #expect(
            wrongRender.status == 64
                && wrongRender.standardError.hasPrefix("error: --captions: cannot write captions to t.txt")
        )
        #expect(!FileManager.default.fileExists(atPath: folder.path("t.wav")), "refused before any work")

        // show --words: a row per word under its item, at the timeline's frames.
        let shown = try await renderSession(["show", folder.path("s.json"), "--words", "--width", "100"])
        #expect(shown.status == 0, "\(shown.standardError)")
        let wordRows = shown.standardOutput.split(separator: "\n").filter { $0.contains(" word ") }
        let words = items.flatMap { ($0["words"] as? [[String: Any]]) ?? [] }
        #expect(wordRows.count == words.count && words.count >= 18, "\(shown.standardOutput)")
        for (row, word) in zip(wordRows, words) {
            let milliseconds = ((word["startFrame"] as! Int) * 1_000 + rate / 2) / rate
            let clock = String(format: "0:%02d.%03d", milliseconds / 1_000, milliseconds % 1_000)
            #expect(row.hasSuffix(" word           \(word["text"] as! String)"), "\(row)")
            #expect(row.contains(clock), "\(row) starts at \(clock)")
        }
        // batch --captions: captions beside each session's audio, kept by the manifest like its
        // other files (one missing is made again), the same cues as the render's.
        let scripts = folder.path("scripts")
        try FileManager.default.createDirectory(atPath: scripts, withIntermediateDirectories: true)
        try Self.script.write(toFile: scripts + "/words.json", atomically: true, encoding: .utf8)
        let batch = [
            "batch", scripts, "-o", folder.path("batch"), "--cache", folder.path("cache"), "--offline", "--captions",
            "vtt", "--json",
        ]
        let batched = try await renderSession(batch)
        #expect(batched.status == 0, "\(batched.standardError)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(batched.standardOutputBytes)) as? [String: Any]
        )
        let session = try #require((summary["sessions"] as? [[String: Any]])?.first)
        #expect(session["captions"] as? String == folder.path("batch/words.wav.vtt"))
        let batchCues = try await ChildProcess.run(
            BrowserSupport.python,
            ["-c", parse, folder.path("batch/words.wav.vtt")]
        )
        #expect(
            (try JSONSerialization.jsonObject(with: Data(batchCues.standardOutput)) as? [[String]])?.map { $0[2] }
                == cues.map { $0[2] },
            "\(batchCues.standardErrorText)"
        )
        #expect(FileManager.default.fileExists(atPath: folder.path("batch/words.wav.chapters.vtt")))
        try FileManager.default.removeItem(atPath: folder.path("batch/words.wav.vtt"))
        let again = try await renderSession(batch)
        #expect(
            again.standardError.contains("words.wav.vtt: no such file; rendering it again"),
            "\(again.standardError)"
        )
        #expect(FileManager.default.fileExists(atPath: folder.path("batch/words.wav.vtt")))
        let wrongBatch = try await renderSession(["batch", scripts, "-o", folder.path("b2"), "--captions", "txt"])
        #expect(wrongBatch.status == 64 && wrongBatch.standardError.contains("--captions: txt is not vtt, srt or json"))

        let drawn = try await renderSession(["show", folder.path("s.json"), "--words", "-o", folder.path("s.svg")])
        #expect(drawn.status == 64 && drawn.standardError.hasPrefix("error: --words: only the table lists words"))
    }
}
