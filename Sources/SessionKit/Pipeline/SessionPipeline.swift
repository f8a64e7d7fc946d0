internal import Foundation
internal import SessionAudio
public import SessionTimeline

/// The whole job of turning a script into a finished session: prepare its clips, plan its
/// timeline, render the audio and the timeline JSON.
///
/// Its settings are grouped by what they decide: ``clips`` (the cache key: cache folder, voice,
/// speed), ``plan`` (seed, rate, channels, bell, missing clips), ``source`` (where missing clips
/// come from) and ``output`` (format and destinations). The stages can be run one by one
/// (``prepare(texts:)``, ``plan(_:clips:)``, ``render(_:)``) or all at once with ``run(_:)``:
///
///     let pipeline = SessionPipeline(
///         clips: ClipIdentity(cacheFolder: "cache"),
///         plan: PlanSettings(seed: 7),
///         source: .provider(EmbeddedSpeechProvider()),
///         output: OutputSettings(audio: .path("out/session.wav")))
///     let timeline = try await pipeline.run(try ScriptFile.load("session.json"))
///
/// Cancelling the task stops the work between blocks and clips; unfinished files are removed and
/// clips already stored stay in the cache.
public struct SessionPipeline: Sendable {
    /// Which clips: the cache folder, voice and speed.
    public var clips: ClipIdentity
    /// What decides the plan besides the script.
    public var plan: PlanSettings
    /// Where missing clips come from.
    public var source: ClipSource
    /// What is written, and where.
    public var output: OutputSettings
    /// Told what a person running the job should know: warnings and progress.
    public var observer: PipelineObserver
    /// The voice that speaks when the one asked for cannot be had (a Piper engine or model
    /// missing or failing to load), with one warning; `nil`, the default, makes that an error, so
    /// that a render never ships in a voice nobody chose. ``embeddedFallback`` (`espeak`) is the
    /// embedded eSpeak NG voice in the asked voice's language, as the seed apps fall back.
    public var fallbackVoice: String?
    /// The ``fallbackVoice`` that means eSpeak NG in the language of the voice it stands in for.
    public static let embeddedFallback = "espeak"
    /// Voices that gave way to another when their clips were prepared: requested → used
    /// (``PreparedClips/voiceFallbacks``, taken over by ``adopting(_:)``).
    public var voiceFallbacks: [String: String] = [:]

    public init(
        clips: ClipIdentity = ClipIdentity(),
        plan: PlanSettings = PlanSettings(),
        source: ClipSource = .offline,
        output: OutputSettings = OutputSettings(),
        observer: PipelineObserver = PipelineObserver()
    ) {
        self.clips = clips
        self.plan = plan
        self.source = source
        self.output = output
        self.observer = observer
    }

    /// Every setting that cannot be used, as values a caller words in its own terms; empty if all are fine.
    public var problems: [SettingProblem] { checked().problems }

    /// Every setting checked, once: the problems, and the encoder's settings when the output's
    /// format takes them.
    private func checked() -> (problems: [SettingProblem], encoder: EncoderSettings?) {
        var problems: [SettingProblem] = []
        let speedRange = ClipIdentity.speedRange
        if !clips.speed.isFinite || !speedRange.contains(clips.speed) {
            problems.append(
                SettingProblem(.speed, "\(clips.speed) is outside \(speedRange.lowerBound)…\(speedRange.upperBound)")
            )
        }
        if clips.voice.isEmpty {
            problems.append(SettingProblem(.voice, "the voice id is empty"))
        }
        for (setting, rule) in clips.pacing.problems {
            problems.append(SettingProblem(setting, rule))
        }
        let channelRange = PlanSettings.channelCountRange
        if !channelRange.contains(plan.channelCount.count) {
            problems.append(
                SettingProblem(
                    .channelCount,
                    "\(plan.channelCount.count) is outside \(channelRange.lowerBound)…\(channelRange.upperBound)"
                )
            )
        }
        for problem in plan.sound.problems {
            problems.append(SettingProblem(.sound(problem.field), problem.rule))
        }
        if case .path(let path) = output.audio, let format = output.format, let named = AudioFileFormat(path: path),
            named != format, !(format == .opus && named == .vorbis)
        {
            // Opus in a file named .ogg is still Ogg, which players read; any other pair writes
            // bytes that the file's name lies about.
            problems.append(
                SettingProblem(
                    .audioOutput,
                    "\(path) names a .\(named.fileExtension) file, but \(SettingReference.format.marker) says \(format); name the file .\(format.fileExtension), or leave the format to its extension"
                )
            )
        }
        if case .path(let path) = output.audio, output.format == nil {
            let suffix = URL(fileURLWithPath: path).pathExtension
            if !suffix.isEmpty && AudioFileFormat(fileExtension: suffix) == nil {
                problems.append(
                    SettingProblem(
                        .audioOutput,
                        "cannot write .\(suffix) files; the formats written are .wav, .flac, .mp3, .opus, .ogg, .m4a and .m4b (or name one with \(SettingReference.format.marker))"
                    )
                )
            }
        }
        var encoder: EncoderSettings?
        do {
            let checked = try output.encoder()
            encoder = checked
            if let problem = checked.problem(sampleRate: sampleRate?.hertz, channelCount: plan.channelCount.count) {
                problems.append(SettingProblem(.encoding, problem))
            }
        } catch {
            problems.append(SettingProblem(.encoding, error.description))
        }
        if let audio = output.audio, let timeline = output.timeline, OutputTarget.sameFile(audio, timeline) {
            problems.append(SettingProblem(.timelineOutput, "the timeline and the audio cannot both go to \(timeline)"))
        }
        return (problems, encoder)
    }

