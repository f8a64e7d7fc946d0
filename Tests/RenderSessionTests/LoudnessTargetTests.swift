import Foundation
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// Issue 25: the loudness a render prints is what an independent meter reads on the file it wrote,
/// under names that say what each figure is; a published target can be asked for by name, and
/// the program anchor brings the whole file to it.
@Suite("Loudness figures and targets, checked with ffmpeg's meter", .serialized)
struct LoudnessTargetTests {
    static let layered = [
        "Fixtures/scripts/ten-minute-session.json", "--cache", "Fixtures/cache", "--offline", "--seed", "7",
        "--ambience", "rain", "--start-gong", "gong",
    ]

    static func timeline(_ path: String) throws -> Timeline {
        try JSONDecoder().decode(Timeline.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The frames of the speech items (segments and interjections), in order, that lie in `range`.
    static func speechSpans(of timeline: Timeline, in range: Range<Int64>? = nil) -> [Range<Int64>] {
        timeline.items.filter { $0.kind == .segment || $0.kind == .interjection }.compactMap { item in
            let span = item.startFrame.count..<(item.startFrame + item.frameCount).count
            guard let range else { return span }
            let clamped = span.clamped(to: range)
            return clamped.isEmpty ? nil : clamped
        }
    }

    @Test(
        "Speech and program loudness, the range, every phase's speech: each as ffmpeg's ebur128 reads the file",
        .requiresFFmpeg
    )
    func figures() async throws {
        let folder = try TemporaryFolder()
        let render = try await renderSession(
            ["render"] + Self.layered + ["-o", folder.path("s.wav"), "--timeline", folder.path("s.json")]
        )
        #expect(render.status == 0, "\(render.standardError)")
        let timeline = try Self.timeline(folder.path("s.json"))
        let loudness = try #require(timeline.loudness)
        #expect(loudness.anchor == .speech && loudness.target == -16 && loudness.programGain == nil)
        let speech = try #require(loudness.speech)
        let program = try #require(loudness.program)

        let whole = try await FFmpeg.ebur128(folder.path("s.wav"))
        #expect(
            abs(program - whole.integratedLoudness) <= 0.2,
            "program \(program), ffmpeg \(whole.integratedLoudness)"
        )
        let range = try #require(loudness.range)
        #expect(abs(range - (whole.range ?? 0)) <= 0.5, "range \(range), ffmpeg \(whole.range ?? 0)")
        let spoken = try await FFmpeg.ebur128(folder.path("s.wav"), spans: Self.speechSpans(of: timeline))
        #expect(abs(speech - spoken.integratedLoudness) <= 0.3, "speech \(speech), ffmpeg \(spoken.integratedLoudness)")
        #expect(abs(speech - -16) <= 1.5, "the voice is what is brought to −16")
        #expect(program < speech - 5, "the bed-only stretches pull the program down: \(program) against \(speech)")
        #expect((loudness.maxShortTerm ?? -100) > speech, "the loudest 3 s are louder than the speech's average")

        #expect(loudness.phaseSpeech.count == timeline.phases.count && timeline.phases.count == 4)
        for (phase, measured) in zip(timeline.phases, loudness.phaseSpeech) {
            let spans = Self.speechSpans(of: timeline, in: phase.startFrame.count..<phase.endFrame.count)
            // The silence phase holds only interjections, which are speech too.
            let reference = try await FFmpeg.ebur128(folder.path("s.wav"), spans: spans).integratedLoudness
            #expect(abs((measured ?? 0) - reference) <= 0.3, "\(phase.name): \(measured ?? 0), ffmpeg \(reference)")
        }
        let limiter = try #require(loudness.limiter)
        #expect(limiter.maxReductionDecibels > 0 && limiter.secondsOverOneDecibel >= 0)
        // The bed, the gong and the bell reach at most 0.5 dB under where the limiter starts
        // (the ceiling less the codec's room): their peaks are set by their gains.
        let limit = loudness.ceiling - (loudness.codecHeadroom ?? 0) - 0.5
        let sounds =
            timeline.overlays.map { ($0.name, $0.gain, $0.source.truePeak) }
            + timeline.items.filter { $0.kind == .bell }.map { ($0.name, $0.gain, $0.source?.truePeak) }
        #expect(sounds.count == 3)
        for (name, gain, peak) in sounds {
            let peak = try #require(peak, "\(name ?? "") has its true peak measured")
            // The JSON gives the peak to 0.01 dB.
            #expect(peak + 20 * log10(gain) <= limit + 0.005, "\(name ?? ""): \(peak) dBTP at gain \(gain)")
        }

        func one(_ value: Double) -> String { String(format: "%.1f", value) }
        #expect(
            render.standardError.contains(", speech \(one(speech)) LUFS, ")
                && render.standardError.contains("\n  loudness: program \(one(program)) LUFS, LRA \(one(range)) LU, "),
            "\(render.standardError)"
        )
    }

