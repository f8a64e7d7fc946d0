extension AudioChapter {
    /// The chapter's start as `HH:MM:SS.mmm`, the form Vorbis-comment chapters (`CHAPTER001=…`) take.
    ///
    /// Every writer that stores chapters in seconds calls this one function, so a chapter starts at
    /// the same millisecond in every format. The start frame is rounded to the nearest millisecond,
    /// halves up (`round(startFrame × 1000 / rate)` in integers, so no float ever rounds twice);
    /// hours do not wrap at 24.
    package func timestamp(sampleRate: SampleRate) -> String {
        let milliseconds = startMilliseconds(at: sampleRate)
        let hours = milliseconds / 3_600_000
        let minutes = milliseconds / 60_000 % 60
        let seconds = milliseconds / 1_000 % 60
        return "\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(seconds, 2)).\(pad(milliseconds % 1_000, 3))"
    }

    /// Where the chapter starts, in whole milliseconds, rounded to nearest (halves up) in integers:
    /// the unit ID3 chapters count in, and what ``timestamp(sampleRate:)`` writes.
    package func startMilliseconds(at sampleRate: SampleRate) -> Int64 {
        Self.milliseconds(startFrame, at: sampleRate)
    }

    /// Where the chapter ends, in whole milliseconds, rounded as its start is.
    package func endMilliseconds(at sampleRate: SampleRate) -> Int64 {
        Self.milliseconds(endFrame, at: sampleRate)
    }

    private static func milliseconds(_ frames: Frames, at sampleRate: SampleRate) -> Int64 {
        let rate = Int64(sampleRate.hertz)
        return (max(frames.count, 0) * 1_000 * 2 + rate) / (2 * rate)
    }

    /// `value` in decimal, with leading zeros to `width` digits.
    private func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