    /// Prepares, plans and renders `script`.
    ///
    /// Outputs are checked first (their folders created, existing files refused unless
    /// ``OutputSettings/replaceExisting``), so that a mistake costs no synthesis.
    /// - Returns: the timeline that was rendered.
    /// - Throws: ``SessionError``; nothing is left half-written.
    @discardableResult
    public func run(_ script: Script) async throws(SessionError) -> Timeline {
        let clock = ContinuousClock()
        var started = clock.now
        func finished(_ stage: String) {
            self.observer.finishedStage(stage, clock.now - started)
            started = clock.now
        }
        try checkVoices(of: [script])
        try checkSounds(of: [script])
        let targets = try resolveOutputs()
        finished("check")
        let prepared = try await prepare(scripts: [script])
        finished("prepare")
        // Planning and rendering block for as long as the session takes to encode: on threads of
        // their own, not Swift concurrency's shared ones.
        let observer = self.observer
        return try await RenderThreads.shared.run { () throws(SessionError) in
            let planStarted = clock.now
            let timeline = try plan(script, clips: prepared)
            observer.finishedStage("plan", clock.now - planStarted)
            let renderStarted = clock.now
            let rendered = try render(timeline, to: targets)
            observer.finishedStage("render", clock.now - renderStarted)
            return rendered
        }
    }

    /// The clips `script`'s texts are: ``clips`` in the script's own voice when it names one, or
    /// the voice that stood in for it (``voiceFallbacks``).
    public func clips(for script: Script) -> ClipIdentity {
        var identity = requestedClips(for: script)
        if let fallback = voiceFallbacks[identity.voice] { identity.voice = fallback }
        return identity
    }

    /// The clips `script`'s texts are asked in, before any fallback.
    private func requestedClips(for script: Script) -> ClipIdentity {
        var identity = clips
        if let voice = script.voice { identity.voice = voice }
        return identity
    }

    /// This pipeline with the voice fallbacks that preparing `prepared` made.
    public func adopting(_ prepared: PreparedClips) -> SessionPipeline {
        var pipeline = self
        pipeline.voiceFallbacks.merge(prepared.voiceFallbacks) { _, new in new }
        return pipeline
    }

    /// Every text a render of `script` can need. For kinds other than guided this asks the sound
    /// library which cue sounds it has, since a missing one is spoken instead.
    public func texts(of script: Script) throws(SessionError) -> [String] {
        if case .guided = script.kind { return script.allTexts }
        var sounds = SessionSounds(
            libraryFolder: plan.soundLibrary,
            allowsMissing: plan.allowsMissingSounds,
            warn: { _ in }
        )
        return try sounds.texts(of: plan.selectingStretches(of: script), sound: plan.sound.overriding(script.sound))
    }

