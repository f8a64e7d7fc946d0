import Foundation
public import Testing

/// ffmpeg, as an independent meter: its `ebur128` filter's integrated loudness and true peak.
public enum FFmpeg {
    /// The `ffmpeg` on `PATH`, if there is one.
    public static let path: String? = {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return folders.map { "\($0)/ffmpeg" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// What ffmpeg's `ebur128=peak=true` filter measured of a file.
    public struct Measurement: Sendable {
        /// Integrated loudness in LUFS, to 0.001 (ffmpeg's `lavfi.r128.I`).
        public let integratedLoudness: Double
        /// The largest true peak of any channel, linear, as ffmpeg prints it: rounded to 0.001
        /// (`lavfi.r128.true_peak`).
        public let truePeak: Double
        /// The loudness range in LU (`lavfi.r128.LRA`).
        public let range: Double?
        /// The loudest momentary loudness (400 ms) it printed for any frame, LUFS (`lavfi.r128.M`).
        public var loudestMomentary: Double? = nil

        /// The most the true peak can be, given the rounding: `truePeak + 0.0005`, in dBTP.
        public var truePeakUpperBoundDecibels: Double { 20 * log10(truePeak + 0.0005) }

        /// Whether the true peak, as ffmpeg prints it, is at most `ceiling` (dBTP) printed the
        /// same way: the judgement at the meter's own resolution. Near −1 dBTP a printed step
        /// (0.001 linear) is 0.01 dB, so a file that a finer meter puts a few thousandths of a dB
        /// under the ceiling can print as one step over it: ``truePeakUpperBoundDecibels`` would
        /// fail it, depending on which side of the step the peak fell (a lossy file's peak moves
        /// with the encoder's work). A file a whole step over still fails.
        public func truePeakIsWithin(ceilingDecibels ceiling: Double) -> Bool {
            truePeak <= (pow(10, ceiling / 20) * 1_000).rounded() / 1_000
        }
        /// The true peak in dBTP.
        public var truePeakDecibels: Double { 20 * log10(truePeak) }
    }

    /// Runs `ffmpeg -i path -af ebur128=peak=true:metadata=1,ametadata=print` and reads the last values
    /// it printed. (The filter works at 48 kHz; ffmpeg resamples other rates to it first.)
    /// With `from` and `duration` (seconds), measures only that stretch of the file.
    public static func ebur128(
        _ path: String,
        from start: Double? = nil,
        duration: Double? = nil
    ) async throws
        -> Measurement
    {
        var arguments: [String] = []
        if let start { arguments += ["-ss", String(start)] }
        if let duration { arguments += ["-t", String(duration)] }
        return try await measure(path, arguments + ["-i", path, "-af", meter])
    }

    /// Measures only the frames of `spans` of the file, joined end to end in order (each cut
    /// to the sample with `atrim`, then `concat`): the loudness of the speech items' spans, say.
    public static func ebur128(_ path: String, spans: [Range<Int64>]) async throws -> Measurement {
        let cuts = spans.enumerated().map { index, span in
            "[0:a]atrim=start_sample=\(span.lowerBound):end_sample=\(span.upperBound),asetpts=N/SR/TB[s\(index)];"
        }
        let joined = spans.indices.map { "[s\($0)]" }.joined()
        let graph = cuts.joined() + "\(joined)concat=n=\(spans.count):v=0:a=1," + meter
        return try await measure(path, ["-i", path, "-filter_complex", graph])
    }

    /// Measures the sound file at `path` played at `gain` (linear) with half a second of silence
    /// before and after: its ``Measurement/loudestMomentary`` is the sound's loudest 400 ms as it
    /// sounds alone, however short it is.
    public static func ebur128(sound path: String, gain: Double) async throws -> Measurement {
        let graph = "volume=\(gain),adelay=500:all=1,apad=pad_dur=0.5," + meter
        return try await measure(path, ["-i", path, "-af", graph])
    }

    /// The filter that prints every measurement as metadata on stdout.
    private static let meter = "ebur128=peak=true:metadata=1,ametadata=mode=print:file=-"

    private static func measure(_ path: String, _ arguments: [String]) async throws -> Measurement {
        guard let ffmpeg = Self.path else { throw Failure(message: "ffmpeg is not installed") }
        let run = try await ChildProcess.run(
            ffmpeg,
            ["-hide_banner", "-nostats", "-nostdin"] + arguments + ["-f", "null", "-"]
        )
        var values: [String: Double] = [:]
        var loudestMomentary: Double?
        for line in run.standardOutputText.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = Double(parts[1]) else { continue }
            values[String(parts[0])] = value
            if parts[0] == "lavfi.r128.M", value.isFinite { loudestMomentary = max(loudestMomentary ?? value, value) }
        }
        guard run.termination == .exited(0), let loudness = values["lavfi.r128.I"],
            let peak = values["lavfi.r128.true_peak"]
        else {
            throw Failure(message: "ffmpeg's ebur128 filter printed no measurement of \(path)")
        }
        return Measurement(
            integratedLoudness: loudness,
            truePeak: peak,
            range: values["lavfi.r128.LRA"],
            loudestMomentary: loudestMomentary
        )
    }

    struct Failure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs a test only where ffmpeg is installed; elsewhere it is reported as skipped, with the reason.
    public static var requiresFFmpeg: Self {
        .enabled(if: FFmpeg.path != nil, "ffmpeg is not installed, so there is no independent meter")
    }
}
