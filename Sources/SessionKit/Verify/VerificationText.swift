import Foundation
import SessionTimeline

/// How verification messages write numbers, times and items, so that every sentence reads alike.
enum VerificationText {
    /// `26,818,560`.
    static func grouped(_ number: Int64) -> String {
        let digits = String(number.magnitude)
        var result = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return number < 0 ? "-" + result : result
    }

    /// `frame 231,525 (10.500 s)`.
    static func place(_ frame: Frames, rate: SampleRate) -> String {
        "frame \(grouped(frame.count)) (\(String(format: "%.3f", rate.seconds(of: frame))) s)"
    }

    /// `6,615 frames (300 ms)`, for a distance; never signed.
    static func distance(_ frames: Int64, rate: SampleRate) -> String {
        let count = Int64(frames.magnitude)
        let seconds = rate.seconds(of: Frames(count))
        let time = seconds < 1 ? "\(Int((seconds * 1_000).rounded())) ms" : String(format: "%.3f s", seconds)
        return "\(grouped(count)) frame\(count == 1 ? "" : "s") (\(time))"
    }

    /// `-23.4 dBFS`, or `-inf dBFS` for zero; a level that rounds to full scale is `0.0 dBFS`, never `-0.0`.
    static func decibels(_ level: Float) -> String {
        guard level > 0 else { return "-inf dBFS" }
        let decibels = (20 * log10(Double(level)) * 10).rounded() / 10
        return String(format: "%.1f dBFS", decibels == 0 ? 0 : decibels)
    }

    /// A figure in dB or LU to one decimal, `-16.1`; never `-0.0`.
    static func tenths(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return String(format: "%.1f", rounded == 0 ? 0 : rounded)
    }

    /// `item 3 (segment "tie", clip 086967d1…)`, `item 8 (bell "builtin")`.
    static func item(_ item: TimelineItem) -> String {
        var parts = ["\(item.kind.rawValue)"]
        if let name = name(of: item) { parts[0] += " \"\(name)\"" }
        if let key = item.clip?.key { parts.append("clip \(key.prefix(8))…") }
        return "item \(item.index) (\(parts.joined(separator: ", ")))"
    }

    /// A segment's id, an interjection's text, the bell's or a cue's name.
    static func name(of item: TimelineItem) -> String? {
        item.clip?.segmentId ?? item.name ?? item.clip?.text
    }
}