    /// Stage 1 for whole scripts: prepares every text `scripts` can need, each script's in its
    /// own voice (``clips(for:)``), as one result.
    ///
    /// A voice that cannot be had at all (``SessionError/Code/voiceUnavailable``: its Piper
    /// engine or model is missing or does not load, found only when a clip must be made) is the
    /// error, unless a ``fallbackVoice`` is set: then that voice speaks, said once through the
    /// observer's warning and recorded in ``PreparedClips/voiceFallbacks``.
    public func prepare(scripts: [Script]) async throws(SessionError) -> PreparedClips {
        try checkSounds(of: scripts)
        var voices: [String] = []
        var textsByVoice: [String: [String]] = [:]
        for script in scripts {
            let voice = requestedClips(for: script).voice
            if textsByVoice[voice] == nil { voices.append(voice) }
            textsByVoice[voice, default: []] += try texts(of: script)
        }
        try checkVoices(of: scripts)
        guard let first = voices.first else { return try await prepare(texts: []) }
        var prepared = try await prepareFallingBack(texts: textsByVoice[first] ?? [], voice: first)
        for voice in voices.dropFirst() {
            prepared = prepared.merging(try await prepareFallingBack(texts: textsByVoice[voice] ?? [], voice: voice))
        }
        // Every clip these scripts need is made: the voices' workers (Piper's hold a model each)
        // give their memory back to the render.
        if case .provider(let provider, _) = source { await provider.releaseVoices() }
        return prepared
    }

    /// Refuses, before any work, a sound `scripts` name (in their `sound` blocks or ``plan``)
    /// that is not found, unless ``PlanSettings/allowsMissingSounds``.
    public func checkSounds(of scripts: [Script]) throws(SessionError) {
        var sounds = SessionSounds(
            libraryFolder: plan.soundLibrary,
            allowsMissing: plan.allowsMissingSounds,
            warn: { _ in }
        )
        for script in scripts { try sounds.check(plan.sound.overriding(script.sound)) }
    }

    /// Refuses, before any work, a voice `scripts` are spoken in (or the ``fallbackVoice``) that
    /// names no voice of its engine: a typo is an error naming the nearest voices, never a
    /// render in another voice.
    public func checkVoices(of scripts: [Script]) throws(SessionError) {
        var voices = Set(scripts.map { requestedClips(for: $0).voice })
        if let fallbackVoice, fallbackVoice != Self.embeddedFallback { voices.insert(fallbackVoice) }
        for voice in voices.sorted() {
            try Self.checkVoiceName(voice)
            if PiperModel.isPiperVoice(voice), case .provider(let provider as LocalSpeechProvider, _) = source {
                try provider.piper.installation.checkModelName(ofVoice: voice)
            }
        }
    }

    /// Refuses a voice id that names no voice of the engine it points at, before any work: an
    /// `espeak:` id must be a language eSpeak NG lists, a `piper:` id a plain model name (the
    /// model itself is looked up among the files found, so a name never becomes a path).
    /// Other ids are names for a server to judge.
    static func checkVoiceName(_ voice: String) throws(SessionError) {
        let unknown = "unknown voice \(quoted(voice))"
        if voice.hasPrefix("espeak:") {
            let language = String(voice.dropFirst("espeak:".count))
            // The default needs no look-up: starting eSpeak NG to list its voices costs about
            // 7 MiB and 0.15 s, which a render from the cache would otherwise pay every time.
            if voice == ClipIdentity.defaultVoice { return }
            let known = (try? EmbeddedVoice.voices()) ?? []
            guard
                !known.contains(where: { $0.languages.contains { $0.caseInsensitiveCompare(language) == .orderedSame } }
                )
            else { return }
            let suggestion = didYouMean(language, among: known.compactMap(\.languages.first), prefix: "espeak:")
            throw SessionError(
                .unknownVoice,
                "\(unknown): eSpeak NG has no such voice\(suggestion); `render-session voices` lists them"
            )
        }
        if let name = PiperModel.name(ofVoice: voice), !PiperModel.isModelName(name) {
            throw SessionError(
                .unknownVoice,
                "\(unknown): a Piper voice is a model's file name without .onnx, such as \(PiperModel.defaultVoice)"
            )
        }
    }

    /// Prepares `texts` in `voice`, or in its fallback when `voice` cannot be had.
    private func prepareFallingBack(texts: [String], voice: String) async throws(SessionError) -> PreparedClips {
        if let fallback = voiceFallbacks[voice] { return try await voiced(fallback).prepare(texts: texts) }
        do {
            return try await voiced(voice).prepare(texts: texts)
        } catch  where error.code == .voiceUnavailable {
            guard let fallbackVoice else {
                throw SessionError(
                    .voiceUnavailable,
                    "\(error.lines[0]); \(SettingReference.fallbackVoice.marker) names a voice to speak in instead",
                    underlyingError: error
                )
            }
            var fallback = fallbackVoice
            if fallback == Self.embeddedFallback {
                let languages = Set(((try? EmbeddedVoice.voices()) ?? []).compactMap(\.languages.first))
                fallback = PiperModel.fallbackVoice(for: voice, languages: languages)
            }
            observer.warning("\(error.lines[0]); using \(fallback)")
            var prepared = try await voiced(fallback).prepare(texts: texts)
            prepared.voiceFallbacks[voice] = fallback
            return prepared
        }
    }

