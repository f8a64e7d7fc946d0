/// A number of sample frames: a position in a timeline or the length of a stretch of audio.
///
/// A frame is one instant across all channels. Inside the library every time is a `Frames`
/// value at one known ``SampleRate``; seconds exist only where JSON comes in or goes out, and
/// ``SampleRate/frames(atSeconds:)`` is the one place that turns seconds into frames.
public struct Frames: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The number of frames.
    public var count: Int64

    /// Creates a frame count.
    public init(_ count: Int64) {
        self.count = count
    }

    /// No frames.
    public static let zero = Frames(0)

    public static func < (lhs: Frames, rhs: Frames) -> Bool { lhs.count < rhs.count }
    public static func + (lhs: Frames, rhs: Frames) -> Frames { Frames(lhs.count + rhs.count) }
    public static func - (lhs: Frames, rhs: Frames) -> Frames { Frames(lhs.count - rhs.count) }
    public static func += (lhs: inout Frames, rhs: Frames) { lhs.count += rhs.count }

    public var description: String { String(count) }

    public init(from decoder: any Decoder) throws {
        count = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(count)
    }
}

/// A sample rate in frames per second, and the conversions between seconds and frames at it.
public struct SampleRate: Hashable, Sendable, CustomStringConvertible {
    /// The highest rate the library accepts, for sources and output alike.
    public static let maximum = 768_000

    /// Frames per second.
    public let hertz: Int

    /// Creates a sample rate; `nil` unless `hertz` lies in 1…``maximum``.
    public init?(_ hertz: Int) {
        guard (1...Self.maximum).contains(hertz) else { return nil }
        self.hertz = hertz
    }

    public var description: String { "\(hertz) Hz" }

    /// The frame at `seconds`: `round(seconds × rate)`, halves rounded away from zero.
    ///
    /// This is the only conversion from seconds to frames. Apply it to absolute positions
    /// (a start, an end) and take durations as differences of positions, so that parts always add
    /// up to the whole. Returns `nil` for values that are not finite, negative, or too large to count.
    public func frames(atSeconds seconds: Double) -> Frames? {
        guard seconds.isFinite, seconds >= 0, seconds <= Self.maximumSeconds else { return nil }
        let product = (seconds * Double(hertz)).rounded(.toNearestOrAwayFromZero)
        return Int64(exactly: product).map(Frames.init)
    }

    /// The time of `frames` in seconds, for JSON and messages.
    public func seconds(of frames: Frames) -> Double {
        Double(frames.count) / Double(hertz)
    }

    /// The length at this rate of `frames` frames recorded at `source`:
    /// `⌊(frames × self + source / 2) / source⌋`, that is, rounded to nearest with halves up.
    ///
    /// A resampled clip always has exactly this many frames, so a timeline can be planned from
    /// source lengths alone.
    public func frames(converting frames: Frames, from source: SampleRate) -> Frames {
        if source == self { return frames }
        let (product, overflow) = frames.count.multipliedReportingOverflow(by: Int64(hertz))
        precondition(!overflow && frames.count >= 0, "frame count \(frames) too large to convert")
        return Frames((product + Int64(source.hertz / 2)) / Int64(source.hertz))
    }

    /// The longest time any conversion accepts: ten days, far beyond any script's limit.
    static let maximumSeconds: Double = 864_000
}
