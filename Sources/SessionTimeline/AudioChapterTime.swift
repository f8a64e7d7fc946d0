extension AudioChapter {
    /// The chapter's start as `HH:MM:SS.mmm`, the form Vorbis-comment chapters (`CHAPTER001=…`) take.
    ///
    /// Every writer that stores chapters in seconds calls this one function, so a chapter starts at
    /// the same millisecond in every format. The start frame is rounded to the nearest millisecond,
    /// halves up (`round(startFrame × 1000 / rate)` in integers, so no float ever rounds twice);
    /// hours do not wrap at 24.
    public func timestamp(sampleRate: SampleRate) -> String {
        let rate = Int64(sampleRate.hertz)
        let milliseconds = (max(startFrame.count, 0) * 1_000 * 2 + rate) / (2 * rate)
        let hours = milliseconds / 3_600_000
        let minutes = milliseconds / 60_000 % 60
        let seconds = milliseconds / 1_000 % 60
        return "\(pad(hours, 2)):\(pad(minutes, 2)):\(pad(seconds, 2)).\(pad(milliseconds % 1_000, 3))"
    }

    /// `value` in decimal, with leading zeros to `width` digits.
    private func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
