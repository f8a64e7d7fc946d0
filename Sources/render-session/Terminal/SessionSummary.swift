import Foundation
import SessionKit
import SessionTimeline

/// What a render or plan of one session came to: the facts its summary line says and `--json`
/// prints, gathered in one place so that the two never disagree.
struct SessionSummary: Encodable {
    var script: String
    var audio: String?
    var timeline: String?
    var totalFrames: Int64
    var durationSeconds: Double
    var sampleRate: Int
    /// The output's channels: the loudness figures are the file's as a meter reads it, which
    /// depends on the layout (a mono file's target is 3 LU under a stereo one's in the presets).
    var channels: Int
    var seed: UInt64
    var voice: Voice?
    var clips: Clips?
    var loudness: TimelineLoudness?
    var late: Late
    var elapsedSeconds: Double

    /// The voice the clips are in, the one asked for when another stood in, and where the
    /// asked-for one came from (`--voice`, `$RENDER_SESSION_VOICE`, `script`, `default`).
    struct Voice: Encodable {
        var used: String
        var requested: String?
        var origin: String
    }

    /// Where the clips came from.
    struct Clips: Encodable {
        var needed: Int
        var cached: Int
        var synthesized: Int
        var failed: Int
    }

    /// How many clips start after their planned start, the latest, and each of them.
    struct Late: Encodable {
        var count: Int
        var worstSeconds: Double?
        var worstText: String?
        /// Every late clip, where it is in the script and what overran it.
        var items: [LateClip]
    }

    init(
        _ timeline: Timeline,
        script source: Script?,
        prepared: PreparedClips?,
        voiceOrigin: String?,
        output: OutputSettings,
        elapsed: Duration
    ) {
        let rate = timeline.sampleRate
        script = timeline.scriptId
        audio = output.audio?.description
        self.timeline = output.timeline?.description
        totalFrames = timeline.totalFrames.count
        durationSeconds = timeline.durationSeconds
        sampleRate = rate.hertz
        channels = timeline.channelCount.count
        seed = timeline.seed
        if let used = timeline.voice {
            voice = Voice(used: used, requested: timeline.requestedVoice, origin: voiceOrigin ?? "default")
        }
        clips = prepared.map {
            Clips(needed: $0.needed, cached: $0.alreadyCached, synthesized: $0.synthesized, failed: $0.failed)
        }
        if let measured = timeline.loudness, measured.truePeak != nil { loudness = measured }
        let lateness = timeline.lateness
        late = Late(
            count: lateness.lateCount,
            worstSeconds: lateness.worst.map { Timeline.rounded(rate.seconds(of: $0.frames)) },
            worstText: lateness.worst?.text,
            items: LateClip.all(in: timeline, script: source)
        )
        elapsedSeconds = elapsed.roundedSeconds
    }

    /// `speech -16.0 LUFS, program -25.5 LUFS, LRA 14.8 LU, -1.2 dBTP, leveler up to 6.2 dB
    /// (9.8 s over 1 dB), limiter up to 2.1 dB (0.3 s over 1 dB)`: what a rendered timeline
    /// measured. A figure that could not be measured (no speech, silence) is left out.
    static func describe(_ loudness: TimelineLoudness) -> String {
        func lufs(_ value: Double) -> String { String(format: "%.1f", value) }
        var parts: [String] = []
        if let speech = loudness.speech { parts.append("speech \(lufs(speech)) LUFS") }
        if let program = loudness.program { parts.append("program \(lufs(program)) LUFS") }
        if let range = loudness.range { parts.append("LRA \(lufs(range)) LU") }
        if let peak = loudness.truePeak { parts.append("\(lufs(peak)) dBTP") }
        for (name, activity) in [("leveler", loudness.leveler), ("limiter", loudness.limiter)] {
            guard let activity, activity.maxReductionDecibels > 0 else { continue }
            parts.append(
                "\(name) up to \(lufs(activity.maxReductionDecibels)) dB (\(lufs(activity.secondsOverOneDecibel)) s over 1 dB)"
            )
        }
        // Once is the rule; more says the file decoded over the ceiling or off the target.
        if let encodings = loudness.encodings, encodings > 1 { parts.append("encoded \(encodings) times") }
        return parts.joined(separator: ", ")
    }

    /// The layout as ffmpeg names it: `mono`, `stereo`, else `N channels`.
    static func layout(_ channels: Int) -> String {
        switch channels {
        case 1: "mono"
        case 2: "stereo"
        default: "\(channels) channels"
        }
    }

    /// The summary: one line under 160 characters before the path, with what a person checks
    /// first, then indented lines with the rest.
    ///
    ///     Rendered s: 9:58.4 at 22050 Hz mono, speech -16.0 LUFS, -1.3 dBTP, 2 clips late (worst 6.9 s), in 0.21 s → out.wav
    ///       13191000 frames, seed 7, voice espeak:en-us (default), 24 clips (24 cached)
    ///       loudness: program -16.2 LUFS, LRA 2.1 LU, leveler up to 6.2 dB (9.8 s over 1 dB)
    func lines(verb: String) -> [String] {
        var first = ["\(Console.duration(durationSeconds)) at \(sampleRate) Hz \(Self.layout(channels))"]
        func lufs(_ value: Double) -> String { String(format: "%.1f", value) }
        if let speech = loudness?.speech { first.append("speech \(lufs(speech)) LUFS") }
        if let peak = loudness?.truePeak { first.append("\(lufs(peak)) dBTP") }
        if late.count > 0, let worst = late.worstSeconds {
            first.append("\(late.count) clip\(late.count == 1 ? "" : "s") late (worst \(lufs(worst)) s)")
        }
        first.append("in \(String(format: "%.2f", elapsedSeconds)) s")

        var facts = ["\(totalFrames) frames", "seed \(seed)"]
        if let voice {
            let origin = voice.origin == "script" ? "the script's" : voice.origin
            facts.append(
                voice.requested.map { "voice \(voice.used) standing in for \($0) (\(origin))" }
                    ?? "voice \(voice.used) (\(origin))"
            )
        }
        if let clips, clips.needed > 0 {
            var made = ["\(clips.cached) cached"]
            if clips.synthesized > 0 { made.append("\(clips.synthesized) synthesized") }
            if clips.failed > 0 { made.append("\(clips.failed) failed") }
            facts.append("\(clips.needed) clip\(clips.needed == 1 ? "" : "s") (\(made.joined(separator: ", ")))")
        }
        var lines = [
            "\(verb) \(script): \(first.joined(separator: ", "))\(audio.map { " → \($0)" } ?? "")",
            "  " + facts.joined(separator: ", "),
        ]
        if let loudness {
            var rest = loudness
            (rest.speech, rest.truePeak) = (nil, nil)
            let described = Self.describe(rest)
            if !described.isEmpty { lines.append("  loudness: \(described)") }
        }
        return lines
    }
}

extension Console {
    /// `value` as one line of JSON on standard output, keys sorted: what `--json` prints.
    static func printJSON(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return }
        notePrintedJSON()
        writeStandardOutput(printableJSON(data) + Data("\n".utf8))
    }
}
