import Foundation
import SessionKit
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio

/// Clips from a cache or a provider that lie: cut short, faked sidecars, implausibly long answers.
@Suite("Hostile clips", .serialized)
struct HostileClipTests {
    /// The opening clip (22,050 Hz mono, 371,691 frames, 286 characters).
    static let opening = try! #require(try FixtureClip.all().first { $0.key.hasPrefix("4b0b675e") })
    /// A short clip (22,050 Hz mono), prepared beside the opening.
    static let short = try! #require(try FixtureClip.all().first { $0.key.hasPrefix("2dbad57d") })
    /// The longest clip: 772,051 frames at 22,050 Hz, 35.0 s.
    static let long = try! #require(try FixtureClip.all().first { $0.key.hasPrefix("b605f57d") })

    /// The opening's bytes cut to a third, as `scripts/make-bad-fixtures.py` cuts them.
    static func cutToAThird() throws -> Data {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: opening.path))
        return bytes.prefix(bytes.count / 3)
    }

    /// The opening with its last MPEG frame cut in half.
    static func lastFrameCutInHalf() throws -> Data {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: opening.path)))
        // The last frame header: the last sync word whose header parses.
        var last = bytes.count - 4
        while last > 0 {
            if bytes[last] == 0xFF, bytes[last + 1] & 0xE0 == 0xE0,
                let header = MPEGFrameHeader(Array(bytes[last..<(last + 4)])),
                last + header.byteCount == bytes.count
            {
                break
            }
            last -= 1
        }
        let header = try #require(MPEGFrameHeader(Array(bytes[last..<(last + 4)])))
        return Data(bytes.prefix(last + header.byteCount / 2))
    }

    /// A cache holding the short clip whole and `opening` under the opening's key.
    static func cache(opening: Data) throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        try FileManager.default.copyItem(atPath: short.path, toPath: folder.path("\(short.key).mp3"))
        try opening.write(to: URL(fileURLWithPath: folder.path("\(Self.opening.key).mp3")))
        return folder
    }

    static func preparer(
        _ folder: TemporaryFolder,
        provider: (any SpeechProvider)? = nil,
        loudness: Bool = true,
        pacing: SpeechPacing = .standard
    ) -> ClipPreparer {
        ClipPreparer(
            identity: ClipIdentity(cacheFolder: folder.url.path, pacing: pacing),
            provider: provider,
            measureLoudness: loudness
        )
    }

    /// Why the opening cut to a third is refused, as a scan finds it (123,840 frames: libmpg123's
    /// scan keeps the encoder delay of a stream that ends early) or a decode (122,735 delivered).
    static func cutReason(decoded: Bool) -> String {
        "the file is cut short: its LAME/Xing tag promises 371691 frames, the stream holds \(decoded ? 122_735 : 123_840)"
    }

    @Test(
        "A cached clip cut to a third is unusable whether loudness is measured or not",
        arguments: [true, false]
    )
    func truncatedEntryOffline(loudness: Bool) async throws {
        let folder = try Self.cache(opening: try Self.cutToAThird())
        let result = try await Self.preparer(folder, loudness: loudness).prepare(texts: [
            Self.opening.text, Self.short.text,
        ])
        #expect(result.alreadyCached == 1)
        guard case .unusable(let reason) = result.states[Self.opening.key] else {
            Issue.record("the cut clip is \(String(describing: result.states[Self.opening.key]))")
            return
        }
        #expect(reason.hasSuffix(": \(Self.cutReason(decoded: loudness))"), "\(reason)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("\(Self.opening.key).loudness.json")))
    }

    @Test("prepare with loudness calls a cut clip corrupt and makes it again, not 'already cached'")
    func truncatedEntryReplaced() async throws {
        let folder = try Self.cache(opening: try Self.cutToAThird())
        let whole = try Data(contentsOf: URL(fileURLWithPath: Self.opening.path))
        let provider = FixedProvider(audio: whole)
        let warnings = Warnings()
        let result = try await Self.preparer(folder, provider: provider).prepare(
            texts: [Self.opening.text, Self.short.text],
            warn: warnings.add
        )
        #expect(result.alreadyCached == 1 && result.replaced == 1 && result.synthesized == 1)
        #expect(
            warnings.all
                == [
                    "Cache entry \(Self.opening.key).mp3 for \(quoted(Self.opening.text)) is corrupt (\(Self.cutReason(decoded: true))); synthesizing it again"
                ]
        )
        guard case .ready(let source) = result.states[Self.opening.key] else {
            Issue.record("the clip made again is \(String(describing: result.states[Self.opening.key]))")
            return
        }
        #expect(source.frameCount == Frames(Self.opening.sourceFrames))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path("\(Self.opening.key).mp3"))) == whole)
    }

    @Test("A sidecar written for a cut clip earlier does not make it pass")
    func sidecarOfCutClip() async throws {
        let cut = try Self.cutToAThird()
        let folder = try Self.cache(opening: cut)
        let path = folder.path("\(Self.opening.key).mp3")
        // What the old code wrote: the cut file's bytes and hash, the frames its decode delivered.
        let sidecar: [String: Any] = [
            "version": 2, "bytes": cut.count, "sha256": try await LoudnessSidecarTests.sha256(path),
            "sampleRate": 22_050, "channels": 1, "frames": 123_840, "gapless": true, "integratedLoudness": -18.5,
            "leveledLoudness": -19.5,
        ]
        try JSONSerialization.data(withJSONObject: sidecar).write(
            to: URL(fileURLWithPath: folder.path("\(Self.opening.key).loudness.json"))
        )
        let result = try await Self.preparer(folder).prepare(texts: [Self.opening.text])
        guard case .unusable(let reason) = result.states[Self.opening.key] else {
            Issue.record("the cut clip is \(String(describing: result.states[Self.opening.key]))")
            return
        }
        #expect(reason.hasSuffix(": \(Self.cutReason(decoded: false))"), "\(reason)")
    }

    @Test("A clip whose last frame is cut in half is refused by the scan, the decode and the store")
    func lastFrameCutInHalf() async throws {
        let cut = try Self.lastFrameCutInHalf()
        let folder = try TemporaryFolder()
        let path = folder.path("half.mp3")
        try cut.write(to: URL(fileURLWithPath: path))
        // The scan counts the half frame (372,672 frames, more than the tag's 371,691): the bytes give it away.
        let scanned = #expect(throws: AudioError.self) { try AudioFileDecoder.measure(path: path) }
        #expect(
            scanned?.reason
                == "the file is cut short: its LAME/Xing tag promises 135626 bytes of MPEG frames, the file holds \(cut.count)"
        )
        #expect(scanned?.code == .truncated)
        // A decode drops it, and delivers fewer frames than the tag promises.
        let measured = #expect(throws: AudioError.self) { try AudioFileDecoder.measureLoudness(path: path) }
        let verified = #expect(throws: AudioError.self) { try AudioFileDecoder.verifyMPEG(path: path) }
        for decoded in [measured, verified] {
            #expect(decoded?.code == .truncated)
            #expect(
                decoded?.reason.hasPrefix("the file is cut short: its LAME/Xing tag promises 371691 frames") == true
            )
        }
        let cache = ClipCache(directory: folder.path("cache"))
        try cache.prepareFolder()
        let entry = cache.entry(text: Self.opening.text, voice: "espeak:en-us", speed: 1)
        #expect(throws: SessionError.self) { try cache.store(cut, for: entry, measuringLoudness: true) }
        #expect(try folder.contents() == ["cache", "half.mp3"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("cache")).isEmpty)
    }

    @Test("A provider's answer cut short is never stored")
    func truncatedAnswer() async throws {
        let folder = try TemporaryFolder()
        try Self.cutToAThird().write(to: URL(fileURLWithPath: folder.path("cut.mp3")))
        let server = try await TTSServer(mp3: folder.path("cut.mp3"))
        let preparer = try PrepareTests.preparer(server, kind: .proxy, cache: folder.path("cache"))
        let result = try await preparer.prepare(texts: ["Hello."])
        #expect(result.synthesized == 0)
        #expect(
            result.failures.map(\.reason)
                == [
                    "the audio received (\(try Self.cutToAThird().count) bytes) is not a usable MP3: \(Self.cutReason(decoded: true))"
                ]
        )
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("cache")).isEmpty)
    }

    // MARK: Loudness sidecars (item 10)

    @Test(
        "A sidecar with a faked field is ignored: the clip is measured again and the sidecar rewritten",
        arguments: [
            ["sampleRate": 768_000] as [String: Double],
            ["frames": 466_944_000],
            ["frames": 1],
            ["channels": 2],
            ["gapless": 0],
            ["integratedLoudness": 400],
            ["integratedLoudness": 1e307],
            ["integratedLoudness": -1e307],
            ["integratedLoudness": -200],
            ["integratedLoudness": 10.5],
        ]
    )
    func fakedSidecar(change: [String: Double]) async throws {
        let folder = try Self.cache(opening: try Data(contentsOf: URL(fileURLWithPath: Self.opening.path)))
        let sidecarPath = folder.path("\(Self.short.key).loudness.json")
        let preparer = Self.preparer(folder)
        _ = try await preparer.prepare(texts: [Self.short.text])
        let honest = try Data(contentsOf: URL(fileURLWithPath: sidecarPath))
        var edits: [String: Any] = change
        if change["gapless"] != nil { edits["gapless"] = false }
        try LoudnessSidecarTests.edit(sidecarPath, edits)
        let result = try await preparer.prepare(texts: [Self.short.text])
        let source = try LoudnessSidecarTests.source(result, Self.short.key)
        let measured = try AudioFileDecoder.measureLoudness(path: Self.short.path)
        #expect(source.sampleRate == 22_050 && source.frameCount == Frames(Self.short.sourceFrames))
        #expect(source.gapless && source.loudness == measured.loudness)
        #expect(try Data(contentsOf: URL(fileURLWithPath: sidecarPath)) == honest, "the sidecar is rewritten")
    }

    // MARK: Implausibly long answers (item 13)

    @Test(
        "The limit is max(10 s, 0.5 s a character) ÷ min(speed, 1), plus the longer pause per pause mark",
        arguments: [
            ("Hi", 1.0, SpeechPacing.standard, 10.0),
            ("Breathe.", 1.0, .standard, 11.5),
            ("Breathe.", 0.5, .standard, 21.5),
            ("Breathe.", 2.0, .standard, 11.5),
            (String(repeating: "a", count: 40), 1.0, .standard, 20.0),
            ("A. B. C.", 1.0, SpeechPacing(sentencePauseSeconds: 10, paragraphPauseSeconds: 2), 40.0),
            ("One\n\nTwo", 1.0, .standard, 13.0),
        ]
    )
    func limit(text: String, speed: Double, pacing: SpeechPacing, seconds: Double) {
        let limit = ClipLengthLimit(text: text, speed: speed, pacing: pacing)
        #expect(limit.seconds == seconds)
        #expect(limit.frames(at: 22_050) == Frames(Int64((seconds * 22_050).rounded(.up))))
    }

    @Test("A 35-second answer for an 8-character text is refused, naming the text, the length and the limit")
    func implausiblyLongAnswer() async throws {
        let folder = try TemporaryFolder()
        let provider = FixedProvider(audio: try Data(contentsOf: URL(fileURLWithPath: Self.long.path)))
        let result = try await Self.preparer(folder, provider: provider).prepare(texts: ["Breathe."])
        #expect(result.synthesized == 0)
        #expect(
            result.failures.map(\.reason)
                == [
                    "the audio received is 35.0 s long, more than the 11.5 s a clip of \"Breathe.\" (8 characters) may plausibly be"
                ]
        )
        #expect(try folder.contents().isEmpty, "nothing stored")
    }

    @Test("Pauses inside a clip count: with 10 s sentence pauses a 35-second clip of three sentences is stored")
    func pausesAreAllowed() async throws {
        let folder = try TemporaryFolder()
        let provider = FixedProvider(audio: try Data(contentsOf: URL(fileURLWithPath: Self.long.path)))
        let paced = SpeechPacing(sentencePauseSeconds: 10, paragraphPauseSeconds: 1.5)
        let result = try await Self.preparer(folder, provider: provider, pacing: paced).prepare(texts: ["A. B. C."])
        #expect(result.synthesized == 1 && result.failures.isEmpty)
        let refused = try await Self.preparer(try TemporaryFolder(), provider: provider).prepare(texts: ["A. B. C."])
        #expect(refused.failures.count == 1, "the default pauses allow 14.5 s")
    }

    @Test("A long answer from a TTS server is refused too")
    func implausiblyLongServerAnswer() async throws {
        let folder = try TemporaryFolder()
        let server = try await TTSServer(mp3: Self.long.path)
        let preparer = try PrepareTests.preparer(server, kind: .openai, cache: folder.path("cache"))
        let result = try await preparer.prepare(texts: ["Breathe in, slowly."])
        #expect(
            result.failures.map(\.reason)
                == [
                    "the audio received is 35.0 s long, more than the 11.5 s a clip of \"Breathe in, slowly.\" (19 characters) may plausibly be"
                ]
        )
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("cache")).isEmpty)
    }
}
