import Foundation
import SessionKit
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio

/// Answers every text with the same MP3 bytes, and counts the requests.
struct FixedProvider: SpeechProvider {
    let audio: Data
    let requests = Locked(0)
    var name: String { "fixed" }
    var defaultJobs: Int { 1 }
    func speak(_ request: SpeechRequest) async throws(SessionError) -> SpeechResult {
        requests.withLock { $0 += 1 }
        return SpeechResult(audio: audio)
    }
}

@Suite("Loudness sidecars in the clip cache", .serialized, .tags(.concurrent))
struct LoudnessSidecarTests {
    /// A text not in the cache, long enough for any fixture clip to be a plausible answer (``ClipLengthLimit``).
    static let newText = "Something new, spoken slowly and at length, as long as one of the fixture clips is."

    /// Two fixture clips of different lengths and loudness, 22,050 Hz mono.
    static func clips() throws -> [FixtureClip] {
        let mono = try FixtureClip.all().filter { $0.channels == 1 }
        return Array(mono.prefix(2))
    }

    /// A cache folder holding copies of `clips` under their keys.
    static func cache(with clips: [FixtureClip]) throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        for clip in clips {
            try FileManager.default.copyItem(atPath: clip.path, toPath: folder.path("\(clip.key).mp3"))
        }
        return folder
    }

    static func preparer(
        _ folder: TemporaryFolder,
        provider: (any SpeechProvider)? = nil,
        loudness: Bool = true
    )
        -> ClipPreparer
    {
        ClipPreparer(
            identity: ClipIdentity(cacheFolder: folder.url.path),
            provider: provider,
            measureLoudness: loudness
        )
    }

    /// The fixture clips prepared once in a cache of their own: the first clip's source, its
    /// sidecar's path and bytes, and what prepares the cache again.
    static func preparedOnce() async throws -> (
        folder: TemporaryFolder, texts: [String], key: String, source: AudioSourceInfo,
        again: ClipPreparer, sidecarPath: String, original: Data
    ) {
        let clips = try Self.clips()
        let folder = try Self.cache(with: clips)
        let preparer = Self.preparer(folder)
        let first = try await preparer.prepare(texts: clips.map(\.text))
        let sidecarPath = folder.path("\(clips[0].key).loudness.json")
        let original = try Data(contentsOf: URL(fileURLWithPath: sidecarPath))
        let source = try Self.source(first, clips[0].key)
        return (folder, clips.map(\.text), clips[0].key, source, preparer, sidecarPath, original)
    }

    /// The source prepared for `key`, or a failed expectation.
    static func source(_ result: PreparedClips, _ key: String) throws -> AudioSourceInfo {
        guard case .ready(let source) = result.states[key] else {
            throw Failure("clip \(key) is not ready: \(String(describing: result.states[key]))")
        }
        return source
    }

    /// The sidecar at `path` as a JSON object.
    static func sidecar(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Lowercase hex SHA-256 of the file at `path`, by coreutils' `sha256sum`.
    static func sha256(_ path: String) async throws -> String {
        String(try await ChildProcess.run("/usr/bin/env", ["sha256sum", path]).standardOutputText.prefix(64))
    }

    /// Rewrites fields of the sidecar at `path` (`NSNull()` for null), keeping the others.
    static func edit(_ path: String, _ changes: [String: Any]) throws {
        var object = try sidecar(path)
        for (key, value) in changes { object[key] = value }
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test("A cached clip gets a sidecar on the first prepare: its bytes, SHA-256, format and loudness")
    func writtenOnFirstPrepare() async throws {
        let clips = try Self.clips()
        let folder = try Self.cache(with: clips)
        let result = try await Self.preparer(folder).prepare(texts: clips.map(\.text))
        #expect(result.alreadyCached == 2)
        for clip in clips {
            let path = folder.path("\(clip.key).mp3")
            let measured = try AudioFileDecoder.measureLoudness(path: path, levelsSpeech: true)
            let source = try Self.source(result, clip.key)
            let loudness = try #require(measured.loudness)
            let leveledLoudness = try #require(measured.leveledLoudness)
            #expect(
                source
                    == AudioSourceInfo(
                        path: path,
                        sampleRate: measured.sampleRate,
                        frameCount: Frames(clip.sourceFrames),
                        gapless: true,
                        loudness: loudness,
                        leveledLoudness: leveledLoudness
                    )
            )
            let sidecarPath = folder.path("\(clip.key).loudness.json")
            #expect(ClipCache(directory: folder.url.path).loudnessPath(forKey: clip.key) == sidecarPath)
            let sidecar = try Self.sidecar(sidecarPath)
            #expect(
                Set(sidecar.keys)
                    == [
                        "version", "bytes", "sha256", "sampleRate", "channels", "frames", "gapless",
                        "integratedLoudness", "leveledLoudness",
                    ]
            )
            #expect(sidecar["version"] as? Int == 2)
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
            #expect(sidecar["bytes"] as? Int == size)
            #expect(sidecar["sha256"] as? String == (try await Self.sha256(path)))
            #expect(sidecar["sampleRate"] as? Int == clip.sampleRate && sidecar["channels"] as? Int == 1)
            #expect((sidecar["frames"] as? NSNumber)?.int64Value == clip.sourceFrames)
            #expect(sidecar["gapless"] as? Bool == true)
            #expect(sidecar["integratedLoudness"] as? Double == measured.loudness, "the full value, not rounded")
            #expect(sidecar["leveledLoudness"] as? Double == measured.leveledLoudness)
        }
        // Two clips, each with its loudness sidecar (and, being eSpeak NG's speech, its words').
        let names = try folder.contents().filter { !$0.hasSuffix(".marks.json") }
        #expect(names.count == 4 && names.allSatisfy { $0.hasSuffix(".mp3") || $0.hasSuffix(".loudness.json") })
    }

    @Test("A second prepare takes the loudness from a sidecar that matches the clip, decoding nothing")
    func reusedOnSecondPrepare() async throws {
        let clips = try Self.clips()
        let folder = try Self.cache(with: clips)
        let preparer = Self.preparer(folder)
        _ = try await preparer.prepare(texts: clips.map(\.text))
        // A value no decode of the clip gives: if it comes back, the sidecar was used, not a decode.
        let sidecarPath = folder.path("\(clips[0].key).loudness.json")
        try Self.edit(sidecarPath, ["integratedLoudness": -42.5])
        let edited = try Data(contentsOf: URL(fileURLWithPath: sidecarPath))
        let again = try await preparer.prepare(texts: clips.map(\.text))
        let source = try Self.source(again, clips[0].key)
        #expect(source.loudness == -42.5 && source.frameCount == Frames(clips[0].sourceFrames))
        #expect(try Data(contentsOf: URL(fileURLWithPath: sidecarPath)) == edited, "left as it was")
        // A recorded null is trusted too: the clip had nothing over the gates.
        try Self.edit(sidecarPath, ["integratedLoudness": NSNull()])
        let third = try await preparer.prepare(texts: clips.map(\.text))
        #expect(try Self.source(third, clips[0].key).loudness == nil)
    }

    @Test("A sidecar whose SHA-256 or size does not match the clip is measured again and rewritten")
    func staleIsRemeasured() async throws {
        let clips = try Self.clips()
        let folder = try Self.cache(with: clips)
        let preparer = Self.preparer(folder)
        let first = try await preparer.prepare(texts: clips.map(\.text))
        let truth = try Self.source(first, clips[0].key)
        let sidecarPath = folder.path("\(clips[0].key).loudness.json")
        let original = try Data(contentsOf: URL(fileURLWithPath: sidecarPath))

        try Self.edit(sidecarPath, ["integratedLoudness": -42.5, "sha256": String(repeating: "0", count: 64)])
        let afterHash = try await preparer.prepare(texts: clips.map(\.text))
        #expect(try Self.source(afterHash, clips[0].key) == truth)
        #expect(try Data(contentsOf: URL(fileURLWithPath: sidecarPath)) == original, "rewritten as the first time")

        try Self.edit(sidecarPath, ["integratedLoudness": -42.5, "bytes": 1])
        let afterSize = try await preparer.prepare(texts: clips.map(\.text))
        #expect(try Self.source(afterSize, clips[0].key) == truth)
        #expect(try Data(contentsOf: URL(fileURLWithPath: sidecarPath)) == original)

        // The clip replaced under its key (as when a corrupt clip is synthesized again): the old
        // sidecar describes other bytes.
        let clipPath = folder.path("\(clips[0].key).mp3")
        try FileManager.default.removeItem(atPath: clipPath)
        try FileManager.default.copyItem(atPath: clips[1].path, toPath: clipPath)
        let replaced = try await preparer.prepare(texts: clips.map(\.text))
        let other = try Self.source(replaced, clips[1].key)
        let now = try Self.source(replaced, clips[0].key)
        #expect(now.loudness == other.loudness && now.frameCount == other.frameCount)
        #expect(try await Self.sidecar(sidecarPath)["sha256"] as? String == (try Self.sha256(clipPath)))
    }

    @Test(
        "A corrupt, cut, incomplete or foreign sidecar is measured again and rewritten",
        arguments: [
            "{not json", "{\"version\":1,\"bytes\":", "", "[]",
            "{\"version\":3,\"bytes\":0,\"sha256\":\"\",\"sampleRate\":22050,\"channels\":1,\"frames\":1,\"gapless\":true,\"integratedLoudness\":null,\"leveledLoudness\":null}",
        ]
    )
    func corruptIsRemeasured(content: String) async throws {
        let prepared = try await Self.preparedOnce()
        try Data(content.utf8).write(to: URL(fileURLWithPath: prepared.sidecarPath))
        let again = try await prepared.again.prepare(texts: prepared.texts)
        #expect(try Self.source(again, prepared.key) == prepared.source)
        #expect(try Data(contentsOf: URL(fileURLWithPath: prepared.sidecarPath)) == prepared.original)
    }

    @Test(
        "A sidecar that is a FIFO, a link, or a sparse 3 GB file is not read: nothing waits, nothing is followed, memory stays small",
        arguments: ["fifo", "link", "sparse"]
    )
    func hostileIsRemeasured(kind: String) async throws {
        let prepared = try await Self.preparedOnce()
        let (sidecarPath, original) = (prepared.sidecarPath, prepared.original)
        let elsewhere = try TemporaryFolder()
        // A sidecar elsewhere that would be believed, with a loudness no measurement gives.
        var planted = try Self.sidecar(sidecarPath)
        planted["integratedLoudness"] = -3.5
        try JSONSerialization.data(withJSONObject: planted).write(to: URL(fileURLWithPath: elsewhere.path("x.json")))
        try FileManager.default.removeItem(atPath: sidecarPath)
        switch kind {
        case "fifo": #expect(mkfifo(sidecarPath, 0o644) == 0)
        case "link":
            try FileManager.default.createSymbolicLink(
                atPath: sidecarPath,
                withDestinationPath: elsewhere.path("x.json")
            )
        default:
            #expect(FileManager.default.createFile(atPath: sidecarPath, contents: original))
            #expect(truncate(sidecarPath, 3 << 30) == 0)
        }
        let again = try await prepared.again.prepare(texts: prepared.texts)
        #expect(try Self.source(again, prepared.key) == prepared.source)
        #expect(try Data(contentsOf: URL(fileURLWithPath: sidecarPath)) == original, "rewritten as a regular file")
        #expect(
            try Self.sidecar(elsewhere.path("x.json"))["integratedLoudness"] as? Double == -3.5,
            "the link's target untouched"
        )
    }

    @Test("A sidecar without its integratedLoudness key is damaged, not \"not measured\"")
    func missingKey() async throws {
        let clips = try Self.clips()
        let folder = try Self.cache(with: clips)
        let preparer = Self.preparer(folder)
        let first = try await preparer.prepare(texts: clips.map(\.text))
        let sidecarPath = folder.path("\(clips[0].key).loudness.json")
        var object = try Self.sidecar(sidecarPath)
        object["integratedLoudness"] = nil
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: sidecarPath))
        let again = try await preparer.prepare(texts: clips.map(\.text))
        #expect(try Self.source(again, clips[0].key) == (try Self.source(first, clips[0].key)))
        #expect(try Self.sidecar(sidecarPath)["integratedLoudness"] as? Double != nil)
    }

    @Test("A synthesized clip's sidecar comes from the decode that checked it, written as it is stored")
    func synthesized() async throws {
        let clip = try Self.clips()[0]
        let provider = FixedProvider(audio: try Data(contentsOf: URL(fileURLWithPath: clip.path)))
        let folder = try TemporaryFolder()
        let preparer = Self.preparer(folder, provider: provider)
        let result = try await preparer.prepare(texts: [Self.newText])
        #expect(result.synthesized == 1)
        let key = ClipCache.key(text: Self.newText, voice: Voice.defaultVoice.id, speed: 1.0)
        let measured = try AudioFileDecoder.measureLoudness(path: clip.path)
        let source = try Self.source(result, key)
        #expect(source.loudness == measured.loudness && source.frameCount == measured.frameCount)
        let sidecar = try Self.sidecar(folder.path("\(key).loudness.json"))
        #expect(sidecar["integratedLoudness"] as? Double == measured.loudness)
        #expect(sidecar["sha256"] as? String == (try await Self.sha256(clip.path)))
        #expect(try folder.contents() == ["\(key).loudness.json", "\(key).mp3"], "no temporaries left")
        // The next prepare trusts it: no request, the same source.
        let again = try await preparer.prepare(texts: [Self.newText])
        #expect(again.alreadyCached == 1 && provider.requests.withLock { $0 } == 1)
        #expect(try Self.source(again, key) == source)
    }

    @Test("A silent clip's sidecar records a null loudness")
    func silentClip() async throws {
        let silence = try MP3Encoder.encode(
            [Int16](repeating: 0, count: 22_050),
            sampleRate: 22_050,
            channelCount: 1,
            bitRate: 64
        )
        let provider = FixedProvider(audio: Data(silence))
        let folder = try TemporaryFolder()
        let result = try await Self.preparer(folder, provider: provider).prepare(texts: ["…"])
        let key = ClipCache.key(text: "…", voice: Voice.defaultVoice.id, speed: 1.0)
        #expect(try Self.source(result, key).loudness == nil)
        #expect(try Self.sidecar(folder.path("\(key).loudness.json"))["integratedLoudness"] is NSNull)
    }

    @Test("Without measureLoudness no sidecar is read or written, and no loudness is reported")
    func off() async throws {
        let clips = try Self.clips()
        let folder = try Self.cache(with: clips)
        let provider = FixedProvider(audio: try Data(contentsOf: URL(fileURLWithPath: clips[0].path)))
        let result = try await Self.preparer(folder, provider: provider, loudness: false)
            .prepare(texts: clips.map(\.text) + [Self.newText])
        #expect(result.alreadyCached == 2 && result.synthesized == 1)
        for state in result.states.values {
            guard case .ready(let source) = state else {
                Issue.record("not ready: \(state)")
                continue
            }
            #expect(source.loudness == nil)
        }
        #expect(try folder.contents().allSatisfy { $0.hasSuffix(".mp3") || $0.hasSuffix(".marks.json") })
        #expect(!ClipPreparer(identity: ClipIdentity(), provider: nil).measureLoudness, "off by default")
    }
}
