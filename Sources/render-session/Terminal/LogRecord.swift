import Foundation

/// One line of `--log-format json` on standard error: when, how grave, which event, the line a
/// person would have read, and the event's own fields beside them (docs/cli.md#logs-for-machines).
///
/// `{"event":"sessionDone","level":"info","message":"calm: rendered …","session":"calm",…,"time":"2026-12-07T17:40:02.125Z"}`
///
/// The keys are sorted and every line is one object, as log collectors (Fluent Bit, Vector,
/// Loki's `json` stage) read them; `time` is RFC 3339 in UTC to the millisecond, as Kubernetes'
/// own JSON logs give it. An event's fields never reuse the four common keys.
struct LogRecord: Encodable, Sendable {
    /// `info`, `warning` or `error`, as in Kubernetes' and most collectors' levels.
    enum Level: String, Encodable, Sendable {
        case info, warning, error
    }

    var time: Date
    var level: Level
    /// What happened: `start`, `clipMade`, `clipFailed`, `retry`, `progress`, `stage`,
    /// `sessionDone`, `summary`, or `status`, `warning` and `error` for the other lines.
    var event: String
    var message: String
    /// The event's own keys, written beside the common ones.
    var fields: (any Encodable & Sendable)?

    init(level: Level, event: String, message: String, fields: (any Encodable & Sendable)? = nil) {
        time = Date()
        self.level = level
        self.event = event
        self.message = message
        self.fields = fields
    }

    /// `2026-12-07T17:40:02.125Z`.
    private static let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)

    private enum CodingKeys: String, CodingKey {
        case time, level, event, message
    }

    func encode(to encoder: any Encoder) throws {
        // The fields first, into the same object: a field that reused a common key is overwritten.
        try fields?.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(time.ISO8601Format(Self.timeFormat), forKey: .time)
        try container.encode(level, forKey: .level)
        try container.encode(event, forKey: .event)
        try container.encode(message, forKey: .message)
    }
}
