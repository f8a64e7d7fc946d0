/// Times as a person reads them: `m:ss.mmm`, `h:mm:ss.mmm` from an hour, to the nearest millisecond.
package enum FrameClock {
    /// `frames` at `rate` as `m:ss.mmm` (`h:mm:ss.mmm` from an hour).
    package static func time(_ frames: Frames, _ rate: SampleRate) -> String {
        let hertz = Int64(rate.hertz)
        return clock(milliseconds: (frames.count * 1_000 + hertz / 2) / hertz)
    }

    /// `m:ss.mmm` (`h:mm:ss.mmm` from an hour) of a whole number of milliseconds.
    package static func clock(milliseconds: Int64) -> String {
        let (hours, minutes) = (milliseconds / 3_600_000, milliseconds / 60_000 % 60)
        let (seconds, fraction) = (milliseconds / 1_000 % 60, milliseconds % 1_000)
        let tail = "\(seconds < 10 ? "0" : "")\(seconds).\(String(fraction + 1_000).dropFirst())"
        if hours > 0 { return "\(hours):\(minutes < 10 ? "0" : "")\(minutes):\(tail)" }
        return "\(minutes):\(tail)"
    }
}
