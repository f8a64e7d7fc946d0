internal import Foundation
internal import SessionAudio
internal import SessionTimeline

/// One job of a pipeline (a render, a batch, a queue, a prepare): its settings checked once,
/// its sound library opened once for all its stages and sessions, its voices and sounds checked
/// once before any work, and the stages that follow (prepare, plan, render, verify), which check
/// none of it again.
///
/// A ``SessionPipeline`` is the description a caller fills in; a job is what that description
/// resolved to. Every public entry point of the pipeline makes one job and runs its stages.
struct RenderJob: Sendable {
    /// The settings as given, with the voice fallbacks preparing made (``adopting(_:)``).
    private(set) var pipeline: SessionPipeline
    /// The encoder's settings, checked with every other setting when the job was made.
    let encoder: EncoderSettings
    /// The sound library every stage and session looks sounds up in, opened on first need.
    let library: SharedSoundLibrary
    /// Every warning told, in order, for the job's outcome.
    private(set) var warnings: WarningLog

    /// Checks every setting of `pipeline` (``SessionPipeline/problems``), once.
    /// - Throws: ``SessionError`` (`invalidSetting`), a line for each problem.
    /// - Throws: ``SessionError`` (`recognizerUnavailable`) when the speech check is asked for
    ///   and its recognizer is not installed.
    init(_ pipeline: SessionPipeline) throws(SessionError) {
        encoder = try pipeline.checkSettings()
        try pipeline.speechCheck?.recognizer.installation.check()
        warnings = WarningLog()
        self.pipeline = pipeline
        self.pipeline.observer = Self.logging(pipeline.observer, into: warnings)
        library = SharedSoundLibrary(folder: pipeline.plan.soundLibrary, warn: self.pipeline.observer.warning)
    }

    /// This job telling `observer` instead, its warnings kept in a log of its own: a batch's
    /// session, whose warnings name it and are its outcome's.
    func observed(by observer: PipelineObserver) -> RenderJob {
        var job = self
        job.warnings = WarningLog()
        job.pipeline.observer = Self.logging(observer, into: job.warnings)
        return job
    }

    /// `observer`, its warnings kept in `log` as well, the settings they mention named as the
    /// observer names them.
    private static func logging(_ observer: PipelineObserver, into log: WarningLog) -> PipelineObserver {
        var logged = observer
        let told = observer.warning
        let name = observer.settingName
        logged.warning = { marked in
            let line = namingSettings(in: marked, name)
            log.add(line)
            told(line)
        }
        return logged
    }

    /// The job's sounds, telling `warn` of a sound left out.
    func sounds(warn: @escaping (String) -> Void) -> SessionSounds {
        SessionSounds(
            library: library,
            allowsMissing: pipeline.plan.allowsMissingSounds,
            commandLine: pipeline.plan.sound,
            warn: warn
        )
    }

    // MARK: Checks before any work

    /// Refuses, before any work, a voice `scripts` are spoken in (or the fallback voice) that
    /// names no voice of its engine, each voice checked once.
    func checkVoices(of scripts: [Script]) throws(SessionError) {
        try check(voices: voices(of: scripts))
    }

    /// The voices `scripts` ask for, each once.
    private func voices(of scripts: [Script]) -> Set<Voice> {
        Set(scripts.map { pipeline.requestedClips(for: $0).voice })
    }

    /// The sound settings each of `scripts` renders with: its `sound` block over the plan's.
    private func soundSettings(of scripts: [Script]) -> [SoundSettings] {
        scripts.map { pipeline.plan.sound.overriding($0.sound) }
    }

    /// Refuses `voices` (and the fallback voice) as ``checkVoices(of:)`` does.
    private func check(voices: Set<Voice>) throws(SessionError) {
        var voices = voices
        if case .voice(let fallback)? = pipeline.fallbackVoice { voices.insert(fallback) }
        for voice in voices.sorted(by: { $0.id < $1.id }) { try check(voice) }
    }

    /// Refuses a voice its source cannot speak in: the provider's check, or offline the checks
    /// that hold whatever speaks it.
    private func check(_ voice: Voice) throws(SessionError) {
        switch pipeline.source {
        case .offline: try voice.check()
        case .provider(let provider, _): try provider.checkVoice(voice)
        }
    }

