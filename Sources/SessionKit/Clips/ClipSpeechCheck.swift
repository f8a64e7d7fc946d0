import Foundation
import SessionTimeline

/// What a clip's heard sidecar, `{key}.heard.json` beside `{key}.mp3`, records: that the speech
/// check heard the clip say its text, what it heard, and the size and SHA-256 of the exact bytes
/// it heard, so that a clip is heard once (the check is the slowest part of a warm run) and a
/// pass is never trusted for other bytes.
struct HeardSidecar: ClipSidecar, Equatable {
    /// The format's version, which the check's rules are part of: rules that change are a new one.
    static let version = 1
    /// The largest sidecar read: a clip of 5,000 characters is heard in about 30 KB.
    static let maximumBytes = 1 << 20

    var version: Int
    var bytes: Int
    var sha256: String
    /// The text the clip was heard saying.
    var text: String
    var heard: SpeechCheckSummary.HeardClip

    init(_ heard: SpeechCheckSummary.HeardClip, text: String, of clip: ClipFingerprint) {
        version = Self.version
        bytes = clip.bytes
        sha256 = clip.sha256
        self.text = text
        self.heard = heard
    }
}

extension ClipCache {
    /// Where the heard sidecar of the clip with `key` is stored: `{key}.heard.json`.
    func heardPath(forKey key: String) -> String {
        (directory as NSString).appendingPathComponent("\(key).heard.json")
    }

    /// What the check heard of the entry's clip before, if a sidecar says it passed for these
    /// exact bytes and this text.
    func heardBefore(_ entry: Entry) -> SpeechCheckSummary.HeardClip? {
        let path = heardPath(forKey: entry.key)
        guard FileManager.default.fileExists(atPath: path), let sidecar = HeardSidecar.read(from: path),
            sidecar.text == entry.text, !sidecar.heard.failed,
            let fingerprint = ClipFingerprint(path: entry.path),
            sidecar.bytes == fingerprint.bytes, sidecar.sha256 == fingerprint.sha256
        else { return nil }
        return sidecar.heard
    }

    /// Removes `entry`'s clip and its sidecars (a clip this run made that failed the speech check
    /// in every try: a later run that does not check must not find it, and synthesizes it anew).
    func discard(_ entry: Entry) {
        for path in [
            entry.path, marksPath(forKey: entry.key), loudnessPath(forKey: entry.key), heardPath(forKey: entry.key),
        ] {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

extension ClipPreparer {
    /// How many times a clip is synthesized in all before failing the speech check fails it.
    static let speechCheckTries = 3

    /// Runs the speech check (`--check-speech`) over the ready clips of `result`: each clip in the
    /// cache is transcribed and compared with its text. A clip that fails is synthesized again and
    /// checked again, up to ``speechCheckTries`` times in all; one that still fails (or that
    /// cannot be made again: offline) is a failed clip, with what was heard against its text, so
    /// that nothing is rendered from it; the clip the last try made is removed from the cache (one
    /// found there offline is the user's, and stays). Clips from the cache are checked too: a
    /// cache entry swapped for another text's clip is caught and replaced. A clip that passes gets
    /// a heard sidecar, and is not heard again while its bytes and text stay the same.
    ///
    /// `result.speech` gets what the last check of each clip heard.
    /// - Throws: ``SessionError`` (`recognizerUnavailable`) when the recognizer cannot run;
    ///   `cancelled`.
    package func checkSpeech(
        of result: inout PreparedClips,
        with check: SpeechCheck,
        warn: @Sendable (String) -> Void = { _ in }
    ) async throws(SessionError) {
        let clock = ContinuousClock()
        let started = clock.now
        let cache = identity.cache
        var heard: [String: SpeechCheckSummary.HeardClip] = [:]
        var reasons: [String: String] = [:]
        var pending: [ClipCache.Entry] = []
        for entry in result.entries {
            guard case .ready? = result.states[entry.key] else { continue }
            if let before = cache.heardBefore(entry) { heard[entry.key] = before } else { pending.append(entry) }
        }
        var tries = 1
        while !pending.isEmpty {
            let clips = pending.compactMap { entry -> SpeechCheck.Clip? in
                guard case .ready(let source)? = result.states[entry.key] else { return nil }
                return SpeechCheck.Clip(
                    span: RecognizerSpan(
                        path: entry.path,
                        frameCount: source.frameCount,
                        sampleRate: source.sampleRate
                    ),
                    text: entry.text
                )
            }
            var failing: [ClipCache.Entry] = []
            for (entry, finding) in zip(pending, try await check.check(clips)) {
                switch finding {
                case .success(let finding):
                    let clip = SpeechCheckSummary.HeardClip(finding, key: entry.key)
                    heard[entry.key] = clip
                    if let failure = finding.failure {
                        reasons[entry.key] = failure
                        failing.append(entry)
                    } else if let fingerprint = ClipFingerprint(path: entry.path) {
                        HeardSidecar(clip, text: entry.text, of: fingerprint).write(
                            to: cache.heardPath(forKey: entry.key)
                        )
                    }
                case .failure(let error):
                    reasons[entry.key] = "cannot be heard: \(error.description)"
                    failing.append(entry)
                }
            }
            guard !failing.isEmpty else { break }
            guard provider != nil, tries < Self.speechCheckTries else {
                for entry in failing {
                    let reason = reasons[entry.key] ?? ""
                    if provider == nil {
                        result.states[entry.key] = .unusable("fails the speech check: \(reason)")
                    } else {
                        // The clip this run made is wrong: a run that does not check must not find it.
                        cache.discard(entry)
                        result.states[entry.key] = .failed(
                            "the voice did not say its text in \(tries) tries: \(reason)"
                        )
                    }
                }
                break
            }
            tries += 1
            for entry in failing {
                warn(
                    "The clip for \(quoted(entry.text)) (key \(entry.key)) fails the speech check: "
                        + "\(reasons[entry.key] ?? ""); synthesizing it again (try \(tries) of \(Self.speechCheckTries))"
                )
            }
            let again = try await prepare(texts: failing.map(\.text), replacing: Set(failing.map(\.key)), warn: warn)
            for entry in failing {
                result.states[entry.key] = again.states[entry.key]
                result.marks[entry.key] = again.marks[entry.key]
                result.engineMarksNotes[entry.key] = again.engineMarksNotes[entry.key]
            }
            result.synthesized += again.synthesized
            pending = failing.filter { entry in
                if case .ready? = result.states[entry.key] { true } else { false }
            }
        }
        var summary = SpeechCheckSummary()
        for entry in result.entries {
            if let clip = heard[entry.key] { summary.add(clip) }
        }
        result.speech = summary
        result.elapsed += clock.now - started
    }
}