    @Test(
        "--loudness -16 --loudness-anchor program: the whole file at −16 ±0.5 LUFS in ffmpeg's meter, in WAV, MP3 and Opus",
        .requiresFFmpeg
    )
    func programAnchor() async throws {
        let folder = try TemporaryFolder()
        let program = ["--loudness", "-16", "--loudness-anchor", "program"]
        let planned = try await renderSession(["timeline"] + Self.layered + program)
        #expect(planned.status == 0, "\(planned.standardError)")
        let plan = try JSONDecoder().decode(Timeline.self, from: Data(planned.standardOutputBytes))
        for format in ["wav", "mp3", "opus"] {
            let path = folder.path("p.\(format)")
            let render = try await renderSession(
                ["render"] + Self.layered + program + ["-o", path, "--timeline", path + ".json"]
            )
            #expect(render.status == 0, "\(render.standardError)")
            let written = try Self.timeline(path + ".json")
            let loudness = try #require(written.loudness)
            #expect(loudness.anchor == .program && loudness.target == -16 && loudness.ceiling == -1)
            #expect(loudness.programGain != nil)
            // Limiting past 6 dB is said once, on its own line, before the summary.
            let squashed = (loudness.limiter?.maxReductionDecibels ?? 0) > 6
            let warnings = render.standardError.split(separator: "\n").filter {
                $0.hasPrefix("warning: the program anchor's gain of +") && $0.contains(" dB of limiting (")
                    && $0.hasSuffix("anchored on the speech instead, the voice keeps the target without it")
            }
            #expect(warnings.count == (squashed ? 1 : 0), "\(format): \(render.standardError)")
            if format == "wav" {
                // The same mix: the same rate, and the same room under the ceiling as 16-bit WAV.
                #expect(loudness.programGain == plan.loudness?.programGain, "timeline plans the same gain")
            }
            // A lossy file that decoded over the ceiling all the same was encoded again with only
            // the moments that went over lowered: the program keeps the target.
            #expect(format != "wav" || loudness.ceilingCorrection == nil, "WAV has no codec to correct for")
            let aim = -16 + Self.wholeFileCorrection(loudness)
            let measured = try await FFmpeg.ebur128(path).integratedLoudness
            #expect(abs(measured - aim) <= 0.5, "\(format): ffmpeg reads \(measured) LUFS")
            #expect(abs((loudness.program ?? 0) - aim) <= 0.5, "\(format): we read \(loudness.program ?? 0) LUFS")
        }
    }

