import Foundation
import TestSupport
import Testing

/// `render-session queue`: the folder it writes, what it prints, and what it refuses.
@Suite("The queue command", .serialized)
struct QueueCommandTests {
    @Test("queue writes the clips, the 8 kHz silences and queue.json; prints the JSON's path")
    func tenMinuteSession() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession([
            "queue", "Fixtures/scripts/ten-minute-session.json", "-o", folder.path("queue"), "--cache",
            "Fixtures/cache", "--offline", "--seed", "7",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == folder.path("queue/queue.json") + "\n")
        let summary =
            "Wrote the queue of ten-minute-session: 11 items in 11 files, 10:12.0, drift at most 0.059 ms, seed 7, in "
        #expect(
            result.standardError.hasPrefix(summary) && result.standardError.hasSuffix(" → \(folder.path("queue"))\n")
        )
        let json = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: folder.url.appendingPathComponent("queue/queue.json"))
            )
                as? [String: Any]
        )
        let items = try #require(json["items"] as? [[String: Any]])
        #expect(
            items.map { $0["kind"] as? String } == [
                "segment", "silence", "segment", "silence", "interjection", "silence", "interjection", "silence",
                "segment",
                "silence", "bell",
            ]
        )
        #expect(
            items[1]["sourceSampleRate"] as? Int == 8_000 && items[1]["file"] as? String == "silence-8000hz-825146.wav"
        )
        #expect(json["kind"] as? String == "queue" && json["totalFrames"] as? Int == 13_494_600)
        // The keepalive the app loops alongside (seed 000: looped silence at 0.01): one second of
        // digital silence at 8 kHz, in the folder.
        let keepalive = try #require(json["keepalive"] as? [String: Any])
        #expect(
            keepalive["file"] as? String == "keepalive-silence-8000hz.wav" && keepalive["volume"] as? Double == 0.01
        )
        #expect(keepalive["loop"] as? Bool == true && keepalive["sourceFrames"] as? Int == 8_000)
        let silence = try LayeredCommandTests.decodedSamples(folder.path("queue/keepalive-silence-8000hz.wav"))
        #expect(silence.count == 8_000 && silence.allSatisfy { $0 == 0 })
        // The category, which the seed app's crash recovery persists (guidedCategory).
        #expect(json["category"] as? String == "reactivity" && json["scriptId"] as? String == "ten-minute-session")
        #expect(try #require(json["worstDriftSeconds"] as? Double) <= 0.5 / 8_000)
    }

    @Test("Clips at other rates and channels keep their own; the queue still ends where the timeline does")
    func otherRates() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession([
            "queue", "Fixtures/scripts/edge-cases.json", "-o", folder.path("queue"), "--cache", "Fixtures/cache",
            "--offline", "--seed", "3",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let json = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: folder.url.appendingPathComponent("queue/queue.json"))
            )
                as? [String: Any]
        )
        let items = try #require(json["items"] as? [[String: Any]])
        let rates = Set(items.compactMap { $0["sourceSampleRate"] as? Int })
        #expect(rates.count >= 3, "8 kHz silences and clips at two or more rates: \(rates)")
        let duration = try #require(json["durationSeconds"] as? Double)
        let timeline = try #require(json["timelineDurationSeconds"] as? Double)
        // Half an 8 kHz frame, plus half a 22,050 Hz frame for each clip in a row at another rate.
        #expect(abs(duration - timeline) <= 0.5 / 8_000 + Double(items.count) * 0.5 / 22_050)
        for item in items {
            let path = folder.path("queue/\(try #require(item["file"] as? String))")
            #expect(try await FFmpeg.decodedFrameCount(path) == item["sourceFrames"] as? Int64, "\(path)")
        }

        // Each clip's words in its own file's frames: its marks sidecar's, within the frame or
        // two a trip through the output's rate and back rounds away.
        var compared = 0
        for item in items {
            guard let text = item["text"] as? String, let words = item["words"] as? [[String: Any]],
                let clip = try FixtureClip.all().first(where: { $0.text == text })
            else { continue }
            let sidecar = try #require(
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: Repository.cache.appendingPathComponent("\(clip.key).marks.json"))
                ) as? [String: Any]
            )
            let own = try #require(sidecar["words"] as? [[String: Any]])
            #expect(words.map { $0["text"] as? String } == own.map { $0["text"] as? String })
            for (word, expected) in zip(words, own) {
                let gap = abs((word["startFrame"] as! Int) - (expected["startFrame"] as! Int))
                #expect(gap <= 2, "\(text): \(word) against \(expected) at \(clip.sampleRate) Hz")
            }
            compared += 1
        }
        #expect(compared >= 4, "clips at 16, 22.05, 24 and 44.1 kHz have their words")
    }

    @Test(
        "Gains and encodings need --reencode; a queue cannot go to standard output",
        arguments: [
            (
                ["-o", "out/never", "--loudness", "-16"],
                "--loudness: copied clips cannot carry the gains loudness needs; add --reencode, or leave --loudness out"
            ),
            (
                ["-o", "out/never", "--format", "mp3"],
                "--format: the queue's clips are the cache's files; add --reencode to encode them"
            ),
            (
                ["-o", "out/never", "--bitrate", "64"],
                "--bitrate: the queue's clips are the cache's files; add --reencode to encode them"
            ),
            (["-o", "-"], "--output: a queue is a folder of files; standard output cannot hold one"),
        ]
    )
    func refusals(arguments: [String], message: String) async throws {
        let result = try await renderSession(
            ["queue", "Fixtures/scripts/ten-minute-session.json", "--offline"] + arguments
        )
        #expect(result.status == 64)
        #expect(result.standardError.hasPrefix("error: \(message)\n"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: Repository.root.appendingPathComponent("out/never").path))
    }
}