    /// This pipeline with its clips spoken in `voice`.
    private func voiced(_ voice: String) -> SessionPipeline {
        var pipeline = self
        pipeline.clips.voice = voice
        return pipeline
    }

    /// Stage 1: makes sure the cache holds every clip `texts` need, and measures each once.
    ///
    /// Clips that cannot be had are in the result (``PreparedClips/problemLines(suffix:)``); it
    /// is ``plan(_:clips:)`` that fails on them, unless ``PlanSettings/allowMissing``.
    public func prepare(texts: [String]) async throws(SessionError) -> PreparedClips {
        try Self.checkVoiceName(clips.voice)
        let provider: (any SpeechProvider)?
        let jobs: Int?
        switch source {
        case .offline: (provider, jobs) = (nil, nil)
        case .provider(let chosen, let chosenJobs): (provider, jobs) = (chosen, chosenJobs)
        }
        // Loudness is measured unless it is off here: a script's own `sound` block is not known yet,
        // and a measurement it does not need costs one decode, once (it is kept beside the clip).
        let measureLoudness = plan.sound.loudness != .off
        let result = try await ClipPreparer(
            identity: clips,
            provider: provider,
            jobs: jobs,
            measureLoudness: measureLoudness
        )
        .prepare(texts: texts, warn: observer.warning, progress: observer.preparing)
        observer.prepared(result)
        return result
    }

    /// Stage 2: places the script's clips, silences and bell in frames, from prepared measurements.
    ///
    /// The timeline records the voice its clips are in, and the one asked for when another stood in.
    /// With the program loudness anchor, the mix is measured here (written nowhere), so that the
    /// timeline's gains are those a render plays.
    public func plan(_ script: Script, clips prepared: PreparedClips) throws(SessionError) -> Timeline {
        let encoder = try checkSettings()
        var settings = plan
        settings.sampleRate = sampleRate
        let identity = adopting(prepared).clips(for: script)
        var timeline = try SessionPlanner.plan(
            script,
            clips: prepared,
            identity: identity,
            settings: settings,
            encoder: encoder,
            warn: observer.warning
        )
        let requested = requestedClips(for: script).voice
        timeline.voice = identity.voice
        timeline.requestedVoice = requested == identity.voice ? nil : requested
        try checkLateness(of: timeline)
        return try SessionRenderer.anchoringProgram(timeline, encoder: encoder)
    }

    /// Refuses a plan whose speech starts later than ``PlanSettings/maximumLateSeconds``.
    private func checkLateness(of timeline: Timeline) throws(SessionError) {
        guard let maximum = plan.maximumLateSeconds else { return }
        let rate = timeline.sampleRate
        let late = TimelineLateness(timeline, beyond: rate.frames(atSeconds: maximum) ?? .zero)
        guard let worst = late.worst else { return }
        let others = late.lateCount > 1 ? " (and \(late.lateCount - 1) more past it)" : ""
        throw SessionError(
            .lateSpeech,
            "\(quoted(printable(worst.text, limit: 60))) starts \(String(format: "%.1f", rate.seconds(of: worst.frames))) s late\(others), more than the \(formatted(maximum)) s allowed: the clip before it runs past its start"
        )
    }

    /// The rate sessions are rendered at: the one asked for, else the one the output format needs
    /// (48 kHz for Opus), else `nil` (the first clip's).
    public var sampleRate: SampleRate? {
        plan.sampleRate ?? output.resolvedFormat.preferredSampleRate
    }

    /// Stage 3: writes `timeline` to the outputs.
    /// - Returns: `timeline` with the output's measured loudness (``Timeline/loudness``), when
    ///   loudness is on and audio was written.
    @discardableResult
    public func render(_ timeline: Timeline) throws(SessionError) -> Timeline {
        try render(timeline, to: try resolveOutputs())
    }

    private func render(_ timeline: Timeline, to targets: ResolvedOutputs) throws(SessionError) -> Timeline {
        let total = timeline.totalFrames
        if targets.audio != nil,
            let problem = targets.encoder.problem(
                sampleRate: timeline.sampleRate.hertz,
                channelCount: timeline.channelCount.count
            )
        {
            throw SessionError(.invalidSetting, "Cannot write \(output.audio?.description ?? "the audio"): \(problem)")
        }
        let rendered = try SessionRenderer.render(
            timeline,
            encoder: targets.encoder,
            metadata: output.metadata(for: timeline),
            audio: targets.audio,
            timelineJSON: targets.timeline
        ) { written in observer.rendering(written, total, timeline.sampleRate) }
        if let line = Self.squashWarning(rendered.loudness) { observer.warning(line) }
        return rendered
    }

