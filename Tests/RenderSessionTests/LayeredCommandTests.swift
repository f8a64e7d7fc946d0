import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// The layers as the command offers them: the issue's example end to end, the sound options'
/// usage errors, and the missing-sound warning and `--strict`.
@Suite("Layers on the command line", .serialized)
struct LayeredCommandTests {
    /// An environment whose default sound library is made afresh in `folder`.
    static func environment(_ folder: TemporaryFolder) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CACHE_HOME"] = folder.path("xdg-cache")
        return environment
    }

    @Test(
        "The issue's example, the lead-in a silent countdown: then a bed in every gap, a gong at 0:05 and 5:05 (none at 10:05), −16 LUFS, true peak ≤ −1 dBTP",
        .requiresFFmpeg
    )
    func issueExample() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession(
            [
                "render", "Fixtures/scripts/ten-minute-session.json", "-o", folder.path("layered.wav"),
                "--ambience", "rain", "--start-gong", "gong", "--interval-gong", "gong", "--interval-minutes", "5",
                "--lead-in", "5", "--timeline", folder.path("layered.json"),
                "--cache", Repository.cache.path, "--offline", "--seed", "7",
            ],
            environment: Self.environment(folder)
        )
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.standardError.contains(" LUFS, "),
            "the summary line gives the loudness: \(result.standardError)"
        )
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder.path("layered.json")))
        )
        let rate: Int64 = 22_050
        #expect(timeline.totalFrames.count == (5 + 600 + 12) * rate)
        #expect(timeline.leadInFrames.count == 5 * rate)
        let gongs = timeline.overlays.filter { $0.kind == .gong }.map(\.startFrame.count)
        // The lead-in is the countdown (seed 002): the start gong and the bed begin at its end.
        #expect(gongs == [5 * rate, 305 * rate], "0:05 and 5:05; 10:05 is not before durationSeconds")
        let bed = try #require(timeline.overlays.first { $0.kind == .ambience })
        #expect(bed.startFrame.count == 5 * rate && bed.endFrame == timeline.totalFrames && bed.name == "rain")
        #expect(timeline.skippedSounds.isEmpty)

        let samples = try Self.decodedSamples(folder.path("layered.wav"))
        #expect(Int64(samples.count) == timeline.totalFrames.count)
        #expect(samples[0..<Int(5 * rate)].allSatisfy { $0 == 0 }, "the countdown is silent")
        for item in timeline.items where item.kind == .silence && item.startFrame >= timeline.leadInFrames {
            // The bed is audible in every gap: its middle half is far above digital silence.
            let start = Int(item.startFrame.count + item.frameCount.count / 4)
            let interior = samples[start..<(start + Int(item.frameCount.count / 2))]
            var power = 0.0
            for sample in interior { power += Double(sample) * Double(sample) }
            let decibels = 10 * log10(power / Double(interior.count))
            #expect(decibels > -60, "gap \(item.index) holds the bed: \(decibels) dBFS")
        }

        let whole = try await FFmpeg.ebur128(folder.path("layered.wav"))
        #expect(whole.truePeakUpperBoundDecibels <= -1.0, "true peak \(whole.truePeakDecibels) dBTP")
        for phase in timeline.phases {
            let clips = timeline.items.filter {
                $0.clip != nil && $0.startFrame >= phase.startFrame && $0.startFrame < phase.endFrame
            }
            for clip in clips {
                let measured = try await FFmpeg.ebur128(
                    folder.path("layered.wav"),
                    from: Double(clip.startFrame.count) / Double(rate),
                    duration: Double(clip.frameCount.count) / Double(rate)
                )
                #expect(
                    abs(measured.integratedLoudness - -16) <= 1,
                    "\(phase.name), item \(clip.index): \(measured.integratedLoudness) LUFS"
                )
            }
        }
    }

    @Test(
        "Ring, then speak: the first word waits until the start gong has fallen 10 dB (by a plain RMS reading too), the limiter works at most 2 dB; --speech-over-gongs keeps the overlap",
        .requiresFFmpeg
    )
    func speechAfterTheStrike() async throws {
        let folder = try TemporaryFolder()
        func render(_ name: String, _ extra: [String] = []) async throws -> Timeline {
            let result = try await renderSession(
                [
                    "render", "Fixtures/scripts/ten-minute-session.json", "-o", folder.path("\(name).wav"),
                    "--ambience", "rain", "--start-gong", "gong", "--interval-gong", "gong", "--interval-minutes", "5",
                    "--timeline", folder.path("\(name).json"), "--cache", Repository.cache.path, "--offline",
                    "--seed", "7",
                ] + extra,
                environment: Self.environment(folder)
            )
            #expect(result.status == 0, "\(result.standardError)")
            #expect(
                !result.standardError.contains("late"),
                "waiting for a gong is not lateness: \(result.standardError)"
            )
            return try JSONDecoder().decode(
                Timeline.self,
                from: Data(contentsOf: URL(fileURLWithPath: folder.path("\(name).json")))
            )
        }
        let timeline = try await render("waits")
        let gong = try #require(timeline.overlays.first { $0.kind == .gong })
        let strike = try #require(gong.source.strikeFrames)
        let first = try #require(timeline.items.first { $0.clip != nil })
        let waited = timeline.sampleRate.frames(converting: strike, from: gong.source.sampleRate)
        #expect(gong.startFrame == .zero && first.startFrame == waited && waited > .zero)
        #expect(first.clip?.lateByFrames == waited && first.clip?.lateCause == .gong)
        // It was 3.6 dB on the strike, 1.8 dB once speech waited; the speech anchor's gain, which
        // makes up what the limiter takes off the voice (issue 39, item 7), adds about 0.6 dB.
        #expect((timeline.loudness?.limiter?.maxReductionDecibels ?? 99) <= 2.5, "it was 3.6 dB on the strike")

        // The gong file as ffmpeg decodes it, at the session's rate: the end of its last 100 ms
        // (plain RMS, every 10 ms) within 10 dB of its loudest, which K-weighting moves only a little.
        // The timeline names the gong by its path within the (default) library.
        let gongFile =
            SoundLibrary.defaultFolder(environment: Self.environment(folder)) + "/" + (try #require(gong.source.path))
        let decoded = try await ChildProcess.run(
            try #require(FFmpeg.path),
            [
                "-v", "error", "-i", gongFile, "-ar", "\(timeline.sampleRate.hertz)", "-ac", "1",
                "-f", "f32le", "-",
            ]
        )
        let samples = decoded.standardOutput.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let block = timeline.sampleRate.hertz / 10
        let hop = timeline.sampleRate.hertz / 100
        let energies = stride(from: 0, to: samples.count - block, by: hop).map { start in
            samples[start..<start + block].reduce(0.0) { $0 + Double($1) * Double($1) }
        }
        let loudest = try #require(energies.max())
        let lastLoud = try #require(energies.lastIndex { $0 >= loudest / 10 })
        let plainStrikeEnd = Int64(lastLoud * hop + block)
        #expect(
            abs(first.startFrame.count - plainStrikeEnd) <= Int64(hop * 10),
            "speech at \(first.startFrame), the strike by plain RMS ends at \(plainStrikeEnd)"
        )

        let overlapping = try await render("overlaps", ["--speech-over-gongs"])
        let firstOverlapping = try #require(overlapping.items.first { $0.clip != nil })
        #expect(firstOverlapping.startFrame == .zero && firstOverlapping.clip?.lateCause == nil)
    }

    /// Every sample of a mono file, decoded.
    static func decodedSamples(_ path: String) throws -> [Float] {
        let decoder = try AudioFileDecoder(path: path)
        var samples: [Float] = []
        var block: [Float] = []
        while case let frames = try decoder.read(into: &block, maximumFrames: 65_536), frames > 0 {
            samples += block[0..<(frames * decoder.channelCount.count)]
        }
        return samples
    }

    @Test("Sound options out of range are usage errors naming the option and the range")
    func usageErrors() async throws {
        let cases: [([String], String)] = [
            (["--ambience-gain", "5"], "--ambience-gain: 5 is outside 0…4"),
            (
                ["--loudness", "loud"],
                "a loudness is a number of LUFS, such as -16, a preset (podcast, streaming, ebu-r128, speech), or off"
            ),
            (["--loudness", "3"], "--loudness: 3 is outside -70…0 LUFS"),
            (["--true-peak", "2"], "--true-peak: 2 is outside -20…0"),
            (["--interval-minutes", "0"], "--interval-minutes: 0 must be greater than 0 and at most 1440"),
            (["--lead-in", "-1"], "--lead-in: -1 is outside 0…3600"),
        ]
        for (options, message) in cases {
            let result = try await renderSession(
                ["timeline", "Fixtures/scripts/edge-cases.json", "--cache", Repository.cache.path, "--offline"]
                    + options
            )
            #expect(result.status == 64, "\(options)")
            #expect(result.standardError.contains(message), "\(options): \(result.standardError)")
            #expect(result.standardOutput.isEmpty)
        }
    }

    @Test(
        "A missing sound: one error line before any work, exit 1, no file; --allow-missing-sounds: one warning, exit 0, listed as skipped",
        arguments: [
            // No name near: the library's names instead (issue 42, item 7).
            ("--ambience", "forest", "Ambience", #", which has "gong""#),
            ("--start-gong", "gongg", "Start gong", #" (did you mean "gong"?)"#),
            ("--bell", "gnog", "Bell", #" (did you mean "gong"?)"#),
        ]
    )
    func missingSound(flag: String, name: String, role: String, suggestion: String) async throws {
        let folder = try TemporaryFolder()
        let library = folder.path("library")
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: library + "/gong.wav"))
        let arguments = [
            "render", "Fixtures/scripts/edge-cases.json", "--cache", Repository.cache.path, "--offline",
            "--sounds", library, flag, name, "--timeline", folder.path("t.json"),
        ]
        // The flag the name came from, in parentheses (issue 42, item 7).
        let notFound = #"\#(role) "\#(name)" (\#(flag)) is not in the sound library \#(library)\#(suggestion)"#
        let refused = try await renderSession(arguments + ["-o", folder.path("b.wav")])
        #expect(refused.status == 65)
        #expect(refused.standardError == "error: \(notFound); --allow-missing-sounds leaves it out\n")
        #expect(!FileManager.default.fileExists(atPath: folder.path("b.wav")))
        #expect(!FileManager.default.fileExists(atPath: folder.path("t.json")))

        let allowed = try await renderSession(arguments + ["-o", folder.path("a.wav"), "--allow-missing-sounds"])
        #expect(allowed.status == 0, "\(allowed.standardError)")
        let warnings = allowed.standardError.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        // The sound's one warning; the others are edge-cases.json's late clips.
        #expect(warnings.first == "warning: \(notFound); it is left out")
        #expect(warnings.dropFirst().allSatisfy { $0.contains(" s late: ") }, "\(warnings)")
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder.path("t.json")))
        )
        #expect(timeline.skippedSounds.map(\.name) == [name])
    }

    @Test("A sound given as a path is used as is; the default library is not made for it")
    func soundByPath() async throws {
        let folder = try TemporaryFolder()
        let made = try await renderSession(["silence", "--seconds", "1", "-o", folder.path("gong.wav")])
        #expect(made.status == 0)
        let result = try await renderSession(
            [
                "timeline", "Fixtures/scripts/edge-cases.json", "--cache", Repository.cache.path, "--offline",
                "--allow-missing", "--start-gong", folder.path("gong.wav"), "--loudness", "off",
            ],
            environment: Self.environment(folder)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let timeline = try JSONDecoder().decode(Timeline.self, from: Data(result.standardOutputBytes))
        #expect(timeline.overlays.map(\.source.path) == ["gong.wav"], "the file's name, not this machine's path")
        #expect(timeline.overlays.map(\.name) == ["gong.wav"])
        #expect(!FileManager.default.fileExists(atPath: folder.path("xdg-cache/render-session/sounds")))
    }
}