    @Test(
        "The −1 dBTP ceiling holds on what ffmpeg decodes, in every format and at low bit rates, with Piper's speech, a bed and gongs; --verify agrees",
        .requiresFFmpeg,
        .requiresPiper
    )
    func ceilingAfterEncoding() async throws {
        let folder = try TemporaryFolder()
        let session = [
            "Fixtures/scripts/ten-minute-session.json", "--cache", folder.path("cache"), "--seed", "7",
            "--voice", "piper:en_US-joe-medium", "--ambience", "rain", "--start-gong", "gong",
            "--interval-gong", "gong", "--interval-minutes", "5",
        ]
        let prepared = try await renderSession(["prepare"] + session.prefix(3) + ["--voice", "piper:en_US-joe-medium"])
        #expect(prepared.status == 0, "\(prepared.standardError)")
        let cases: [(String, [String])] = [
            ("s.wav", []), ("s.flac", []), ("s.mp3", []), ("s56.mp3", ["--bitrate", "56"]),
            ("s64.mp3", ["--bitrate", "64"]), ("s.opus", []), ("s24.opus", ["--bitrate", "24"]),
            ("s64.opus", ["--bitrate", "64"]), ("s.ogg", []),
        ]
        for (name, options) in cases {
            let path = folder.path(name)
            let render = try await renderSession(
                ["render"] + session + options + ["--offline", "--verify", "-o", path, "--timeline", path + ".json"]
            )
            #expect(render.status == 0, "\(name): \(render.standardError)")
            let meter = try await FFmpeg.ebur128(path)
            #expect(
                meter.truePeakIsWithin(ceilingDecibels: -1.0),
                "\(name): ffmpeg reads \(meter.truePeakDecibels) dBTP"
            )
            let timeline = try Self.timeline(path + ".json")
            let loudness = try #require(timeline.loudness)
            #expect((loudness.truePeak ?? 0) <= -1.0, "\(name): the timeline says \(loudness.truePeak ?? 0) dBTP")
            #expect(loudness.codecHeadroom != nil)
            // Issue 39, item 7: the voice at the target in every format, as decoded, and the
            // figures reported are the decoded file's.
            // Piper's clips differ with each synthesis (its noise), and at 24 kb/s Opus the limiter
            // gives the codec's room from the voice: the speech decoded at -16.6 and -16.75 LUFS in
            // two runs. Held there to what verify holds every file to (issue 42, item 5).
            let tolerance = name == "s24.opus" ? 1.0 : 0.5
            try await Self.expectDecodedFigures(
                of: path,
                timeline: timeline,
                name: name,
                peak: meter,
                within: tolerance
            )
        }
    }

    /// How much quieter a corrective encoding made the whole file, dB: 0 when it lowered only the
    /// moments that went over (a correction, if any, is then at most 3 dB deep and lasts under
    /// 5 s), the correction itself when those moments were too many to tell.
    static func wholeFileCorrection(_ loudness: TimelineLoudness) -> Double {
        guard let correction = loudness.ceilingCorrection else { return 0 }
        #expect(correction < 0 && correction > -3, "made \(correction) dB quieter")
        guard let seconds = loudness.ceilingCorrectedSeconds else { return correction }
        #expect(seconds > 0 && seconds < 5, "\(seconds) s lowered")
        return 0
    }

    /// Expects `path`, rendered as `timeline` says, to measure in ffmpeg what its anchor aims at
    /// (within `tolerance`, 0.5 LU by default, of the target) and what the timeline reports (true peak within 0.15 dB under
    /// and 0.25 over, loudness within 0.3 LU): issue 39's "one loudness in every format".
    static func expectDecodedFigures(
        of path: String,
        timeline: Timeline,
        name: String,
        peak meter: FFmpeg.Measurement,
        within tolerance: Double = 0.5
    ) async throws {
        let loudness = try #require(timeline.loudness)
        // Never under ffmpeg's by more than 0.15 dB; over it by up to 0.25 (libsoxr's and
        // ffmpeg's resamplers to 48 kHz make different peaks between samples: a Vorbis file read
        // -1.49 here and -1.65 in ffmpeg). Reading more is the safe side of a ceiling.
        let peakDifference = (loudness.truePeak ?? 0) - meter.truePeakDecibels
        #expect(
            peakDifference >= -0.15 && peakDifference <= 0.25,
            "\(name): reported \(loudness.truePeak ?? 0) dBTP, ffmpeg \(meter.truePeakDecibels)"
        )
        let measured: Double
        let reported: Double?
        if loudness.anchor == .speech {
            measured = try await FFmpeg.ebur128(path, spans: Self.speechSpans(of: timeline)).integratedLoudness
            reported = loudness.speech
        } else {
            measured = meter.integratedLoudness
            reported = loudness.program
        }
        // A file that decoded over the ceiling all the same was encoded again with the moments
        // that went over lowered, a few seconds at most: its anchor keeps the target.
        let aim = loudness.target + Self.wholeFileCorrection(loudness)
        #expect(
            abs(measured - aim) <= tolerance,
            "\(name): \(loudness.anchor) \(measured) LUFS in ffmpeg, aiming at \(aim) (\(loudness))"
        )
        #expect(abs((reported ?? 0) - measured) <= 0.3, "\(name): reported \(reported ?? 0), ffmpeg \(measured)")
    }

    @Test(
        "eSpeak NG's peaky voice, at 24 kb/s Opus anchored on the speech and in M4A on the program: each at the target and under the ceiling as decoded; in Vorbis, over it once, then encoded again with those moments lowered and the speech still at the target",
        .requiresFFmpeg
    )
    func oneLoudnessInLossyFormats() async throws {
        let folder = try TemporaryFolder()
        // Vorbis is the codec the probe misses: its first file decodes over the ceiling and is
        // encoded again with the moments that went over lowered (docs/formats.md).
        let cases: [(String, [String], corrected: Bool)] = [
            ("s24.opus", ["--bitrate", "24"], false),
            ("p.m4a", ["--loudness-anchor", "program"], false),
            ("s.ogg", ["--verify"], true),
        ]
        for (name, options, corrected) in cases {
            let path = folder.path(name)
            let render = try await renderSession(
                ["render", "Fixtures/scripts/ten-minute-session.json", "--cache", "Fixtures/cache", "--offline"]
                    + ["--seed", "7", "-o", path, "--timeline", path + ".json"] + options
            )
            #expect(render.status == 0, "\(name): \(render.standardError)")
            let meter = try await FFmpeg.ebur128(path)
            #expect(
                meter.truePeakIsWithin(ceilingDecibels: -1.0),
                "\(name): ffmpeg reads \(meter.truePeakDecibels) dBTP"
            )
            let timeline = try Self.timeline(path + ".json")
            #expect((timeline.loudness?.ceilingCorrection != nil) == corrected, "\(name): \(render.standardError)")
            #expect((timeline.loudness?.ceilingCorrectedSeconds != nil) == corrected, "\(name): lowered locally")
            // Issue 42, item 5: the timeline counts the encodings, and the summary says a second.
            #expect(timeline.loudness?.encodings == (corrected ? 2 : 1), "\(name)")
            #expect(render.standardError.contains(", encoded 2 times") == corrected, "\(name): \(render.standardError)")
            try await Self.expectDecodedFigures(of: path, timeline: timeline, name: name, peak: meter)
        }
    }

    @Test(
        "Presets set the target (the mono figure for the fixture's mono file) and ceiling by name, in a flag or a script; a misspelt one is an error naming the nearest",
        arguments: [
            (["--loudness", "streaming"], nil as String?, -17.0, LoudnessAnchor.speech),
            (["--loudness", "streaming", "--channels", "2"], nil as String?, -14.0, LoudnessAnchor.speech),
            (["--loudness", "ebu-r128", "--loudness-anchor", "speech"], nil, -23, .speech),
            ([], #""loudness": "speech", "loudnessAnchor": "program""#, -21, .program),
            (["--loudness", "podcast"], #""loudness": -20"#, -19, .speech),
            (["--loudness", "-16"], #""loudness": "podcast""#, -16, .speech),
        ]
    )
    func presets(flags: [String], sound: String?, target: Double, anchor: LoudnessAnchor) async throws {
        let folder = try TemporaryFolder()
        var script = "Fixtures/scripts/ten-minute-session.json"
        if let sound {
            let text = try String(contentsOfFile: script, encoding: .utf8)
            script = folder.path("s.json")
            try text.replacingOccurrences(of: #""title":"#, with: #""sound": {\#(sound)}, "title":"#)
                .write(toFile: script, atomically: true, encoding: .utf8)
        }
        let result = try await renderSession(
            ["timeline", script, "--cache", "Fixtures/cache", "--offline", "--seed", "7"] + flags
        )
        #expect(result.status == 0, "\(result.standardError)")
        let loudness = try JSONDecoder().decode(Timeline.self, from: Data(result.standardOutputBytes)).loudness
        #expect(loudness?.target == target && loudness?.ceiling == -1 && loudness?.anchor == anchor)
    }

    @Test(
        "The target is the file's as ffmpeg reads it in any layout: stereo speech at −16 (it read 3 LU over), a mono podcast at AES TD1004's −19; the summary names the layout",
        .requiresFFmpeg
    )
    func targetPerLayout() async throws {
        let folder = try TemporaryFolder()
        let cases: [(name: String, options: [String], target: Double, layout: String)] = [
            ("stereo", ["--channels", "2"], -16, "stereo"),
            ("mono-podcast", ["--loudness", "podcast"], -19, "mono"),
            ("stereo-podcast", ["--loudness", "podcast", "--channels", "2"], -16, "stereo"),
            ("mono", [], -16, "mono"),
        ]
        for (name, options, target, layout) in cases {
            let path = folder.path("\(name).wav")
            let render = try await renderSession(
                ["render"] + Self.layered + options + ["-o", path, "--timeline", path + ".json"]
            )
            #expect(render.status == 0, "\(render.standardError)")
            #expect(
                render.standardError.contains(" Hz \(layout), speech ") && render.standardError.contains(", seed 7, "),
                "\(name): \(render.standardError)"
            )
            let timeline = try Self.timeline(path + ".json")
            #expect(timeline.loudness?.target == target, "\(name)")
            let speech = timeline.items.filter { $0.clip != nil }.map {
                $0.startFrame.count..<$0.startFrame.count + $0.frameCount.count
            }
            let measured = try await FFmpeg.ebur128(path, spans: speech).integratedLoudness
            #expect(abs(measured - target) <= 0.5, "\(name): ffmpeg reads the speech at \(measured) LUFS")
            #expect(
                abs((timeline.loudness?.speech ?? 0) - target) <= 0.5,
                "\(name): we read \(timeline.loudness?.speech ?? 0)"
            )
        }
    }

    @Test("A misspelt preset or anchor is an error before any work, naming the nearest")
    func misspelt() async throws {
        let flag = try await renderSession([
            "timeline", "Fixtures/scripts/ten-minute-session.json", "--loudness", "podcats",
        ])
        #expect(flag.status == 64)
        #expect(
            flag.standardError.hasPrefix(
                "error: The value 'podcats' is invalid for '--loudness <lufs|preset|off>': a loudness is a number of LUFS, such as -16, a preset (podcast, streaming, ebu-r128, speech), or off (did you mean \"podcast\"?)\n"
            ),
            "\(flag.standardError)"
        )
        let anchor = try await renderSession(
            ["timeline", "Fixtures/scripts/ten-minute-session.json", "--loudness-anchor", "programme"]
        )
        #expect(anchor.status == 64)
        #expect(anchor.standardError.contains("programme"), "\(anchor.standardError)")

        let folder = try TemporaryFolder()
        let text = try String(contentsOfFile: "Fixtures/scripts/ten-minute-session.json", encoding: .utf8)
        try text.replacingOccurrences(
            of: #""title":"#,
            with: #""sound": {"loudness": "podcats", "loudnessAnchor": "speach"}, "title":"#
        )
        .write(toFile: folder.path("s.json"), atomically: true, encoding: .utf8)
        let script = try await renderSession([
            "timeline", folder.path("s.json"), "--cache", "Fixtures/cache", "--offline",
        ])
        #expect(script.status == 65)
        #expect(
            script.standardError.contains(
                #"sound.loudness: "podcats" is not a preset; expected a number of LUFS or one of "off", "podcast", "streaming", "ebu-r128", "speech" (did you mean "podcast"?)"#
            ),
            "\(script.standardError)"
        )
        #expect(
            script.standardError.contains(
                #"sound.loudnessAnchor: expected "speech" or "program", found "speach" (did you mean "speech"?)"#
            ),
            "\(script.standardError)"
        )
    }

    @Test(
        "A target out of the limiter's reach (eSpeak NG's speech at −8 LUFS under −1 dBTP lands near −12) ships, but with a warning naming the file, the figure and why; verify and the batch index flag it; --json counts the encodings (issue 42, item 5)",
        .requiresFFmpeg
    )
    func offTarget() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("loud.wav")
        let render = try await renderSession(
            ["render"] + Self.layered + ["--loudness", "-8", "-o", path, "--json"]
        )
        #expect(render.status == 0, "\(render.standardError)")
        let warning = render.standardError.split(separator: "\n").first { $0.hasPrefix("warning: ") }
        #expect(
            warning?.contains(
                #/^warning: .*/loud\.wav: the speech measures -1[0-9]\.[0-9] LUFS as played, [2-9]\.[0-9] LU under the target of -8 LUFS: the limiter already takes off up to [0-9]+\.[0-9] dB to hold the ceiling of -1 dBTP; a lower target keeps the voice$/#
            ) == true,
            "\(render.standardError)"
        )
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(render.standardOutputBytes)) as? [String: Any]
        )
        let loudness = try #require(summary["loudness"] as? [String: Any])
        #expect(loudness["encodings"] as? Int == 1, "\(loudness)")
        let speech = try #require(loudness["speech"] as? Double)
        let ffmpeg = try await FFmpeg.ebur128(
            path,
            spans: Self.speechSpans(of: try Self.timeline(path + ".timeline.json"))
        )
        #expect(abs(ffmpeg.integratedLoudness - speech) <= 0.3, "ffmpeg \(ffmpeg.integratedLoudness), ours \(speech)")
        #expect(speech < -9, "\(speech)")

        let verified = try await renderSession(["verify", path])
        #expect(verified.status == 1)
        #expect(
            verified.standardOutput.contains(
                #/loud\.wav: the speech loudness is -1[0-9]\.[0-9] LUFS, [2-9]\.[0-9] LU under the target of -8\.0 LUFS \(±1 LU\)/#
            ),
            "\(verified.standardOutput)"
        )
        // The batch warns per session, and its index flags the session, which counts as failed.
        let batch = try await renderSession([
            "batch", "Fixtures/scripts", "-o", folder.path("out"), "--cache", "Fixtures/cache", "--offline",
            "--loudness", "-8", "--preview",
        ])
        #expect(batch.status == 1, "\(batch.standardError)")
        #expect(
            batch.standardError.contains(
                #/warning: ten-minute-session: .*/ten-minute-session\.wav: the speech measures -1[0-9]\.[0-9] LUFS as played/#
            ),
            "\(batch.standardError)"
        )
        let index = try String(contentsOfFile: folder.path("out/index.html"), encoding: .utf8)
        #expect(
            index.contains(
                #/<tr class="problem" data-session="ten-minute-session">.*the speech loudness is -1[0-9]\.[0-9] LUFS, [2-9]\.[0-9] LU under the target of -8\.0 LUFS/#
            ),
            "\(index)"
        )
        // At the default target the same session verifies clean, held to the target too.
        let usual = folder.path("usual.wav")
        #expect(try await renderSession(["render"] + Self.layered + ["-o", usual]).status == 0)
        let clean = try await renderSession(["verify", usual])
        #expect(clean.status == 0, "\(clean.standardOutput)\(clean.standardError)")
    }

    @Test(
        "verify measures the decoded file's loudness and true peak as played, and holds them to the timeline's ceiling and targets"
    )
    func verifyLoudness() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("s.wav")
        let render = try await renderSession(
            ["render"] + Self.layered + ["-o", path, "--timeline", path + ".timeline.json"]
        )
        #expect(render.status == 0, "\(render.standardError)")
        let clean = try await renderSession(["verify", path, "--json"])
        #expect(clean.status == 0, "\(clean.standardError)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(clean.standardOutputBytes)) as? [String: Any]
        )
        let measured = try #require(report["loudness"] as? [String: Any])
        let timeline = try Self.timeline(path + ".timeline.json")
        let rendered = try #require(timeline.loudness)
        #expect(abs((measured["program"] as? Double ?? 0) - (rendered.program ?? 0)) <= 0.05)
        #expect(abs((measured["speech"] as? Double ?? 0) - (rendered.speech ?? 0)) <= 0.05)
        #expect((measured["truePeak"] as? Double ?? 0) <= -1, "at 48 kHz, under the ceiling")
        #expect(clean.standardError.contains(", speech "), "\(clean.standardError)")

        // The same file held to a lower ceiling and, anchored on the program, to a louder target.
        var stricter = timeline
        stricter.loudness?.ceiling = -3
        stricter.loudness?.anchor = .program
        stricter.loudness?.target = -20
        try TimelineJSON.encode(stricter).write(to: URL(fileURLWithPath: path + ".timeline.json"))
        let failed = try await renderSession(["verify", path])
        #expect(failed.status == 1)
        let lines = failed.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(failed.standardOutput)")
        #expect(
            lines.first?.contains(
                #/the true peak as played at 48 kHz is -[0-9]+\.[0-9] dBTP, over the ceiling of -3\.0 dBTP/#
            )
                == true,
            "\(lines)"
        )
        #expect(
            lines.last?.contains(
                #/the program loudness is -2[0-9]\.[0-9] LUFS, [0-9]+\.[0-9] LU under the target of -20\.0 LUFS \(±1 LU\)/#
            )
                == true,
            "\(lines)"
        )
    }
}