    /// Refuses, before any work, a sound `scripts` name (in their `sound` blocks or the plan's)
    /// that is not found, unless missing sounds are allowed: every one, a line each.
    func checkSounds(of scripts: [Script]) throws(SessionError) {
        try check(sounds: soundSettings(of: scripts))
    }

    /// Refuses the sounds `settings` name as ``checkSounds(of:)`` does.
    private func check(sounds settings: [SoundSettings]) throws(SessionError) {
        let sounds = sounds(warn: { _ in })
        var lines: [String] = []
        for sound in settings {
            for line in try sounds.problems(sound) where !lines.contains(line) { lines.append(line) }
        }
        guard !lines.isEmpty else { return }
        throw SessionError(.missingSound, lines: lines)
    }

    /// ``checkVoices(of:)`` and ``checkSounds(of:)`` in one: every voice and sound problem
    /// `scripts` have, in one error, so that one run says them all (the voice's code first).
    func checkVoicesAndSounds(of scripts: [Script]) throws(SessionError) {
        try checkVoicesAndSounds(voices: voices(of: scripts), sounds: soundSettings(of: scripts))
    }

    /// ``checkVoicesAndSounds(of:)`` for `voices` and the sounds `sounds` name.
    func checkVoicesAndSounds(voices: Set<Voice>, sounds: [SoundSettings]) throws(SessionError) {
        var failures: [SessionError] = []
        do { try check(voices: voices) } catch { failures.append(error) }
        do { try check(sounds: sounds) } catch { failures.append(error) }
        guard let first = failures.first else { return }
        guard failures.count > 1 else { throw first }
        throw SessionError(first.code, lines: failures.flatMap(\.markedLines), underlyingError: first)
    }

    /// Where a render's audio, timeline and captions go: each checked (its folder made, an
    /// existing file refused unless replacing is allowed, a captions file's extension one of
    /// ``CaptionFormat``'s), so that a mistake costs no synthesis.
    func resolveOutputs(
        audio: OutputDestination?,
        timeline: OutputDestination?,
        captions: OutputDestination? = nil
    ) throws(SessionError) -> ResolvedOutputs {
        let output = pipeline.output
        func resolve(_ destination: OutputDestination) throws(SessionError) -> OutputTarget {
            try OutputTarget.resolve(
                destination,
                replaceExisting: output.replaceExisting,
                inOwnedFolder: output.inOwnedFolder
            )
        }
        var captionTargets: CaptionTargets?
        switch captions {
        case nil: break
        case .standardOutput:
            captionTargets = CaptionTargets(captions: try resolve(.standardOutput), format: .webVTT, chapters: nil)
        case .path(let path):
            guard let format = CaptionFormat(path: path) else {
                throw SessionError(
                    .invalidSetting,
                    "Cannot write captions to \(path): the name must end in .vtt, .srt or .json (WebVTT, SubRip, a JSON transcript)"
                )
            }
            let chapters = CaptionFormat.chaptersPath(forCaptionsAt: path)
            captionTargets = CaptionTargets(
                captions: try resolve(.path(path)),
                format: format,
                chapters: try chapters.map { (chapters) throws(SessionError) in try resolve(.path(chapters)) }
            )
        }
        return ResolvedOutputs(
            audio: try audio.map { (destination) throws(SessionError) in try resolve(destination) },
            timeline: try timeline.map { (destination) throws(SessionError) in try resolve(destination) },
            captions: captionTargets
        )
    }

    // MARK: Stages

    /// Every text a render of `script` can need. For kinds other than guided this asks the sound
    /// library which cue sounds it has, since a missing one is spoken instead.
    func texts(of script: Script) throws(SessionError) -> [String] {
        if case .guided = script.kind { return script.allTexts }
        let plan = pipeline.plan
        return try sounds(warn: { _ in }).texts(
            of: plan.selectingStretches(of: script),
            sound: plan.sound.overriding(script.sound)
        )
    }

