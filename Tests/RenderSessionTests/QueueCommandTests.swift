import Foundation
import SessionAudio
import SessionTimeline
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
            "Wrote the queue of ten-minute-session: 11 items in 11 files, 10:12.0, gains in queue.json (the render's, speech −16 LUFS, masterGainDb 5.86), drift at most 0.059 ms, seed 7, in "
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
        "The app's mix from queue.json (each file at its gain, where it starts) sounds like the render: speech, bed and gong each within 1 LU",
        .requiresFFmpeg
    )
    func mixMatchesRender() async throws {
        let folder = try TemporaryFolder()
        let environment = LayeredCommandTests.environment(folder)
        let common = [
            "Fixtures/scripts/ten-minute-session.json", "--cache", "Fixtures/cache", "--offline", "--seed", "7",
            "--ambience", "rain", "--start-gong", "gong",
        ]
        async let rendered = renderSession(
            ["render"] + common + ["-o", folder.path("render.wav"), "--timeline", folder.path("render.json")],
            environment: environment
        )
        async let queued = renderSession(["queue"] + common + ["-o", folder.path("queue")], environment: environment)
        let (render, queue) = try await (rendered, queued)
        #expect(render.status == 0 && queue.status == 0, "\(render.standardError)\(queue.standardError)")
        #expect(
            queue.standardError.contains(", gains in queue.json (the render's, speech −16 LUFS"),
            "the summary says where the levels are: \(queue.standardError)"
        )
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder.path("render.json")))
        )
        let json = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: folder.path("queue/queue.json")))
            )
                as? [String: Any]
        )
        let mix = try await Self.appMix(of: json, in: folder.path("queue"), channels: timeline.channelCount.count)
        let rate = Double(timeline.sampleRate.hertz)

        // Speech: its items' spans. The bed: the middle of the longest gap, away from its fades and
        // ducking. The gong: its strike, before the first word.
        let speech = timeline.items.filter { $0.clip != nil }.map {
            $0.startFrame.count..<($0.startFrame + $0.frameCount).count
        }
        let gap = try #require(timeline.items.filter { $0.kind == .silence }.max { $0.frameCount < $1.frameCount })
        let bedStart = Double(gap.startFrame.count + gap.frameCount.count / 4) / rate
        let gong = try #require(timeline.overlays.first { $0.kind == .gong })
        let firstWord = try #require(speech.first { $0.lowerBound >= gong.startFrame.count })
        let gongSpan = Double(gong.startFrame.count) / rate
        let gongLength = min(3, Double(firstWord.lowerBound - gong.startFrame.count) / rate)
        // Each element's level: the speech's loudness, the bed's and the gong's against it, LU.
        func levels(_ path: String) async throws -> [(String, Double)] {
            async let spoken = FFmpeg.ebur128(path, spans: speech)
            async let bed = FFmpeg.ebur128(path, from: bedStart, duration: 20)
            async let strike = FFmpeg.ebur128(path, from: gongSpan, duration: gongLength)
            let (voice, rain, ring) = try await (spoken, bed, strike)
            return [
                ("speech", voice.integratedLoudness),
                ("bed against the speech", rain.integratedLoudness - voice.integratedLoudness),
                ("gong against the speech", try #require(ring.loudestMomentary) - voice.integratedLoudness),
            ]
        }
        async let renderLevels = levels(folder.path("render.wav"))
        async let appLevels = levels(mix)
        for ((element, rendered), (_, app)) in zip(try await renderLevels, try await appLevels) {
            #expect(abs(app - rendered) <= 1, "\(element): the render's \(rendered), the app's \(app)")
        }
    }

    /// The app's mix, as ffmpeg makes it from `queue` (queue.json's object) in `folder`: every
    /// item and overlay at its gain, placed at its start, summed (`amix` with `normalize=0`), the
    /// bed looped for its length; fades and ducking left out. A 32-bit float WAV at the
    /// timeline's rate with `channels`, a mono file copied to each channel as the render does.
    static func appMix(of queue: [String: Any], in folder: String, channels: Int) async throws -> String {
        let rate = try #require(queue["sampleRate"] as? Int)
        var inputs: [String] = []
        var chains: [String] = []
        func add(_ file: String, gain: Double, startFrame: Int, frameCount: Int?) throws {
            let path = folder + "/" + file
            let ownChannels = try AudioFileDecoder(path: path).channelCount.count
            let layout =
                channels == ownChannels
                ? "anull"
                : ownChannels == 1
                    ? "pan=\(channels == 1 ? "mono" : "stereo")|"
                        + (0..<channels).map { "c\($0)=c0" }.joined(separator: "|")
                    : "pan=mono|c0="
                        + (0..<ownChannels).map { "\(1 / Double(ownChannels))*c\($0)" }.joined(separator: "+")
            inputs += (frameCount == nil ? [] : ["-stream_loop", "-1"]) + ["-i", path]
            let trim = frameCount.map { ",atrim=end_sample=\($0)" } ?? ""
            chains.append(
                "[\(chains.count):a]aresample=\(rate),\(layout)\(trim),volume=\(gain),adelay=delays=\(startFrame)S:all=1[m\(chains.count)]"
            )
        }
        for item in try #require(queue["items"] as? [[String: Any]]) where item["kind"] as? String != "silence" {
            let start = Int((try #require(item["startSeconds"] as? Double) * Double(rate)).rounded())
            try add(
                try #require(item["file"] as? String),
                gain: try #require(item["gain"] as? Double),
                startFrame: start,
                frameCount: nil
            )
        }
        for overlay in try #require(queue["overlays"] as? [[String: Any]]) {
            let loops = overlay["loop"] as? Bool == true
            try add(
                try #require(overlay["file"] as? String),
                gain: try #require(overlay["gain"] as? Double),
                startFrame: try #require(overlay["startFrame"] as? Int),
                frameCount: loops ? try #require(overlay["frameCount"] as? Int) : nil
            )
        }
        let output = folder + "/../app-mix.wav"
        let graph =
            chains.joined(separator: ";") + ";" + (0..<chains.count).map { "[m\($0)]" }.joined()
            + "amix=inputs=\(chains.count):normalize=0:duration=longest"
        let run = try await ChildProcess.run(
            try #require(FFmpeg.path),
            ["-hide_banner", "-nostats", "-nostdin", "-y"] + inputs
                + ["-filter_complex", graph, "-c:a", "pcm_f32le", output]
        )
        #expect(run.status == 0, "\(run.standardErrorText.suffix(2_000))")
        return output
    }

    @Test(
        "Encodings need --reencode; a queue cannot go to standard output",
        arguments: [
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