    /// The limiter's largest reduction past which a program-anchored render is said to squash.
    static let squashingDecibels = 6.0

    /// A warning when the program anchor reached its target only by limiting hard: a session whose
    /// quiet stretches are long (a meditation over a bed) needs its voice far above the target for
    /// the whole file to average it, and the limiter then takes that off the voice's peaks.
    static func squashWarning(_ loudness: TimelineLoudness?) -> String? {
        guard let loudness, loudness.anchor == .program, let limiter = loudness.limiter,
            limiter.maxReductionDecibels > squashingDecibels
        else { return nil }
        let gain = (loudness.programGain ?? 0).formatted(
            .number.precision(.fractionLength(1)).sign(strategy: .always())
        )
        let reduction = limiter.maxReductionDecibels.formatted(.number.precision(.fractionLength(1)))
        let seconds = limiter.secondsOverOneDecibel.formatted(.number.precision(.fractionLength(1)))
        let speech =
            loudness.speech.map { ", speech at \($0.formatted(.number.precision(.fractionLength(1)))) LUFS" } ?? ""
        return "the program anchor's gain of \(gain) dB reached \(loudness.target.formatted()) LUFS only with up to "
            + "\(reduction) dB of limiting (\(seconds) s over 1 dB)\(speech): the speech is squashed; "
            + "anchored on the speech instead, the voice keeps the target without it"
    }

    /// Where a render's audio and timeline go, and how the audio is encoded.
    private struct ResolvedOutputs {
        var audio: OutputTarget?
        var timeline: OutputTarget?
        var encoder: EncoderSettings
    }

    private func resolveOutputs() throws(SessionError) -> ResolvedOutputs {
        let encoder = try checkSettings()
        let audio = try output.audio.map { (destination) throws(SessionError) in
            try OutputTarget.resolve(
                destination,
                replaceExisting: output.replaceExisting,
                inOwnedFolder: output.inOwnedFolder
            )
        }
        let timeline = try output.timeline.map { (destination) throws(SessionError) in
            try OutputTarget.resolve(
                destination,
                replaceExisting: output.replaceExisting,
                inOwnedFolder: output.inOwnedFolder
            )
        }
        return ResolvedOutputs(audio: audio, timeline: timeline, encoder: encoder)
    }

    /// The encoder's settings, when every setting can be used.
    /// - Throws: ``SessionError`` (`invalidSetting`), a line for each ``problems`` entry.
    package func checkSettings() throws(SessionError) -> EncoderSettings {
        let (problems, encoder) = checked()
        guard problems.isEmpty, let encoder else {
            throw SessionError(.invalidSetting, lines: problems.map(\.description))
        }
        return encoder
    }
}

/// Who is told what a pipeline is doing. Every closure may be called from any thread.
public struct PipelineObserver: Sendable {
    /// A warning: a clip left out, a corrupt cache entry replaced.
    public var warning: @Sendable (String) -> Void
    /// Preparing has got this far.
    public var preparing: @Sendable (PreparedClips) -> Void
    /// Preparing is done, with this result.
    public var prepared: @Sendable (PreparedClips) -> Void
    /// Rendering has written this many frames of the total, at this rate.
    public var rendering: @Sendable (_ written: Frames, _ total: Frames, _ sampleRate: SampleRate) -> Void
    /// A stage of ``SessionPipeline/run(_:)`` ended (`check`, `prepare`, `plan`, `render`), after this long.
    public var finishedStage: @Sendable (_ stage: String, _ elapsed: Duration) -> Void

    public init(
        warning: @escaping @Sendable (String) -> Void = { _ in },
        finishedStage: @escaping @Sendable (_ stage: String, _ elapsed: Duration) -> Void = { _, _ in },
        preparing: @escaping @Sendable (PreparedClips) -> Void = { _ in },
        prepared: @escaping @Sendable (PreparedClips) -> Void = { _ in },
        rendering: @escaping @Sendable (_ written: Frames, _ total: Frames, _ sampleRate: SampleRate) -> Void = {
            _,
            _,
            _ in
        }
    ) {
        self.warning = warning
        self.finishedStage = finishedStage
        self.preparing = preparing
        self.prepared = prepared
        self.rendering = rendering
    }
}