    /// Prepares every text `scripts` can need, each script's in its own voice, as one result;
    /// a voice that cannot be had falls back as the pipeline says.
    func prepare(scripts: [Script]) async throws(SessionError) -> PreparedClips {
        var voices: [Voice] = []
        var textsByVoice: [Voice: [String]] = [:]
        for script in scripts {
            let voice = pipeline.requestedClips(for: script).voice
            if textsByVoice[voice] == nil { voices.append(voice) }
            textsByVoice[voice, default: []] += try texts(of: script)
        }
        guard let first = voices.first else { return try await prepare(texts: [], voice: pipeline.clips.voice) }
        var prepared = try await prepareFallingBack(texts: textsByVoice[first] ?? [], voice: first)
        for voice in voices.dropFirst() {
            prepared = prepared.merging(try await prepareFallingBack(texts: textsByVoice[voice] ?? [], voice: voice))
        }
        // Every clip these scripts need is made: the voices' workers (Piper's hold a model each)
        // give their memory back to the render.
        if case .provider(let provider, _) = pipeline.source { await provider.releaseVoices() }
        return prepared
    }

    /// Prepares `texts` in `voice`, or in its fallback when `voice` cannot be had.
    private func prepareFallingBack(texts: [String], voice: Voice) async throws(SessionError) -> PreparedClips {
        if let fallback = pipeline.voiceFallbacks[voice] { return try await prepare(texts: texts, voice: fallback) }
        do {
            return try await prepare(texts: texts, voice: voice)
        } catch  where error.code == .voiceUnavailable {
            guard let fallbackVoice = pipeline.fallbackVoice else {
                throw SessionError(
                    .voiceUnavailable,
                    "\(error.lines[0]); \(SettingReference.fallbackVoice.marker) names a voice to speak in instead",
                    underlyingError: error
                )
            }
            let fallback: Voice
            switch fallbackVoice {
            case .voice(let chosen):
                fallback = chosen
            case .embedded:
                let languages = Set(((try? EmbeddedVoice.voices()) ?? []).compactMap(\.languages.first))
                fallback = PiperModel.fallbackVoice(for: voice, languages: languages)
            }
            pipeline.observer.warning("\(error.lines[0]); using \(fallback)")
            var prepared = try await prepare(texts: texts, voice: fallback)
            prepared.voiceFallbacks[voice] = fallback
            return prepared
        }
    }

    /// Makes sure the cache holds every clip `texts` need in `voice`, and measures each once.
    func prepare(texts: [String], voice: Voice) async throws(SessionError) -> PreparedClips {
        var identity = pipeline.clips
        identity.voice = voice
        let (provider, jobs): ((any SpeechProvider)?, Int?) =
            switch pipeline.source {
            case .offline: (nil, nil)
            case .provider(let chosen, let chosenJobs): (chosen, chosenJobs)
            }
        // Loudness is measured unless it is off here: a script's own `sound` block is not known yet,
        // and a measurement it does not need costs one decode, once (it is kept beside the clip).
        let preparer = ClipPreparer(
            identity: identity,
            provider: provider,
            jobs: jobs,
            measureLoudness: pipeline.plan.sound.loudness != .off
        )
        var result = try await preparer.prepare(
            texts: texts,
            warn: pipeline.observer.warning,
            progress: pipeline.observer.preparing,
            made: pipeline.observer.madeClip
        )
        if let check = pipeline.speechCheck {
            try await preparer.checkSpeech(of: &result, with: check, warn: pipeline.observer.warning)
        }
        pipeline.observer.prepared(result)
        return result
    }

    /// This job with the voice fallbacks that preparing `prepared` made, for the stages after it.
    func adopting(_ prepared: PreparedClips) -> RenderJob {
        var job = self
        job.pipeline = pipeline.adopting(prepared)
        return job
    }

