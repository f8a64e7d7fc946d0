import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

@Suite("The on-device queue", .serialized)
struct QueueExportTests {
    /// A file's frames as 16-bit values rounded as the WAV writer rounds, with its rate, through
    /// libmpg123/libsndfile.
    static func decode(_ path: String) throws -> (values: [Int16], rate: SampleRate) {
        let decoder = try AudioFileDecoder(path: path)
        var values: [Int16] = []
        var block: [Float] = []
        while case let frames = try decoder.read(into: &block, maximumFrames: 65_536), frames > 0 {
            values.append(
                contentsOf: block[0..<(frames * decoder.channelCount.count)].map {
                    Int16(max(-32_768, min(32_767, ($0 * 32_768).rounded(.toNearestOrEven))))
                }
            )
        }
        return (values, decoder.sampleRate)
    }

    /// Where two runs of samples first differ, for a failure's message (comparing whole arrays in
    /// `#expect` would make the testing library diff a million values).
    static func firstDifference(_ a: [Int16], _ b: ArraySlice<Int16>) -> String {
        guard let index = (0..<min(a.count, b.count)).first(where: { a[$0] != b[b.startIndex + $0] }) else {
            return a.count == b.count ? "none" : "lengths \(a.count) and \(b.count)"
        }
        return "frame \(index): \(a[index]) vs \(b[b.startIndex + index])"
    }

