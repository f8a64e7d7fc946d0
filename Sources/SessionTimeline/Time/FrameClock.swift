/// Times as a person reads them: `m:ss.mmm`, `h:mm:ss.mmm` from an hour, to the nearest millisecond.
package enum FrameClock {
    /// `frames` at `rate` as `m:ss.mmm` (`h:mm:ss.mmm` from an hour).
    package static func time(_ frames: Frames, _ rate: SampleRate) -> String {
        let hertz = Int64(rate.hertz)
        return clock(milliseconds: (frames.count * 1_000 + hertz / 2) / hertz)
    }

    /// `m:ss.mmm` (`h:mm:ss.mmm` from an hour) of a whole number of milliseconds.
    package static func clock(milliseconds: Int64) -> String {
        "\(clock(seconds: milliseconds / 1_000)).\(String(milliseconds % 1_000 + 1_000).dropFirst())"
    }

    /// `m:ss` (`h:mm:ss` from an hour) of a whole number of seconds.
    package static func clock(seconds: Int64) -> String {
        let (hours, minutes, rest) = (seconds / 3_600, seconds / 60 % 60, seconds % 60)
        let tail = "\(rest < 10 ? "0" : "")\(rest)"
        if hours > 0 { return "\(hours):\(minutes < 10 ? "0" : "")\(minutes):\(tail)" }
        return "\(minutes):\(tail)"
    }
}
