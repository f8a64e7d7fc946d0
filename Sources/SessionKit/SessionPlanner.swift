internal import Foundation
internal import SessionAudio
internal import SessionTimeline

/// Turns a script into a timeline from prepared clips: makes the random choices and places
/// everything in frames. Opens no clip: every length comes from ``PreparedClips``.
enum SessionPlanner {
    /// Plans `script` with `settings`, taking clip lengths from `clips`.
    ///
    /// Every text the script can need must be ready: all that are not are reported together,
    /// before any audio is written. With ``PlanSettings/allowMissing``, a clip that is not ready
    /// is left out instead, its slot silent, and `warn` is told once per cause.
    static func plan(
        _ script: Script,
        clips: PreparedClips,
        identity: ClipIdentity,
        settings: PlanSettings,
        warn: (String) -> Void
    ) throws(SessionError) -> Timeline {
        // A batch prepares many scripts' clips at once: only this script's count here.
        let keys = Set(script.allTexts.map { identity.entry(for: $0).key })
        let problems = clips.problemLines(among: keys, suffix: settings.allowMissing ? "; its slot stays silent" : "")
        if !problems.isEmpty {
            guard settings.allowMissing else {
                let code: SessionError.Code =
                    clips.problems(among: keys).contains { $0.state == .missing } ? .missingClips : .unusableClips
                throw SessionError(code, lines: problems)
            }
            for problem in problems { warn(problem) }
        }

        let seed = settings.seed ?? SeededGenerator.randomSeed()
        let interjections = script.resolveInterjections(seed: seed)
        let sourced: [SourcedClip?] = (script.segments.map(\.text) + interjections.map(\.text)).map { text in
            let entry = identity.entry(for: text)
            guard case .ready(let source)? = clips.states[entry.key] else { return nil }
            return SourcedClip(key: entry.key, source: source)
        }
        guard
            let sampleRate = settings.sampleRate ?? sourced[0]?.source.sampleRate
                ?? sourced.lazy.compactMap({ $0 }).first?.source.sampleRate
        else {
            throw SessionError(
                .invalidSetting,
                "No clip is available to take the sample rate from; choose an output sample rate"
            )
        }
        let sound = settings.sound.overriding(script.sound)
        return try withoutActuallyEscaping(warn) { (warn) throws(SessionError) in
            var sounds = SessionSounds(libraryFolder: settings.soundLibrary, strict: settings.strict, warn: warn)
            return Timeline.plan(
                script: script,
                seed: seed,
                sampleRate: sampleRate,
                channelCount: settings.channelCount,
                segmentClips: Array(sourced[..<script.segments.count]),
                interjections: interjections,
                interjectionClips: Array(sourced[script.segments.count...]),
                layers: try sounds.layers(for: sound, sampleRate: sampleRate)
            )
        }
    }
}