    @Test("Queue vs render: every clip sample-identical where the timeline puts it, silences zero, no drift")
    func matchesRender() async throws {
        let folder = try TemporaryFolder()
        let pipeline = RenderTests.pipeline(audio: folder.path("s.wav"))
        let script = try ScriptFile.load(Repository.script("ten-minute-session").path)
        let timeline = try await pipeline.run(script).timeline
        let queue = try await pipeline.writeQueue(script, to: folder.path("queue"), reencode: false).queue
        #expect(try folder.contents() == ["queue", "s.wav"], "no temporary folder is left")

        let render = try Self.decode(folder.path("s.wav")).values
        #expect(queue.items.count == timeline.items.count)
        var clock = queue.clock
        var concatenated: Int64 = 0
        for item in queue.items {
            let path = folder.path("queue/\(item.file)")
            let placed = timeline.items[item.timelineIndex]
            // Where the queue starts the item, against where the timeline does: half an 8 kHz frame.
            let drift = clock.elapsedTicks - clock.ticks(of: placed.startFrame, at: timeline.sampleRate)
            #expect(abs(drift) * 16_000 <= clock.ticksPerSecond, "item \(item.index) starts on time")
            clock.advance(by: item.sourceFrames, at: item.sourceSampleRate)

            let (values, rate) = try Self.decode(path)
            #expect(rate == item.sourceSampleRate && Int64(values.count) == item.sourceFrames.count, "\(item.file)")
            #expect(
                try await FFmpeg.decodedFrameCount(path) == item.sourceFrames.count,
                "ffmpeg agrees on \(item.file)"
            )
            concatenated += timeline.sampleRate.frames(converting: item.sourceFrames, from: rate).count
            let range = Int(placed.startFrame.count)..<Int((placed.startFrame + placed.frameCount).count)
            switch item.origin {
            case .silence:
                #expect(values.allSatisfy { $0 == 0 } && rate == 8_000, "\(item.file) is 8 kHz digital zero")
            case .copied(let source, _):
                #expect(
                    FileManager.default.contentsEqual(atPath: path, andPath: source),
                    "\(item.file) is the cache's bytes"
                )
                // The render fades a clip's edge in or out over 5 ms when it is loud (a declick);
                // the queue's file is the clip as it is. Between the edges: the same samples.
                let edge = Int((Double(timeline.sampleRate.hertz) * ClipStream.fadeDuration).rounded())
                let inner = edge..<(values.count - edge)
                let same =
                    Array(values[inner]) == Array(render[range][(range.lowerBound + edge)..<(range.upperBound - edge)])
                #expect(same, "\(item.file) is the render's samples at its start")
                // Through the renderer's own clip stream, the queue's file gives every sample.
                var fromQueue = placed
                fromQueue.editSource { $0.path = path }
                let streamed = try expectedPCM16(of: fromQueue, in: timeline) == Array(render[range])
                #expect(streamed, "\(item.file), streamed as the renderer streams it, is the render's samples")
            case .rendered:
                let same = values == Array(render[range])
                #expect(
                    same,
                    "\(item.file) (the built-in bell) is the render's samples: \(Self.firstDifference(values, render[range]))"
                )
            }
        }
        // Resampled to 22,050 Hz and put end to end: the render's length, ±1 frame per 8 kHz item.
        let silences = Int64(queue.items.filter { $0.kind == .silence }.count)
        #expect(abs(concatenated - timeline.totalFrames.count) <= silences)
        #expect(queue.worstDriftSeconds <= 0.5 / 8_000)
        #expect(
            try folder.contents(of: "queue") == [
                "001-opening.mp3", "003-teachings.mp3", "005-interjection.mp3", "007-interjection.mp3",
                "009-closing.mp3", "011-bell.wav", "keepalive-silence-8000hz.wav", "queue.json",
                "silence-8000hz-1631891.wav",
                "silence-8000hz-542062.wav", "silence-8000hz-599490.wav", "silence-8000hz-630133.wav",
                "silence-8000hz-825146.wav",
            ]
        )
        let json = try JSONSerialization.jsonObject(
            with: Data(contentsOf: folder.url.appendingPathComponent("queue/queue.json"))
        )
        let items = try #require((json as? [String: Any])?["items"] as? [[String: Any]])
        #expect(items.map { $0["file"] as? String } == queue.items.map(\.file))
    }

    @Test("Re-encoded with loudness: each clip at the session's rate and its gain, in the format asked for")
    func reencoded() async throws {
        let folder = try TemporaryFolder()
        var pipeline = RenderTests.pipeline(sound: SoundSettings())
        pipeline.output.format = .mp3
        let script = try ScriptFile.load(Repository.script("ten-minute-session").path)
        let queue = try await pipeline.writeQueue(script, to: folder.path("queue"), reencode: true).queue
        #expect(
            queue.items.filter { $0.kind != .silence }.map(\.file) == [
                "001-opening.mp3", "003-teachings.mp3", "005-interjection.mp3", "007-interjection.mp3",
                "009-closing.mp3", "011-bell.mp3",
            ]
        )
        for item in queue.items where item.kind != .silence {
            let path = folder.path("queue/\(item.file)")
            #expect(item.origin == .rendered && item.sourceSampleRate == 22_050)
            #expect(try await FFmpeg.decodedFrameCount(path) == item.sourceFrames.count, "\(item.file) decodes exactly")
        }
        // The opening clip measures −21.7 LUFS in the cache; re-encoded it is brought to the −16
        // target, less what the limiter takes off its peaks under the MP3's lower ceiling (0.5 dB
        // of room for the codec, docs/formats.md): about a decibel.
        let opening = try await FFmpeg.ebur128(folder.path("queue/001-opening.mp3"))
        #expect(abs(opening.integratedLoudness - -16) < 1.5, "\(opening.integratedLoudness) LUFS")
        #expect(opening.truePeakUpperBoundDecibels <= -1, "\(opening.truePeakDecibels) dBTP")
    }

    @Test("With loudness, the copied clips are the cache's bytes and queue.json carries the render's gains")
    func gainsForCopiedClips() async throws {
        let folder = try TemporaryFolder()
        let pipeline = RenderTests.pipeline(sound: SoundSettings())
        let script = try ScriptFile.load(Repository.script("ten-minute-session").path)
        let (queue, outcome) = try await pipeline.writeQueue(script, to: folder.path("queue"), reencode: false)
        let timeline = outcome.timeline
        let loudness = try #require(timeline.loudness)
        #expect(queue.loudness == QueueLoudness(target: -16, anchor: .speech, inFiles: false))
        for item in queue.items where item.kind != .silence {
            let placed = timeline.items[item.timelineIndex]
            var expected = placed.gain
            if placed.clip != nil {
                // The speech anchor's gain makes up for the render's limiter, which the app has not.
                expected *= pow(10, -(loudness.speechGain ?? 0) / 20)
            }
            // A leveled clip plays as it is: less what the render's leveler takes off it.
            if let source = placed.source, loudness.speechLeveling, placed.clip != nil,
                let raw = source.loudness, let leveled = source.leveledLoudness
            {
                expected *= pow(10, (leveled - raw) / 20)
            }

            #expect(abs(item.gain - expected) <= 1e-9 * expected, "\(item.file): \(item.gain) against \(expected)")
            if case .copied(let path, _) = item.origin {
                #expect(
                    try Data(contentsOf: URL(fileURLWithPath: path))
                        == Data(contentsOf: folder.url.appendingPathComponent("queue/\(item.file)")),
                    "\(item.file) is the cache's bytes"
                )
            }
        }
        #expect(queue.items.contains { $0.kind == .segment && $0.gain > 1 }, "the cache's clips are under −16 LUFS")
        let json = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: folder.url.appendingPathComponent("queue/queue.json"))
            ) as? [String: Any]
        )
        let master = try #require(json["masterGainDb"] as? Double)
        #expect(master > 0 && master == queue.masterGainDecibels)
        for item in try #require(json["items"] as? [[String: Any]]) {
            let gain = try #require(item["gain"] as? Double)
            let volume = try #require(item["volume"] as? Double)
            #expect(abs(try #require(item["gainDb"] as? Double) - 20 * log10(gain)) <= 0.005)
            #expect(volume <= 1 && abs(volume - gain / pow(10, master / 20)) <= 1e-12)
        }
    }

    @Test("A folder of the user's is never replaced; a queue folder is, whole, unless told not to")
    func destinations() async throws {
        let folder = try TemporaryFolder()
        let script = try ScriptFile.load(Repository.script("ten-minute-session").path)
        let pipeline = RenderTests.pipeline()
        try FileManager.default.createDirectory(atPath: folder.path("mine"), withIntermediateDirectories: false)
        try Data("keep".utf8).write(to: folder.url.appendingPathComponent("mine/notes.txt"))
        let refused = await #expect(throws: SessionError.self) {
            try await pipeline.writeQueue(script, to: folder.path("mine"), reencode: false)
        }
        #expect(
            refused?.lines == [
                "Cannot write the queue to \(folder.path("mine")): it holds notes.txt and no queue.json of a queue; name a new or empty folder"
            ]
        )
        #expect(try folder.contents(of: "mine") == ["notes.txt"])

        try await pipeline.writeQueue(script, to: folder.path("q"), reencode: false)
        let written = try folder.contents(of: "q")
        try Data("stale".utf8).write(to: folder.url.appendingPathComponent("q/001-opening.mp3"))
        try await pipeline.writeQueue(script, to: folder.path("q"), reencode: false)
        #expect(try folder.contents(of: "q") == written)
        #expect(
            try Data(contentsOf: folder.url.appendingPathComponent("q/001-opening.mp3")) != Data("stale".utf8),
            "the old queue was replaced whole"
        )
        #expect(try folder.contents() == ["mine", "q"], "nothing is left beside it")

        // A file the queue does not list is the user's: the folder is refused, and it stays.
        try Data("mine".utf8).write(to: folder.url.appendingPathComponent("q/old-item.mp3"))
        let foreign = await #expect(throws: SessionError.self) {
            try await pipeline.writeQueue(script, to: folder.path("q"), reencode: false)
        }
        #expect(
            foreign?.lines == [
                "Cannot write the queue to \(folder.path("q")): it holds old-item.mp3, which its queue.json does not list; name a new or empty folder"
            ]
        )
        #expect(try folder.contents(of: "q") == (written + ["old-item.mp3"]).sorted())

        var keep = pipeline
        keep.output.replaceExisting = false
        let exists = await #expect(throws: SessionError.self) {
            try await keep.writeQueue(script, to: folder.path("q"), reencode: false)
        }
        #expect(exists?.code == .outputExists)
    }
}

extension TemporaryFolder {
    /// The names in the subfolder `name`, sorted.
    func contents(of name: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path(name)).sorted()
    }
}
