import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The Piper voice with the real engine and the real `en_US-joe-medium` model.
@Suite("The Piper voice", .serialized, .requiresPiper, .tags(.concurrent))
struct PiperTests {
    static var provider: PiperSpeechProvider { PiperSpeechProvider(installation: PiperSupport.installation!) }

    @Test("A clip is the engine's speech: its MP3 decodes to exactly the frames Piper spoke, the sentence pause inside")
    func clipIsExact() async throws {
        let folder = try TemporaryFolder()
        let (audio, mp3) = try await Self.provider.clip(
            SpeechRequest(text: "Notice the breath. Let it go.", voice: PiperSupport.voice)
        )
        #expect(audio.sampleRate == 22_050)
        // 0.6 s between the two sentences: a run of digital silence at least that long.
        var longestZeros = 0
        var run = 0
        for sample in audio.samples {
            run = sample == 0 ? run + 1 : 0
            longestZeros = max(longestZeros, run)
        }
        #expect(longestZeros >= 13_230, "the sentence pause is 0.6 s × 22,050 = 13,230 frames of zeros")
        #expect(audio.samples.count > 22_050 && audio.samples.count < 22_050 * 6, "two short sentences")

        let identity = ClipIdentity(cacheFolder: folder.path("cache"), voice: PiperSupport.voice)
        let entry = identity.entry(for: "Notice the breath.")
        #expect(entry.key == "6bf09a2b44e98076854a53c7cdfc42a98ae3243132658cc37512d152616f99d0")
        try identity.cache.prepareFolder()
        let stored = try identity.cache.store(mp3, for: entry)
        #expect(stored.frameCount == audio.frameCount)
        #expect(stored.sampleRate == 22_050)
        let decoded = try AudioFileDecoder.verifyMPEG(path: entry.path)
        #expect(decoded.frameCount == audio.frameCount, "decoded in full, not only scanned")
    }

