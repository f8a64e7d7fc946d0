import Foundation
import SessionKit
import TestSupport
import Testing

@Suite("Cache key schemes", .serialized)
struct CacheKeySchemeTests {
    @Test(
        "Under the text scheme the key is the SHA-256 of the text alone, whatever the voice and speed",
        arguments: [
            ("Now switch to the other side.", "97de9d396ea4b25a4acb4b56673b1895a56869a6394303f82a8c97f7be4d510e"),
            ("Hello", "185f8db32271fe25f561a6fc938b2e264306ec304eda518007d1764826381969"),
            ("Breathe… in — and out.", "f761b525811c69dce427ef75c27e4a1d19b17950d4213ae6ef1592755f057461"),
        ]
    )
    func textKeyVector(text: String, expected: String) async throws {
        // Expected values from `printf '%s' 'Now switch to the other side.' | sha256sum`.
        #expect(try await StretchingCache.sha256sum(text) == expected, "the vector itself, by coreutils")
        #expect(ClipCache.key(text: text) == expected)
        for (voice, speed) in [("espeak:en-us", 1.0), ("nova", 1.25)] as [(Voice, Double)] {
            let identity = ClipIdentity(cacheFolder: "/c", voice: voice, speed: speed, keyScheme: .text)
            let entry = identity.entry(for: text)
            #expect(entry.key == expected, "\(voice) \(speed)")
            #expect(entry.path == "/c/\(expected).mp3", "\(voice) \(speed)")
        }
    }

    @Test("Under the text scheme every fixture text is keyed as sha256sum hashes it")
    func textKeysMatchCoreutils() async throws {
        let identity = ClipIdentity(cacheFolder: "/c", keyScheme: .text)
        for clip in try FixtureClip.all() {
            #expect(
                identity.entry(for: clip.text).key == (try await StretchingCache.sha256sum(clip.text)),
                "\(clip.text)"
            )
        }
    }

    @Test("The default scheme is text + voice + speed: every fixture clip keeps its key")
    func defaultUnchanged() throws {
        #expect(ClipIdentity().keyScheme == .textVoiceSpeed)
        let identity = ClipIdentity(cacheFolder: Repository.cache.path)
        for clip in try FixtureClip.all() {
            let entry = identity.entry(for: clip.text)
            #expect(entry.key == clip.key && entry.path == clip.path, "\(clip.text)")
        }
    }

    @Test("The command-line spellings are voice (the default) and text")
    func spellings() {
        #expect(CacheKeyScheme.allCases.map(\.rawValue) == ["voice", "text"])
        #expect(CacheKeyScheme(rawValue: "text") == .text)
    }

    @Test("A cache in the stretching app's layout is used as it is, loudness and marks sidecars beside its keys")
    func readsStretchingCache() async throws {
        let folder = try TemporaryFolder()
        let names = try await StretchingCache.fill(folder)
        let texts = try FixtureClip.all().map(\.text)
        let identity = ClipIdentity(cacheFolder: folder.url.path, keyScheme: .text)
        let result = try await ClipPreparer(identity: identity, provider: nil, measureLoudness: true)
            .prepare(texts: texts)
        #expect(result.problems.isEmpty, "\(result.problemLines())")
        #expect(result.alreadyCached == texts.count && result.synthesized == 0)
        let keys = names.map { String($0.dropLast(".mp3".count)) }
        // The clips are eSpeak NG's speech of their texts, so their words are recovered too.
        #expect(
            try folder.contents()
                == (names + keys.map { "\($0).loudness.json" } + keys.map { "\($0).marks.json" }).sorted()
        )
        #expect(result.marks.count == texts.count)

        // The default scheme looks for other names, and finds none of them here.
        let other = try await ClipPreparer(identity: ClipIdentity(cacheFolder: folder.url.path), provider: nil)
            .prepare(texts: texts)
        #expect(other.alreadyCached == 0 && other.problems.count == texts.count)
    }

    @Test("Clips made under the text scheme are stored as the stretching app names them")
    func writesStretchingLayout() async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        let settings = ProviderSettings.proxy(
            baseURL: server.baseURL,
            http: HTTPSettings(retry: RetryPolicy(maximumAttempts: 1, initialDelay: 0.05, maximumDelay: 1))
        )
        let preparer = ClipPreparer(
            identity: ClipIdentity(cacheFolder: folder.url.path, voice: "nova", keyScheme: .text),
            provider: try settings.makeProvider()
        )
        let texts = ["Now switch to the other side.", "Breathe in."]
        let result = try await preparer.prepare(texts: texts)
        #expect(result.synthesized == 2)
        var names: [String] = []
        for text in texts { names.append("\(try await StretchingCache.sha256sum(text)).mp3") }
        #expect(try folder.contents() == names.sorted())

        // Another voice finds them: the voice is not part of the key.
        let again = try await ClipPreparer(
            identity: ClipIdentity(cacheFolder: folder.url.path, voice: "alloy", speed: 1.5, keyScheme: .text),
            provider: try settings.makeProvider()
        ).prepare(texts: texts)
        #expect(again.alreadyCached == 2 && again.synthesized == 0)
        #expect(try await server.stats().count == 2, "no request the second time")
    }
}
