import Foundation
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// The other kinds end to end: the fixtures batch-render, and a rendered cue sits at its frame.
@Suite("Session kinds on the command line", .serialized)
struct SessionKindsCommandTests {
    @Test(
        "batch renders a folder mixing all five kinds; every output is as long as its timeline; every cue, gong and bell as loud as the voice",
        .requiresFFmpeg
    )
    func batchAllKinds() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession(
            ["batch", "Fixtures/sessions", "-o", folder.path("out"), "--seed", "7", "--cache", folder.path("cache")],
            environment: LayeredCommandTests.environment(folder)
        )
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("5 rendered, 0 up to date, 0 failed"), "\(result.standardError)")
        var kinds: [String] = []
        for id in ["atem-4-7-8-box", "back-and-hips", "intervals-4x40", "offen", "still-moment-timer"] {
            let timeline = try JSONDecoder().decode(
                Timeline.self,
                from: Data(contentsOf: URL(fileURLWithPath: folder.path("out/\(id).wav.timeline.json")))
            )
            kinds.append(timeline.sessionKind ?? "guided")
            let samples = try LayeredCommandTests.decodedSamples(folder.path("out/\(id).wav"))
            #expect(Int64(samples.count) == timeline.totalFrames.count * Int64(timeline.channelCount.count))
        }
        #expect(kinds == ["breathing", "stretch", "workout", "open", "timer"])
        for id in ["atem-4-7-8-box", "intervals-4x40", "offen", "still-moment-timer"] {
            try await Self.expectSoundsLevelWithTheVoice(
                folder.path("out/\(id).wav.timeline.json"),
                library: SoundLibrary.defaultFolder(environment: LayeredCommandTests.environment(folder))
            )
        }
    }

    /// Expects every sound but a bed in the timeline at `path` (its cues, gongs and bells) to play
    /// its loudest 400 ms within −6…+2 LU of the speech target, as ffmpeg's meter reads the sound
    /// at its gain: a 150 ms countdown beep included (it played 11 dB over the voice). A sound's
    /// `source` is its path within the sound `library`.
    static func expectSoundsLevelWithTheVoice(_ path: String, library: String) async throws {
        let timeline = try JSONDecoder().decode(Timeline.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        let target = try #require(timeline.loudness?.target)
        var sounds = timeline.overlays.filter { $0.kind != .ambience }.map { ($0.name, $0.source, $0.gain) }
        sounds += timeline.items.filter { $0.kind == .bell }.compactMap { item in
            item.source.map { ("bell", $0, item.gain) }
        }
        var measured = Set<String>()
        for (name, source, gain) in sounds {
            guard let relative = source.path, measured.insert("\(relative) \(gain)").inserted else { continue }
            let file = (library as NSString).appendingPathComponent(relative)
            let loudest = try #require(try await FFmpeg.ebur128(sound: file, gain: gain).loudestMomentary)
            #expect(
                (target - 6...target + 2).contains(loudest),
                "\(timeline.scriptId): \(name)'s loudest 400 ms at \(loudest) LUFS, the target \(target)"
            )
        }
        #expect(!measured.isEmpty, "\(path) plays sounds")
    }

    @Test("A timer is silent through its countdown and its start gong sounds at the countdown's end")
    func timerGongAtItsFrame() async throws {
        let folder = try TemporaryFolder()
        let session = folder.path("timer.json")
        try Data(
            #"{"kind": "timer", "id": "t", "title": "T", "countdownSeconds": 2, "durationSeconds": 3}"#.utf8
        ).write(to: URL(fileURLWithPath: session))
        let result = try await renderSession(
            [
                "render", session, "-o", folder.path("t.wav"), "--timeline", folder.path("t.json"),
                "--sample-rate", "8000", "--loudness", "off",
            ],
            environment: LayeredCommandTests.environment(folder)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder.path("t.json")))
        )
        let gong = try #require(timeline.overlays.first { $0.cue?.role == "start" })
        #expect(gong.startFrame == 16_000 && gong.name == "gong")
        #expect(timeline.items.last?.kind == .bell && timeline.items.last?.startFrame == 40_000)
        let samples = try LayeredCommandTests.decodedSamples(folder.path("t.wav"))
        #expect(Int64(samples.count) == timeline.totalFrames.count)
        #expect(samples[0..<16_000].allSatisfy { $0 == 0 }, "the countdown is silent")
        #expect(samples[16_000..<16_400].contains { abs($0) > 0.01 }, "the gong sounds from its frame")
    }

    @Test(
        "A timer over the app's own sound library (seed 002's sounds.json): its forest bed at its volume, stopping when the timer completes"
    )
    func timerOverTheAppsLibrary() async throws {
        let folder = try TemporaryFolder()
        let timeline = try await Self.renderTimerOverTheAppsLibrary(ambience: "forest", in: folder)
        let bed = try #require(timeline.overlays.first { $0.kind == .ambience })
        #expect(bed.name == "forest" && bed.gain == 0.15, "the entry's volume is the bed's gain")
        #expect(bed.source.path == "forest-ambience.mp3", "its path within the library")
        #expect(bed.startFrame == 16_000 && bed.endFrame == 40_000, "from the start gong to the timer's end")
        let samples = try LayeredCommandTests.decodedSamples(folder.path("t.wav"))
        #expect(samples[20_000..<24_000].contains { abs($0) > 0.001 }, "the forest plays")
        #expect(samples[40_000...].allSatisfy { $0 == 0 }, "nothing after the timer completes: no end gong, no bed")
    }

    /// Renders a 1 s countdown and a 20 s timer whose `backgroundSoundId` is `background`, over
    /// the default library, at 8 kHz with loudness on: the start gong rings from 1 s to 15 s, the
    /// bed plays from 1 s to 21 s, the end gong (`completion`, 20 s) from 21 s to the end.
    static func timerOverTheDefaultLibrary(
        background: String,
        in folder: TemporaryFolder
    ) async throws -> (timeline: Timeline, json: String, samples: [Float]) {
        let session = folder.path("timer.json")
        try Data(
            #"{"kind": "timer", "id": "t", "title": "T", "countdownSeconds": 1, "durationSeconds": 20, "backgroundSoundId": "\#(background)"}"#
                .utf8
        ).write(to: URL(fileURLWithPath: session))
        let result = try await renderSession(
            [
                "render", session, "-o", folder.path("t.wav"), "--timeline", folder.path("t.json"),
                "--sample-rate", "8000",
            ],
            environment: LayeredCommandTests.environment(folder)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let json = try String(contentsOfFile: folder.path("t.json"), encoding: .utf8)
        let timeline = try JSONDecoder().decode(Timeline.self, from: Data(json.utf8))
        #expect(timeline.totalFrames == 328_000, "21 s and the end gong's 20 s at 8 kHz")
        let bed = try #require(timeline.overlays.first { $0.kind == .ambience })
        #expect(bed.name == background && bed.startFrame == 8_000 && bed.endFrame == 168_000)
        #expect(bed.source.path == "\(background).flac", "its path within the default library")
        let samples = try LayeredCommandTests.decodedSamples(folder.path("t.wav"))
        #expect(samples.count == 328_000)
        #expect(samples[0..<8_000].allSatisfy { $0 == 0 }, "the countdown is silent")
        return (timeline, json, samples)
    }

    @Test(
        "A timer whose background is the app's default, silent: the bed is digital silence, measured as silent, and adds nothing"
    )
    func timerOverTheDefaultLibrarySilent() async throws {
        let folder = try TemporaryFolder()
        let (timeline, json, samples) = try await Self.timerOverTheDefaultLibrary(background: "silent", in: folder)
        let bed = try #require(timeline.overlays.first { $0.kind == .ambience })
        // Nothing passes the loudness gates and there is no peak: no loudness or true peak, and the
        // entry's gain, 0.15, as it is: no gain brings silence to a target.
        #expect(bed.source.loudness == nil && bed.source.truePeak == nil && bed.gain == 0.15)
        #expect(bed.source.frameCount == 44_100 && bed.source.sampleRate == 44_100)
        #expect(!json.contains("NaN") && !json.lowercased().contains("infinity"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let overlays = try #require(object["overlays"] as? [[String: Any]])
        let written = try #require(overlays.first { $0["kind"] as? String == "ambience" })
        #expect(written["loudness"] == nil && written["truePeak"] == nil, "\(written)")
        #expect(timeline.loudness?.program != nil, "the gongs are measured")
        #expect(samples[8_000..<8_400].contains { abs($0) > 0.01 }, "the start gong sounds")
        #expect(samples[128_000..<168_000].allSatisfy { $0.bitPattern == 0 }, "only the bed plays: digital zero")
        #expect(samples[168_000..<168_400].contains { abs($0) > 0.01 }, "the end gong sounds")

        // show reads it: the bed a row of its own, at its gain.
        let shown = try await renderSession(
            ["show", folder.path("t.json")],
            environment: LayeredCommandTests.environment(folder)
        )
        #expect(shown.status == 0, "\(shown.standardError)")
        #expect(
            shown.standardOutput.contains("silent") && shown.standardOutput.contains("-16.5 dB"),
            "\(shown.standardOutput)"
        )
    }

    @Test("A timer whose background is forest, from the default library: the bed sounds where only it plays")
    func timerOverTheDefaultLibraryForest() async throws {
        let folder = try TemporaryFolder()
        let (timeline, _, samples) = try await Self.timerOverTheDefaultLibrary(background: "forest", in: folder)
        let bed = try #require(timeline.overlays.first { $0.kind == .ambience })
        #expect(bed.source.frameCount == 1_058_400 && bed.source.loudness != nil && bed.source.truePeak != nil)
        let level = (samples[128_000..<168_000].map { Double($0 * $0) }.reduce(0, +) / 40_000).squareRoot()
        #expect(level > 0.001 && level < 0.1, "the forest plays, quietly: RMS \(level)")
    }

    @Test(
        "A timer over the app's library with its silent bed: silence.m4a (AAC in MP4) is found and decoded, not reported missing"
    )
    func timerWithTheAppsSilentBed() async throws {
        let folder = try TemporaryFolder()
        let timeline = try await Self.renderTimerOverTheAppsLibrary(ambience: "silent", in: folder)
        let bed = try #require(timeline.overlays.first { $0.kind == .ambience })
        #expect(bed.name == "silent" && bed.gain == 0.15, "the entry's volume is the bed's gain")
        #expect(bed.source.path == "silence.m4a", "its path within the library")
        #expect(
            bed.source.frameCount == 44_100 && bed.source.sampleRate == 44_100 && bed.source.gapless,
            "one second, exactly, at its rate"
        )
        #expect(bed.startFrame == 16_000 && bed.endFrame == 40_000, "from the start gong to the timer's end")
        let samples = try LayeredCommandTests.decodedSamples(folder.path("t.wav"))
        #expect(Int64(samples.count) == timeline.totalFrames.count)
        #expect(samples.allSatisfy { $0 == 0 }, "digital silence, looped, with no gongs in this library")
    }

    @Test(
        "Issue 28's library: the app's silence.m4a as the bed and a gong in CAF holding AAC, rendered to M4B: exact length through ffmpeg, the gong on its frame",
        .requiresFFmpeg
    )
    func libraryOfAACSoundsToM4B() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path("sounds")
        try FileManager.default.copyItem(atPath: "Fixtures/sounds/still-moment", toPath: library)
        // A gong as an Apple app ships a cue: AAC in CAF (ffmpeg 5.1 cannot write one; built from ADTS).
        try await FFmpeg.encode(
            "sine=frequency=660:sample_rate=8000:duration=0.5",
            ["-af", "volume=-6dB", "-c:a", "aac", "-f", "adts"],
            to: folder.path("gong.aac"),
            lavfi: true
        )
        let adts = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder.path("gong.aac"))))
        try CAFWithAAC.file(fromADTS: adts, validFrames: 4_000, primingFrames: 1_024)
            .write(to: URL(fileURLWithPath: library + "/gong.caf"))
        let session = folder.path("timer.json")
        try Data(
            #"{"kind": "timer", "id": "t", "title": "T", "countdownSeconds": 2, "durationSeconds": 3, "ambience": "silent", "startGong": "gong"}"#
                .utf8
        ).write(to: URL(fileURLWithPath: session))
        let result = try await renderSession(
            [
                "render", session, "-o", folder.path("t.m4b"), "--timeline", folder.path("t.json"), "--sample-rate",
                "8000", "--loudness", "off", "--sounds", library, "--allow-missing-sounds", "--verify",
            ],
            environment: LayeredCommandTests.environment(folder)
        )
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.standardError.contains("verified \(folder.path("t.m4b")): 0 problems"),
            "\(result.standardError)"
        )
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder.path("t.json")))
        )
        let gong = try #require(timeline.overlays.first { $0.name == "gong" })
        #expect(
            gong.source.path == "gong.caf" && gong.source.frameCount == 4_000 && gong.startFrame == 16_000
        )
        let decoded = try await FFmpeg.decode(folder.path("t.m4b")).samples
        #expect(Int64(decoded.count) == timeline.totalFrames.count)
        #expect(decoded[0..<15_000].allSatisfy { $0 == 0 }, "the countdown decodes to digital zero")
        #expect(decoded[16_000..<16_400].contains { abs($0) > 0.05 }, "the gong sounds from its frame")
    }

    /// Renders a 3-s timer with a 2-s countdown over seed 002's library (Fixtures/sounds/still-moment),
    /// its `ambience` the bed, into `folder`'s t.wav and t.json; the library has no gongs, so they
    /// are left out. Expects the render to succeed and to name no sound missing but the gongs.
    static func renderTimerOverTheAppsLibrary(ambience: String, in folder: TemporaryFolder) async throws -> Timeline {
        let session = folder.path("timer.json")
        try Data(
            #"{"kind": "timer", "id": "t", "title": "T", "countdownSeconds": 2, "durationSeconds": 3, "ambience": "\#(ambience)"}"#
                .utf8
        ).write(to: URL(fileURLWithPath: session))
        let result = try await renderSession(
            [
                "render", session, "-o", folder.path("t.wav"), "--timeline", folder.path("t.json"),
                "--sample-rate", "8000", "--loudness", "off", "--sounds", "Fixtures/sounds/still-moment",
                "--allow-missing-sounds",
            ],
            environment: LayeredCommandTests.environment(folder)
        )
        #expect(result.status == 0, "\(result.standardError)")
        // (The missing bell's line lists the library's names, the bed's among them: a line about
        // the bed itself would say `Cue sound "forest" is …`.)
        #expect(
            !result.standardError.contains("\"\(ambience)\" is "),
            "the bed is not missing: \(result.standardError)"
        )
        return try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder.path("t.json")))
        )
    }

    @Test(
        "A stretching region file's id is its file name without .json; stretching from standard input or a name that is no id"
    )
    func regionFileIdentifier() async throws {
        let folder = try TemporaryFolder()
        let regions = Data(
            #"[{"id": "back", "region": "back", "displayName": "Back", "stretches": [{"id": "b1", "name": "B1", "description": "b one", "bilateral": false}]}]"#
                .utf8
        )
        func scriptId(_ path: String, input: Data? = nil) async throws -> String? {
            let result = try await renderSession(
                ["timeline", path, "--cache", folder.path("cache")],
                environment: LayeredCommandTests.environment(folder),
                input: input
            )
            #expect(result.status == 0, "\(result.standardError)")
            let json = try JSONSerialization.jsonObject(with: Data(result.standardOutputBytes)) as? [String: Any]
            #expect(json?["title"] as? String == "Stretching")
            return json?["scriptId"] as? String
        }
        for name in ["back-and-neck.json", "two words.json"] {
            try regions.write(to: folder.url.appendingPathComponent(name))
        }
        #expect(try await scriptId(folder.path("back-and-neck.json")) == "back-and-neck")
        #expect(try await scriptId(folder.path("two words.json")) == "stretching", "a space is not allowed in an id")
        #expect(try await scriptId("-", input: regions) == "stretching")
    }

    @Test("--stretch-seconds sets the length a region file's stretches lack; a region's own and a stretch's own win")
    func stretchSeconds() async throws {
        let folder = try TemporaryFolder()
        let file = "Fixtures/stretches/back-and-neck.json"
        let result = try await renderSession(
            ["timeline", file, "--cache", folder.path("cache"), "--seed", "1", "--stretch-seconds", "30"],
            environment: LayeredCommandTests.environment(folder)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let timeline = try JSONDecoder().decode(Timeline.self, from: Data(result.standardOutputBytes))
        let rate = Int64(timeline.sampleRate.hertz)
        // One stretch from each region: the back's lasts 30 s (the command's), the neck's 45 or 20 (the file's).
        let phases = timeline.phases.map { ($0.name, $0.startFrame.count) }
        #expect(phases.count == 3 && phases[0].1 == 0 && phases[1].1 == 30 * rate, "\(phases)")
        let neck = phases[1].0
        #expect(["neck-side-tilt", "neck-chin-tuck"].contains(neck))
        #expect(phases[2] == ("complete", (30 + (neck == "neck-side-tilt" ? 45 : 20)) * rate))

        // Too long for a session, said with the flag's name; an impossible length is a usage error.
        let long = try await renderSession(
            ["timeline", file, "--cache", folder.path("cache"), "--seed", "1", "--stretch-seconds", "86400"],
            environment: LayeredCommandTests.environment(folder)
        )
        #expect(long.status == 65)
        #expect(
            long.standardError
                == "error: back-and-neck: (session): --stretch-seconds makes it last 86445 s, longer than the limit of 86400 (24 hours)\n"
        )
        let zero = try await renderSession(["timeline", file, "--stretch-seconds", "0"])
        #expect(zero.status == 64 && zero.standardError.contains("--stretch-seconds"))
    }
}