    @Test("Pauses other than the defaults are part of the key; the defaults keep the plain key")
    func pacingKeys() {
        var identity = ClipIdentity(cacheFolder: "/tmp/c", voice: PiperSupport.voice)
        #expect(identity.keyedVoice == "piper:en_US-joe-medium")
        identity.pacing.sentencePauseSeconds = 0.9
        #expect(identity.keyedVoice == "piper:en_US-joe-medium;sentence-pause=0.9;paragraph-pause=1.5")
        #expect(
            identity.entry(for: "Notice the breath.").key
                == "01498523149185cb1567edfda012375e1648afac79b1706477ab61aba0af68d2"
        )
        identity.voice = "espeak:en-us"
        #expect(identity.keyedVoice == "espeak:en-us", "eSpeak does not apply pauses, so they are not in its key")
    }

    /// The longest run of exact zeros in `samples`: the pauses the bridge puts in are digital silence.
    static func longestZeros(_ samples: [Int16]) -> Int {
        var (longest, run) = (0, 0)
        for sample in samples {
            run = sample == 0 ? run + 1 : 0
            longest = max(longest, run)
        }
        return longest
    }

    @Test("Sentences are parted by the rule, not by Piper: no sentence pause after Dr., z. B. or an initial")
    func sentences() async throws {
        let pause = 13_230
        for text in ["Sit with Dr. Smith today.", "Read J. R. R. Tolkien slowly."] {
            let audio = try await Self.provider.speech(SpeechRequest(text: text, voice: PiperSupport.voice))
            #expect(Self.longestZeros(audio.samples) < pause, "no 0.6 s pause inside \"\(text)\"")
        }
        let two = try await Self.provider.speech(
            SpeechRequest(text: "Sit with Dr. Smith. Rest.", voice: PiperSupport.voice)
        )
        #expect(Self.longestZeros(two.samples) >= pause, "the one real sentence end keeps its pause")
        // A text the rule parts otherwise is keyed apart from its old clip; the others keep their keys.
        let identity = ClipIdentity(cacheFolder: "/tmp/c", voice: PiperSupport.voice)
        #expect(
            identity.entry(for: "Sit with Dr. Smith today.").key
                == ClipCache(directory: "/tmp/c").entry(
                    text: "Sit with Dr. Smith today.",
                    voice: "piper:en_US-joe-medium;sentences=2",
                    speed: 1,
                    scheme: identity.keyScheme
                ).key
        )
        #expect(
            identity.entry(for: "Notice the breath.").key
                == "6bf09a2b44e98076854a53c7cdfc42a98ae3243132658cc37512d152616f99d0"
        )
    }

    @Test("Speed is Piper's length scale: speed 2 speaks in about half the frames (its edges' silence does not scale)")
    func speed() async throws {
        let provider = Self.provider
        let text = "Breathe in slowly, and let the shoulders drop as you breathe out, all the way down to the ground."
        let normal = try await provider.speech(SpeechRequest(text: text, voice: PiperSupport.voice))
        let fast = try await provider.speech(SpeechRequest(text: text, voice: PiperSupport.voice, speed: 2))
        let ratio = Double(fast.samples.count) / Double(normal.samples.count)
        #expect(ratio > 0.4 && ratio < 0.72, "speed 2 took \(ratio) of the frames")
    }

    @Test("Preparing twice: the second run finds every clip and synthesizes nothing")
    func secondPrepareSynthesizesNothing() async throws {
        let folder = try TemporaryFolder()
        let identity = ClipIdentity(cacheFolder: folder.path("cache"), voice: PiperSupport.voice)
        let texts = ["Welcome.", "Rest here.", "Welcome."]
        let first = try await ClipPreparer(identity: identity, provider: Self.provider, jobs: 2).prepare(texts: texts)
        #expect(first.needed == 2 && first.synthesized == 2 && first.problems.isEmpty)
        let second = try await ClipPreparer(identity: identity, provider: Self.provider, jobs: 2).prepare(texts: texts)
        #expect(second.synthesized == 0 && second.alreadyCached == 2 && second.problems.isEmpty)
        #expect(try folder.contents() == ["cache"])
        // Each clip with its words (Piper's phoneme timing): the second run reads them back.
        let keys = texts.dropLast().map { identity.entry(for: $0).key }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path("cache")).sorted()
                == (keys.map { $0 + ".mp3" } + keys.map { $0 + ".marks.json" }).sorted()
        )
        #expect(second.marks.count == 2 && second.marks["\(keys[1])"]?.words.map(\.text) == ["Rest", "here"])
    }

    @Test("A worker killed mid-batch is restarted, the clip it held is made again, and nothing half-written is stored")
    func killedWorkerRecovers() async throws {
        let folder = try TemporaryFolder()
        let provider = Self.provider
        let identity = ClipIdentity(cacheFolder: folder.path("cache"), voice: PiperSupport.voice)
        let texts = (1...6).map { "This is sentence number \($0), spoken slowly, with care, to the very end." }
        let killed = Locked(false)
        let result = try await ClipPreparer(identity: identity, provider: provider, jobs: 2).prepare(texts: texts) {
            _ in
        } progress: { progress in
            // After the first clip both workers are loaded and one is busy: kill every worker process.
            let first = killed.withLock { done in
                defer { done = true }
                return !done
            }
            guard progress.synthesized == 1, first else { return }
            Task {
                for pid in await provider.workerProcessIdentifiers(for: PiperSupport.voice) { kill(pid, SIGKILL) }
            }
        }
        #expect(killed.withLock { $0 })
        #expect(result.synthesized == 6 && result.problems.isEmpty, "\(result.problemLines())")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path("cache")).sorted()
        let keys = texts.map { identity.entry(for: $0).key }
        #expect(files == (keys.map { $0 + ".mp3" } + keys.map { $0 + ".marks.json" }).sorted(), "no temporaries left")
        for text in texts {
            let measured = try AudioFileDecoder.verifyMPEG(path: identity.entry(for: text).path)
            #expect(measured.frameCount > Frames(22_050), "every clip whole")
        }
    }

    @Test("A model that does not load makes the voice unavailable, with onnxruntime's reason, before any clip")
    func modelThatDoesNotLoad() async throws {
        let folder = try TemporaryFolder()
        let models = folder.path("models")
        try FileManager.default.createDirectory(atPath: models, withIntermediateDirectories: true)
        let real = try PiperSupport.installation!.model(for: PiperSupport.voice)
        try Data("not a network".utf8).write(to: URL(fileURLWithPath: models + "/en_US-joe-medium.onnx"))
        try FileManager.default.copyItem(atPath: real.configPath, toPath: models + "/en_US-joe-medium.onnx.json")
        let installation = PiperInstallation(python: PiperSupport.installation!.python, modelFolders: [models])
        let preparer = ClipPreparer(
            identity: ClipIdentity(cacheFolder: folder.path("cache"), voice: PiperSupport.voice),
            provider: PiperSpeechProvider(installation: installation)
        )
        do {
            _ = try await preparer.prepare(texts: ["Welcome."])
            Issue.record("a broken model prepared a clip")
        } catch {
            #expect(error.code == .voiceUnavailable)
            #expect(error.lines.count == 1)
            #expect(error.lines[0].hasPrefix("Piper voice en_US-joe-medium unavailable (InvalidProtobuf:"), "\(error)")
        }
        let cacheFiles = (try? FileManager.default.contentsOfDirectory(atPath: folder.path("cache"))) ?? []
        #expect(cacheFiles.isEmpty, "nothing stored")
    }
}