    /// Places `script`'s clips, silences and sounds in frames, from prepared measurements, with
    /// `seed` when given (else the plan's); warnings go to `warn` (the observer's by default).
    ///
    /// The timeline records the voice its clips are in, and the one asked for when another stood
    /// in. With loudness on, the mix is measured here (written nowhere) and, in a lossy format, a
    /// few seconds of it encoded (``LoudnessPlan``), so that the timeline's gains and the limiter's
    /// room are those a render plays.
    func plan(
        _ script: Script,
        clips prepared: PreparedClips,
        seed: UInt64? = nil,
        warn: ((String) -> Void)? = nil
    ) throws(SessionError) -> Timeline {
        var settings = pipeline.plan
        if let seed { settings.seed = seed }
        settings.sampleRate = pipeline.sampleRate
        let adopted = pipeline.adopting(prepared)
        let identity = adopted.clips(for: script)
        var timeline = try SessionPlanner.plan(
            script,
            clips: prepared,
            identity: identity,
            settings: settings,
            encoder: encoder,
            sounds: sounds(warn: warn ?? pipeline.observer.warning)
        )
        let requested = pipeline.requestedClips(for: script).voice
        timeline.voice = identity.voice.id
        timeline.requestedVoice = requested == identity.voice ? nil : requested.id
        try checkLateness(of: timeline, script: script)
        return try LoudnessPlan(timeline, encoder: encoder).anchored
    }

    /// Refuses a plan whose speech starts later than ``PlanSettings/maximumLateSeconds``, naming
    /// the latest clip, where it is in `script`, and the clip that overran it.
    private func checkLateness(of timeline: Timeline, script: Script) throws(SessionError) {
        guard let maximum = pipeline.plan.maximumLateSeconds else { return }
        let rate = timeline.sampleRate
        let allowed = rate.seconds(of: rate.frames(atSeconds: maximum) ?? .zero)
        let late = LateClip.all(in: timeline, script: script).filter { $0.lateSeconds > allowed }
        guard let worst = late.max(by: { $0.lateSeconds < $1.lateSeconds }) else { return }
        let others = late.count > 1 ? " (and \(late.count - 1) more past it)" : ""
        throw SessionError(
            .lateSpeech,
            "\(worst.line), more than the \(formatted(maximum)) s allowed\(others)"
        )
    }

    /// Writes `timeline` to `targets`.
    /// - Returns: `timeline` with how the audio was encoded and, when loudness is on and audio
    ///   was written, the output's measured loudness.
    func render(_ timeline: Timeline, to targets: ResolvedOutputs) throws(SessionError) -> Timeline {
        let total = timeline.totalFrames
        if let audio = targets.audio,
            let problem = encoder.problem(
                sampleRate: timeline.sampleRate.hertz,
                channelCount: timeline.channelCount.count
            )
        {
            throw SessionError(.invalidSetting, "Cannot write \(audio.destination): \(problem)")
        }
        let observer = pipeline.observer
        let rendered = try SessionRenderer.render(
            timeline,
            encoder: encoder,
            metadata: pipeline.output.metadata(for: timeline),
            audio: targets.audio,
            timelineJSON: targets.timeline,
            captions: targets.captions
        ) { written in observer.rendering(written, total, timeline.sampleRate) }
        if let line = SessionPipeline.squashWarning(rendered.loudness) { observer.warning(line) }
        if let audio = targets.audio, let line = SessionPipeline.offTargetWarning(rendered.loudness) {
            observer.warning("\(audio.destination): \(line)")
        }
        if targets.captions != nil, let leftOut = Captions.leftOut(of: rendered) {
            observer.warning("captions: \(leftOut)")
        }
        return rendered
    }

    /// Decodes the audio written to `destination` and checks it against `timeline`, when the
    /// output asks for it (``OutputSettings/verifies``) and the audio went to a file.
    func verification(
        of timeline: Timeline,
        at destination: OutputDestination?
    ) throws(SessionError)
        -> VerificationReport?
    {
        guard pipeline.output.verifies, case .path(let path)? = destination else { return nil }
        return try SessionVerifier.verify(file: path, timeline: timeline, checkingStamp: false)
    }
}

/// Where a render's audio and timeline go.
struct ResolvedOutputs: Sendable {
    var audio: OutputTarget?
    var timeline: OutputTarget?
    var captions: CaptionTargets?
}

/// Where a render's captions go, in which format, and where a WebVTT file's chapters go.
struct CaptionTargets: Sendable {
    var captions: OutputTarget
    var format: CaptionFormat
    var chapters: OutputTarget?
}

/// The warnings a job told, in order, for its outcome.
final class WarningLog: Sendable {
    private let lines = Locked<[String]>([])

    func add(_ line: String) {
        lines.withLock { $0.append(line) }
    }

    var all: [String] { lines.withLock { $0 } }
}
