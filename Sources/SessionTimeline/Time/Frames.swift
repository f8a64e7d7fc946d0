/// A number of sample frames: a position in a timeline or the length of a stretch of audio.
///
/// A frame is one instant across all channels. Inside the library every time is a `Frames`
/// value at one known ``SampleRate``; seconds exist only where JSON comes in or goes out, and
/// ``SampleRate/frames(atSeconds:)`` is the one place that turns seconds into frames.
public struct Frames: Hashable, Comparable, Sendable, Codable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    /// The number of frames.
    public var count: Int64

    /// Creates a frame count.
    public init(_ count: Int64) {
        self.count = count
    }

    public init(integerLiteral count: Int64) {
        self.count = count
    }

    /// No frames.
    public static let zero = Frames(0)

    public static func < (lhs: Frames, rhs: Frames) -> Bool { lhs.count < rhs.count }
    public static func + (lhs: Frames, rhs: Frames) -> Frames { Frames(lhs.count + rhs.count) }
    public static func - (lhs: Frames, rhs: Frames) -> Frames { Frames(lhs.count - rhs.count) }
    public static func += (lhs: inout Frames, rhs: Frames) { lhs.count += rhs.count }
    public static func -= (lhs: inout Frames, rhs: Frames) { lhs.count -= rhs.count }

    public var description: String { String(count) }

    /// The most frames a file may give as a position or length: ten days at the highest rate
    /// (``SampleRate/supported``), 663,552,000,000. Any sum of a few such values fits an `Int64`,
    /// so a hostile timeline, queue or sidecar cannot make frame arithmetic overflow.
    package static let decodable = Frames(Int64(SampleRate.maximumSeconds) * Int64(SampleRate.supported.upperBound))

    /// Reads a frame count, refusing one below zero or above ``decodable`` with the JSON path.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        count = try container.decode(Int64.self)
        guard count >= 0, count <= Self.decodable.count else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "\(count) frames is outside 0…\(Self.decodable.count) (ten days at 768 kHz)"
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(count)
    }
}

/// A sample rate in frames per second, and the conversions between seconds and frames at it.
public struct SampleRate: Hashable, Comparable, Sendable, Codable, CustomStringConvertible, ExpressibleByIntegerLiteral
{
    /// The rates the library accepts, for sources and output alike: below 1 kHz a file is not
    /// speech or a bell, and above 768 kHz no audio format goes. The one place this range is set.
    package static let supported: ClosedRange<Int> = 1_000...768_000

    /// Frames per second.
    public let hertz: Int

    /// Creates a sample rate; `nil` unless `hertz` lies in ``supported``.
    public init?(_ hertz: Int) {
        guard Self.supported.contains(hertz) else { return nil }
        self.hertz = hertz
    }

    /// A rate written in code, such as `22_050`; a literal outside ``supported`` is a programmer error.
    public init(integerLiteral hertz: Int) {
        guard let rate = SampleRate(hertz) else { preconditionFailure("\(hertz) Hz is not a supported sample rate") }
        self = rate
    }

    public var description: String { "\(hertz) Hz" }

    public static func < (lhs: SampleRate, rhs: SampleRate) -> Bool { lhs.hertz < rhs.hertz }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let hertz = try container.decode(Int.self)
        guard let rate = SampleRate(hertz) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "\(hertz) Hz is outside \(Self.supported.lowerBound)…\(Self.supported.upperBound) Hz"
            )
        }
        self = rate
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hertz)
    }

    /// The frame at `seconds`: `round(seconds × rate)`, halves rounded away from zero.
    ///
    /// This is the only conversion from seconds to frames. Apply it to absolute positions
    /// (a start, an end) and take durations as differences of positions, so that parts always add
    /// up to the whole. Returns `nil` for values that are not finite, negative, or too large to count.
    public func frames(atSeconds seconds: Double) -> Frames? {
        guard seconds.isFinite, seconds >= 0, seconds <= Self.maximumSeconds else { return nil }
        let product = (seconds * Double(hertz)).rounded(.toNearestOrAwayFromZero)
        return Int64(exactly: product).map { Frames($0) }
    }

    /// The time of `frames` in seconds, for JSON and messages: the only conversion that way.
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

    /// The least common multiple of `rates` in hertz: the ticks a second in which a frame at any
    /// of them is a whole number of ticks, for counting time across items at different rates.
    /// `nil` when it would pass `limit`.
    package static func commonTicksPerSecond(_ rates: some Sequence<SampleRate>, limit: Int64 = 1 << 53) -> Int64? {
        var common: Int64 = 1
        for rate in Set(rates).map(\.hertz).sorted() {
            var (a, b) = (common, Int64(rate))
            while b != 0 { (a, b) = (b, a % b) }
            let (product, overflow) = (common / a).multipliedReportingOverflow(by: Int64(rate))
            guard !overflow, product <= limit else { return nil }
            common = product
        }
        return common
    }

    /// The longest time any conversion accepts: ten days, far beyond any script's limit.
    static let maximumSeconds: Double = 864_000
}

/// How many channels a frame holds: 1 for mono, 2 for stereo.
public struct ChannelCount: Hashable, Comparable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByIntegerLiteral
{
    /// The channel counts the library accepts in a source file (libsndfile's own limit is 1,024).
    package static let supported: ClosedRange<Int> = 1...1_024

    /// One channel.
    public static let mono = ChannelCount(uncheckedCount: 1)
    /// Two channels.
    public static let stereo = ChannelCount(uncheckedCount: 2)

    /// The number of channels.
    public let count: Int

    /// Creates a channel count; `nil` unless `count` lies in ``supported``.
    public init?(_ count: Int) {
        guard Self.supported.contains(count) else { return nil }
        self.count = count
    }

    private init(uncheckedCount count: Int) {
        self.count = count
    }

    /// A count written in code, such as `2`; a literal outside ``supported`` is a programmer error.
    public init(integerLiteral count: Int) {
        guard let channels = ChannelCount(count) else {
            preconditionFailure("\(count) is not a supported channel count")
        }
        self = channels
    }

    public var description: String { count == 1 ? "mono" : count == 2 ? "stereo" : "\(count) channels" }

    public static func < (lhs: ChannelCount, rhs: ChannelCount) -> Bool { lhs.count < rhs.count }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let count = try container.decode(Int.self)
        guard let channels = ChannelCount(count) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription:
                    "\(count) channels is outside \(Self.supported.lowerBound)…\(Self.supported.upperBound)"
            )
        }
        self = channels
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(count)
    }
}
