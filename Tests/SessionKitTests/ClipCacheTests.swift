import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

@Suite("The clip cache", .tags(.concurrent))
struct ClipCacheTests {
    @Test(
        "The key is the SHA-256 of text + voice + speed as Swift writes it",
        arguments: [
            ("Hello", "espeak:en-us", 1.0, "a08a7a65033076a11fe75c7baf9b41feab352d0104e1ef4a2c28d8c33ef4e372"),
            (
                "Notice where your attention is right now.", "alloy", 1.25,
                "c4d522f3f3a96d24fbfb0b3cd4d8cb196f4016b26e7d953c7907086f70cc5356"
            ),
        ]
    )
    func keyVector(text: String, voice: String, speed: Double, expected: String) {
        // Expected values from `printf '%s' 'Helloespeak:en-us1.0' | sha256sum`.
        #expect(ClipCache.key(text: text, voice: voice, speed: speed) == expected)
    }

    @Test("Every fixture clip sits under its key")
    func fixtureKeys() throws {
        for clip in try FixtureClip.all() {
            #expect(ClipCache.key(text: clip.text, voice: Voice.defaultVoice.id, speed: 1.0) == clip.key)
        }
    }

    @Test("The default folder follows XDG_CACHE_HOME, else HOME")
    func defaultFolder() {
        #expect(
            ClipCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u"])
                == "/x/cache/render-session/tts"
        )
        #expect(ClipCache.defaultDirectory(environment: ["HOME": "/home/u"]) == "/home/u/.cache/render-session/tts")
        #expect(
            ClipCache.defaultDirectory(environment: ["XDG_CACHE_HOME": "relative", "HOME": "/home/u"])
                == "/home/u/.cache/render-session/tts",
            "a relative XDG_CACHE_HOME is ignored, as the XDG spec says"
        )
    }

    @Test("All missing clips are reported in one pass, naming text, key and path")
    func missingClips() async throws {
        let folder = try TemporaryFolder()
        let script = try ScriptFile.load(Repository.script("ten-minute-session").path)
        // Copy all but two clips.
        let clips = try FixtureClip.all().filter { script.allTexts.contains($0.text) }
        let absent = Set(clips.filter { $0.text.hasPrefix("Between") || $0.text.hasPrefix("Soften") }.map(\.key))
        for clip in clips where !absent.contains(clip.key) {
            try FileManager.default.copyItem(atPath: clip.path, toPath: folder.path("\(clip.key).mp3"))
        }
        await #expect {
            _ = try await planOffline(script, cache: folder.url.path)
        } throws: { error in
            guard let error = error as? SessionError else { return false }
            let teachings = try! #require(clips.first { $0.text.hasPrefix("Between") })
            let soften = try! #require(clips.first { $0.text.hasPrefix("Soften") })
            return error.code == .missingClips
                && error.lines == [
                    #"No clip for "Between something happening and your response to it, there i…" (key \#(teachings.key)): nothing at \#(folder.path("\(teachings.key).mp3"))"#,
                    #"No clip for "Soften the shoulders and the jaw." (key \#(soften.key)): nothing at \#(folder.path("\(soften.key).mp3"))"#,
                ]
        }
    }

    @Test("Storing a clip another process stored first keeps that entry, bytes and time; a corrupt one is replaced")
    func storeKeepsExisting() throws {
        let folder = try TemporaryFolder()
        let cache = ClipCache(directory: folder.url.path)
        let fixtures = try FixtureClip.all()
        let (first, second) = try (
            Data(contentsOf: URL(fileURLWithPath: fixtures[0].path)),
            Data(contentsOf: URL(fileURLWithPath: fixtures[1].path))
        )
        let entry = cache.entry(text: "Shared.", voice: "v", speed: 1.0)
        let stored = try cache.store(first, for: entry)
        let before = try FileManager.default.attributesOfItem(atPath: entry.path)[.modificationDate] as? Date
        usleep(20_000)
        let again = try cache.store(second, for: entry)
        #expect(try Data(contentsOf: URL(fileURLWithPath: entry.path)) == first, "the first entry stays")
        #expect(try FileManager.default.attributesOfItem(atPath: entry.path)[.modificationDate] as? Date == before)
        #expect(
            again.frameCount == stored.frameCount && again.sampleRate == stored.sampleRate,
            "the measurement is the kept entry's"
        )
        #expect(try folder.contents() == ["\(entry.key).mp3"], "no temporary left")

        try Data("<html>".utf8).write(to: URL(fileURLWithPath: entry.path))
        _ = try cache.store(second, for: entry)
        #expect(try Data(contentsOf: URL(fileURLWithPath: entry.path)) == second, "what is there is not a clip")
        _ = try cache.store(first, for: entry, replacingExisting: true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: entry.path)) == first, "replacing, as for a corrupt entry")
        #expect(try folder.contents() == ["\(entry.key).mp3"])
    }

    @Test(
        "A server's answer in AAC is stored as MP3 with the gapless tag, exactly as long as the AAC decodes; a cut one is refused",
        .requiresFFmpeg,
        arguments: [
            ("answer.m4a", ["-c:a", "aac", "-movie_timescale", "24000"]),
            ("answer.aac", ["-c:a", "aac", "-f", "adts"]),
        ]
    )
    func aacAnswer(name: String, encoding: [String]) async throws {
        let folder = try TemporaryFolder()
        let source = folder.path("source.wav")
        try await FFmpeg.encode(
            "sine=frequency=220:sample_rate=24000:duration=2",
            ["-af", "atrim=end_sample=30001", "-c:a", "pcm_s16le"],
            to: source,
            lavfi: true
        )
        let answer = folder.path(name)
        try await FFmpeg.encode(source, encoding, to: answer)
        let decoded = try AudioFileDecoder.measure(path: answer)
        let cache = ClipCache(directory: folder.path("cache"))
        try cache.prepareFolder()
        let entry = cache.entry(text: "Breathe in.", voice: "v", speed: 1.0)
        let stored = try cache.store(Data(contentsOf: URL(fileURLWithPath: answer)), for: entry)
        let measurement = try AudioFileDecoder.measure(path: entry.path)
        #expect(measurement.formatName == "MPEG audio" && measurement.gapless, "stored as MP3 with the LAME tag")
        #expect(stored.frameCount == decoded.frameCount && measurement.frameCount == decoded.frameCount)
        #expect(name != "answer.m4a" || decoded.frameCount == 30_001, "the M4A's edit list gives the exact length")

        let bytes = try Data(contentsOf: URL(fileURLWithPath: answer))
        let cut = cache.entry(text: "Breathe out.", voice: "v", speed: 1.0)
        #expect {
            _ = try cache.store(bytes.prefix(bytes.count / 2), for: cut)
        } throws: { error in
            let reason = (error as? SessionError)?.description ?? ""
            return reason.contains("is not a usable AAC clip: the file is cut short: ")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("cache")) == ["\(entry.key).mp3"])
    }

    @Test(
        "A server's answer in MP2 is stored as MP3, not as it came: a player given a .mp3 file may refuse MP2",
        .requiresFFmpeg
    )
    func mp2Answer() async throws {
        let folder = try TemporaryFolder()
        let answer = folder.path("answer.mp2")
        try await FFmpeg.encode(
            "sine=frequency=220:sample_rate=24000:duration=2",
            ["-c:a", "mp2"],
            to: answer,
            lavfi: true
        )
        let decoded = try AudioFileDecoder.measure(path: answer)
        #expect(decoded.formatName == "MPEG audio layer 2 (MP2)")
        let cache = ClipCache(directory: folder.path("cache"))
        try cache.prepareFolder()
        let entry = cache.entry(text: "Breathe in.", voice: "v", speed: 1.0)
        let stored = try cache.store(Data(contentsOf: URL(fileURLWithPath: answer)), for: entry)
        let measurement = try AudioFileDecoder.measure(path: entry.path)
        #expect(measurement.formatName == AudioFileDecoder.mp3FormatName && measurement.gapless, "stored as MP3")
        #expect(stored.frameCount == decoded.frameCount)
    }

    @Test("A cache entry that is a link, or holds anything but MP3, is refused as unusable, never read through")
    func plantedEntries() async throws {
        let folder = try TemporaryFolder()
        let cache = ClipCache(directory: folder.path("cache"))
        try cache.prepareFolder()
        let source = Repository.root.path + "/Fixtures/cache"
        let mp3 = try #require(
            try FileManager.default.contentsOfDirectory(atPath: source).first { $0.hasSuffix(".mp3") }
        )
        let linked = cache.entry(text: "Breathe in.", voice: "v", speed: 1.0)
        try FileManager.default.createSymbolicLink(atPath: linked.path, withDestinationPath: source + "/" + mp3)
        #expect {
            _ = try cache.measure(linked)
        } throws: { error in
            (error as? SessionError)?.description.contains("the cache entry is a symbolic link") == true
        }
        let wav = cache.entry(text: "Breathe out.", voice: "v", speed: 1.0)
        try VerifierTests.write([Int16](repeating: 1_000, count: 8_000), rate: SampleRate(8_000), to: wav.path)
        #expect {
            _ = try cache.measure(wav)
        } throws: { error in
            (error as? SessionError)?.description.contains("the cache entry is WAV") == true
        }
        #expect(throws: SessionError.self) { try cache.measureWithLoudness(wav) }
    }
}
