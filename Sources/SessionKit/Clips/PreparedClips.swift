internal import Foundation
package import SessionTimeline

/// A clip that could not be made.
package struct ClipFailure: Sendable, Equatable, CustomStringConvertible {
    /// The clip.
    package let entry: ClipCache.Entry
    /// Why, as a phrase.
    package let reason: String

    /// `Cannot synthesize "text…" (key …): reason`.
    package var description: String {
        "Cannot synthesize \(quoted(entry.text)) (key \(entry.key)): \(reason)"
    }
}

/// What preparing found for each clip: measured and ready, missing, unusable, or failed to be made.
/// Planning takes its measurements from here, so no clip is measured twice.
public struct PreparedClips: Sendable {
    /// What became of one clip.
    package enum State: Sendable, Equatable {
        /// In the cache and measured: its file, rate and exact length.
        case ready(AudioSourceInfo)
        /// Not in the cache, and nothing made it.
        case missing
        /// In the cache but not a usable clip, and why.
        case unusable(String)
        /// The provider could not make it, and why.
        case failed(String)
    }

    /// Every clip the texts need, each key once, in the order of the texts.
    public let entries: [ClipCache.Entry]
    /// Each clip's state, by key.
    package var states: [String: State] = [:]
    /// Clips that were already in the cache.
    public var alreadyCached = 0
    /// Clips synthesized and stored.
    public var synthesized = 0
    /// Corrupt cache entries synthesized again.
    package var replaced = 0
    /// Time since preparing started.
    package var elapsed: Duration = .zero
    /// Voices that could not be had and the voice that spoke their clips instead: requested → used.
    public var voiceFallbacks: [Voice: Voice] = [:]
    /// Where each ready clip's words and sentences are, by key, for the clips whose engine said so.
    package var marks: [String: SpeechMarks] = [:]
    /// Why a clip synthesized in this run has no marks, by key, as its engine said
    /// (``SpeechResult/marksUnavailable``); see ``marksUnavailable(forKey:voice:)``.
    package var engineMarksNotes: [String: String] = [:]
    /// What the speech check heard of the clips, when it ran (`--check-speech`).
    package var speech: SpeechCheckSummary?

    init(entries: [ClipCache.Entry]) {
        self.entries = entries
    }

    /// These clips and `other`'s together, as if prepared at once (sessions spoken in other voices).
    func merging(_ other: PreparedClips) -> PreparedClips {
        var seen = Set(entries.map(\.key))
        var merged = PreparedClips(entries: entries + other.entries.filter { seen.insert($0.key).inserted })
        merged.states = states.merging(other.states) { first, _ in first }
        merged.alreadyCached = alreadyCached + other.alreadyCached
        merged.synthesized = synthesized + other.synthesized
        merged.replaced = replaced + other.replaced
        merged.elapsed = elapsed + other.elapsed
        merged.done = done + other.done
        merged.voiceFallbacks = voiceFallbacks.merging(other.voiceFallbacks) { first, _ in first }
        merged.marks = marks.merging(other.marks) { first, _ in first }
        merged.engineMarksNotes = engineMarksNotes.merging(other.engineMarksNotes) { first, _ in first }
        if let other = other.speech {
            var speech = self.speech ?? SpeechCheckSummary()
            speech.merge(other)
            merged.speech = speech
        } else {
            merged.speech = speech
        }
        return merged
    }

    /// Why the ready clip with `key`, spoken in `voice`, has no marks; `nil` when it has them.
    ///
    /// What its engine said when it was made in this run, else what every clip of the voice
    /// without marks shares: a server's voice gives none; an eSpeak NG clip's could not be
    /// recovered (``ClipCache/recoveredMarks(of:measured:language:speed:)``); a Piper clip was
    /// cached without them, and Piper's cannot be recovered from the sound.
    package func marksUnavailable(forKey key: String, voice: Voice) -> String? {
        guard marks[key] == nil else { return nil }
        if let note = engineMarksNotes[key] { return note }
        return switch voice {
        case .espeak:
            "the cached clip is not eSpeak NG's speech of its text at this speed, so its words could not be recovered"
        case .piper:
            "the clip was cached without its word timing, which cannot be recovered from Piper's sound"
        case .server:
            "the voice \(voice) gives no word timing"
        }
    }

    /// Clips the texts need.
    public var needed: Int { entries.count }
    /// Clips finished so far: found in the cache, synthesized, or failed.
    package var done = 0

    /// The entries that are not ready, in order, with why.
    package var problems: [(entry: ClipCache.Entry, state: State)] { problems(among: nil) }

    /// The entries with keys in `keys` (all if `nil`) that are not ready, in order, with why.
    func problems(among keys: Set<String>?) -> [(entry: ClipCache.Entry, state: State)] {
        entries.compactMap { entry in
            if let keys, !keys.contains(entry.key) { return nil }
            let state = states[entry.key] ?? .missing
            if case .ready = state { return nil }
            return (entry, state)
        }
    }

    /// The clips the provider could not make, in order.
    package var failures: [ClipFailure] {
        problems.compactMap {
            if case .failed(let reason) = $0.state { ClipFailure(entry: $0.entry, reason: reason) } else { nil }
        }
    }

    /// How many clips the provider could not make.
    public var failed: Int { failures.count }

    /// One line per cause for the entries that are not ready (`suffix` appended to each).
    ///
    /// Entries that failed for the same reason (an unknown voice, an unreachable server) are one
    /// line: `Cannot synthesize 8 clips ("Welcome…" and 7 more): eSpeak NG has no voice named "xx"`.
    public func problemLines(suffix: String = "") -> [String] {
        problemLines(among: nil, suffix: suffix)
    }

    /// ``problemLines(suffix:)`` for the entries with keys in `keys` (all if `nil`).
    func problemLines(among keys: Set<String>?, suffix: String) -> [String] {
        var lines: [String] = []
        var failures: [(reason: String, entries: [ClipCache.Entry])] = []
        for (entry, state) in problems(among: keys) {
            switch state {
            case .ready: continue
            case .missing:
                lines.append("No clip for \(quoted(entry.text)) (key \(entry.key)): nothing at \(entry.path)\(suffix)")
            case .unusable(let reason):
                lines.append("Clip for \(quoted(entry.text)) (key \(entry.key)): \(reason)\(suffix)")
            case .failed(let reason):
                if let index = failures.firstIndex(where: { $0.reason == reason }) {
                    failures[index].entries.append(entry)
                } else {
                    failures.append((reason, [entry]))
                }
            }
        }
        for (reason, entries) in failures {
            let first = entries[0]
            let what =
                entries.count == 1
                ? "\(quoted(first.text)) (key \(first.key))"
                : "\(entries.count) clips (\(quoted(first.text)) and \(entries.count - 1) more)"
            lines.append("Cannot synthesize \(what): \(reason)\(suffix)")
        }
        return lines
    }

    /// `8 clips needed: 3 already cached, 5 synthesized, 0 failed, in 2.10 s`.
    public var summary: String {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let replacedText = replaced > 0 ? " (\(replaced) corrupt entries replaced)" : ""
        let heard = speech.map { "; \($0.line)" } ?? ""
        return
            "\(needed) clips needed: \(alreadyCached) already cached, \(synthesized) synthesized\(replacedText), \(failed) failed, in \(String(format: "%.2f", seconds)) s\(heard)"
    }
}