/// Falling back to the embedded voice: needs no Piper, since a missing model is found before the engine starts.
@Suite("Voice fallback", .tags(.concurrent))
struct VoiceFallbackTests {
    static func script(in folder: TemporaryFolder) throws -> Script {
        let json = """
            {"id": "fallback", "category": "test", "title": "Fallback", "subtitle": "s", "orderIndex": 1,
             "durationSeconds": 20, "segments": [
               {"id": "opening", "phase": "opening", "startSeconds": 0, "text": "Welcome."},
               {"id": "closing", "phase": "closing", "startSeconds": 10, "text": "Return slowly."}]}
            """
        try Data(json.utf8).write(to: URL(fileURLWithPath: folder.path("s.json")))
        return try ScriptFile.load(folder.path("s.json"))
    }

    static func pipeline(_ folder: TemporaryFolder, warnings: Warnings, fallback: Bool = true) -> SessionPipeline {
        let models = folder.path("no-models")
        try? FileManager.default.createDirectory(atPath: models, withIntermediateDirectories: true)
        var pipeline = SessionPipeline(
            clips: ClipIdentity(cacheFolder: folder.path("cache"), voice: PiperSupport.voice),
            plan: PlanSettings(seed: 7),
            source: .provider(try! ProviderSettings.local(piperModelFolders: [models]).makeProvider()),
            output: OutputSettings(audio: .path(folder.path("s.wav"))),
            observer: PipelineObserver(warning: warnings.add)
        )
        pipeline.fallbackVoice = fallback ? .embedded : nil
        return pipeline
    }

    @Test("A missing model: one warning, the clips in eSpeak under eSpeak's keys, and the timeline says which voice")
    func fallsBack() async throws {
        let folder = try TemporaryFolder()
        let warnings = Warnings()
        let timeline = try await Self.pipeline(folder, warnings: warnings).run(try Self.script(in: folder)).timeline
        #expect(warnings.all.count == 1)
        let reason = "no en_US-joe-medium.onnx with its .onnx.json in \(folder.path("no-models"))"
        let engine = "no Piper engine at \(PiperInstallation.located().python); scripts/setup-piper installs it"
        let said = PiperInstallation.located().engineInstalled ? reason : engine
        #expect(warnings.all.first == "Piper voice en_US-joe-medium unavailable (\(said)); using espeak:en-us")
        #expect(timeline.voice == "espeak:en-us")
        #expect(timeline.requestedVoice == "piper:en_US-joe-medium")
        let espeak = ClipIdentity(cacheFolder: folder.path("cache"), voice: "espeak:en-us")
        let stored = try FileManager.default.contentsOfDirectory(atPath: folder.path("cache")).filter {
            $0.hasSuffix(".mp3")
        }
        #expect(Set(stored) == Set(["Welcome.", "Return slowly."].map { espeak.entry(for: $0).key + ".mp3" }))
        #expect(
            timeline.items.compactMap(\.source?.path).allSatisfy {
                $0.hasPrefix(folder.path("cache")) || $0 == "builtin"
            }
        )
    }

    @Test("Without fallback, a missing model is one error line and nothing is written")
    func noFallback() async throws {
        let folder = try TemporaryFolder()
        let warnings = Warnings()
        let script = try Self.script(in: folder)
        let pipeline = Self.pipeline(folder, warnings: warnings, fallback: false)
        do {
            _ = try await pipeline.run(script)
            Issue.record("rendered without the voice")
        } catch {
            #expect(error.code == .voiceUnavailable && error.lines.count == 1)
            #expect(error.lines[0].hasPrefix("Piper voice en_US-joe-medium unavailable ("))
        }
        #expect(warnings.all.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.path("s.wav")))
    }

    @Test(
        "The fallback is eSpeak in the model's language",
        arguments: [
            ("piper:en_US-joe-medium", "espeak:en-us"), ("piper:en_GB-alan-low", "espeak:en-gb"),
            ("piper:de_DE-thorsten-high", "espeak:de"), ("piper:fr_FR-siwis-low", "espeak:fr-fr"),
            ("piper:my-voice", "espeak:en-us"), ("piper:xx_YY-nobody-low", "espeak:en-us"),
        ]
    )
    func fallbackLanguage(voice: String, fallback: String) throws {
        let languages = Set(try EmbeddedVoice.voices().flatMap(\.languages))
        #expect(languages.isSuperset(of: ["en-us", "en-gb", "de", "fr-fr"]))
        #expect(PiperModel.fallbackVoice(for: Voice(id: voice), languages: languages) == Voice(id: fallback))
    }
}
