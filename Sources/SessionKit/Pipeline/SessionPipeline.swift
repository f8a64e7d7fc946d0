internal import Foundation
internal import SessionAudio
public import SessionTimeline

/// The whole job of turning a script into a finished session: prepare its clips, plan its
/// timeline, render the audio and the timeline JSON, and verify the file when asked.
///
/// Its settings are grouped by what they decide: ``clips`` (the cache key: cache folder, voice,
/// speed), ``plan`` (seed, rate, channels, sounds, loudness, missing clips), ``source`` (where
/// missing clips come from) and ``output`` (format, destinations, verification). ``run(_:)`` is
/// the one entry point: it checks every setting, voice, sound and output once, before any work,
/// and hands back a ``RenderOutcome``:
///
///     let pipeline = SessionPipeline(
///         clips: ClipIdentity(cacheFolder: "cache"),
///         plan: PlanSettings(seed: 7),
///         source: .provider(EmbeddedSpeechProvider()),
///         output: OutputSettings(audio: .path("out/session.wav")))
///     let outcome = try await pipeline.run(try ScriptFile.load("session.json"))
///
/// The stages can also be run one by one (``prepare(scripts:)``, ``plan(_:clips:)``,
/// ``render(_:)``), each an entry point of its own. Blocking work runs on ``pool``. Cancelling
/// the task stops the work between blocks and clips; unfinished files are removed and clips
/// already stored stay in the cache.
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
    /// The threads the blocking work runs on (decoding, encoding, synthesis, file I/O): the
    /// process's ``BlockingPool/shared`` unless another is given (a server's, sized for it).
    public var pool: BlockingPool = .shared
    /// The voice that speaks when the one asked for cannot be had (a Piper engine or model
    /// missing or failing to load), with one warning; `nil`, the default, makes that an error, so
    /// that a render never ships in a voice nobody chose.
    public var fallbackVoice: FallbackVoice?
    /// Voices that gave way to another when their clips were prepared: requested → used
    /// (``PreparedClips/voiceFallbacks``, taken over by ``adopting(_:)``).
    package var voiceFallbacks: [Voice: Voice] = [:]
    /// The check that the voice said each clip's text (`--check-speech`): every prepared clip is
    /// transcribed, and one that fails is synthesized again (``ClipPreparer/checkSpeech(of:with:warn:)``);
    /// `nil`, the default, checks nothing.
    package var speechCheck: SpeechCheck?

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
        if clips.voice.id.isEmpty {
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

    /// Prepares, plans, renders and (when ``OutputSettings/verifies``) verifies `script`.
    ///
    /// Every setting, voice, sound and output is checked first, once (the outputs' folders
    /// created, existing files refused unless ``OutputSettings/replaceExisting``), so that a
    /// mistake costs no synthesis.
    /// - Returns: what the render came to: the timeline as written, the clips, the warnings, the
    ///   verification.
    /// - Throws: ``SessionError``; nothing is left half-written.
    @discardableResult
    public func run(_ script: Script) async throws(SessionError) -> RenderOutcome {
        try await pool.run { () async throws(SessionError) in
            var stages = StageClock()
            func finished(_ stage: String) { self.observer.finishedStage(stage, stages.lap()) }
            let job = try RenderJob(self)
            try job.checkVoicesAndSounds(of: [script])
            let targets = try job.resolveOutputs(
                audio: output.audio,
                timeline: output.timeline,
                captions: output.captions
            )
            finished("check")
            let prepared = try await job.prepare(scripts: [script])
            finished("prepare")
            let timeline = try job.plan(script, clips: prepared)
            finished("plan")
            let rendered = try job.render(timeline, to: targets)
            finished("render")
            let verification = try job.verification(of: rendered, at: output.audio)
            if verification != nil { finished("verify") }
            return RenderOutcome(
                timeline: rendered,
                clips: prepared,
                warnings: job.warnings.all,
                verification: verification
            )
        }
    }

    /// What is wrong with the voice and the sounds of a script that broke a rule elsewhere
    /// (``Script/voiceAndSound(salvagedFrom:)``): its own voice, else this pipeline's, and the
    /// sounds its `sound` block and the plan name, checked as ``run(_:)`` checks them first, so
    /// that the run reporting the script's mistakes reports these too; `nil` when there are none.
    package func problems(voice: String?, sound: SoundSettings?) -> SessionError? {
        do {
            try RenderJob(self).checkVoicesAndSounds(
                voices: [voice.map { Voice(id: $0) } ?? clips.voice],
                sounds: [plan.sound.overriding(sound)]
            )
            return nil
        } catch {
            return error
        }
    }

    /// The clips `script`'s texts are: ``clips`` in the script's own voice when it names one, or
    /// the voice that stood in for it.
    public func clips(for script: Script) -> ClipIdentity {
        var identity = requestedClips(for: script)
        if let fallback = voiceFallbacks[identity.voice] { identity.voice = fallback }
        return identity
    }

    /// The clips `script`'s texts are asked in, before any fallback.
    func requestedClips(for script: Script) -> ClipIdentity {
        var identity = clips
        if let voice = script.voice { identity.voice = Voice(id: voice) }
        return identity
    }

    /// This pipeline with the voice fallbacks that preparing `prepared` made.
    package func adopting(_ prepared: PreparedClips) -> SessionPipeline {
        var pipeline = self
        pipeline.voiceFallbacks.merge(prepared.voiceFallbacks) { _, new in new }
        return pipeline
    }

    /// Every text a render of `script` can need. For kinds other than guided this asks the sound
    /// library which cue sounds it has, since a missing one is spoken instead.
    package func texts(of script: Script) throws(SessionError) -> [String] {
        try RenderJob(self).texts(of: script)
    }

    /// Stage 1 for whole scripts: prepares every text `scripts` can need, each script's in its
    /// own voice (``clips(for:)``), as one result, after checking every setting, voice and sound.
    ///
    /// A voice that cannot be had at all (``SessionError/Code/voiceUnavailable``: its Piper
    /// engine or model is missing or does not load, found only when a clip must be made) is the
    /// error, unless a ``fallbackVoice`` is set: then that voice speaks, said once through the
    /// observer's warning and recorded in ``PreparedClips/voiceFallbacks``.
    public func prepare(scripts: [Script]) async throws(SessionError) -> PreparedClips {
        try await pool.run { () async throws(SessionError) in
            let job = try RenderJob(self)
            try job.checkVoicesAndSounds(of: scripts)
            return try await job.prepare(scripts: scripts)
        }
    }

    /// Stage 1: makes sure the cache holds every clip `texts` need in ``clips``' voice, and
    /// measures each once.
    ///
    /// Clips that cannot be had are in the result (``PreparedClips/problemLines(suffix:)``); it
    /// is ``plan(_:clips:)`` that fails on them, unless ``PlanSettings/allowMissing``.
    public func prepare(texts: [String]) async throws(SessionError) -> PreparedClips {
        try await pool.run { () async throws(SessionError) in
            try clips.voice.check()
            return try await RenderJob(self).prepare(texts: texts, voice: clips.voice)
        }
    }

    /// Stage 2: places the script's clips, silences and sounds in frames, from prepared
    /// measurements. Opens no clip.
    ///
    /// The timeline records the voice its clips are in, and the one asked for when another stood in.
    /// With the program loudness anchor, the mix is measured here (written nowhere), so that the
    /// timeline's gains are those a render plays.
    public func plan(_ script: Script, clips prepared: PreparedClips) throws(SessionError) -> Timeline {
        try RenderJob(self).plan(script, clips: prepared)
    }

    /// The rate sessions are rendered at: the one asked for, else the one the output format needs
    /// (48 kHz for Opus), else `nil` (the first clip's).
    package var sampleRate: SampleRate? {
        plan.sampleRate ?? output.resolvedFormat.preferredSampleRate
    }

    /// Stage 3: writes `timeline` to the outputs.
    /// - Returns: `timeline` with how the audio was encoded and, when loudness is on and audio
    ///   was written, the output's measured loudness.
    @discardableResult
    public func render(_ timeline: Timeline) throws(SessionError) -> Timeline {
        let job = try RenderJob(self)
        let targets = try job.resolveOutputs(audio: output.audio, timeline: output.timeline, captions: output.captions)
        return try job.render(timeline, to: targets)
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

    /// A warning when the file's anchor measured more than ``VerifiedLoudness/tolerance`` from the
    /// target (as decoded, for a lossy file): the file ships, since the target may be out of
    /// reach, but not quietly; `verify` and the batch index hold it to the same tolerance.
    static func offTargetWarning(_ loudness: TimelineLoudness?) -> String? {
        guard let loudness, let measured = loudness.anchor == .program ? loudness.program : loudness.speech,
            abs(measured - loudness.target) > VerifiedLoudness.tolerance
        else { return nil }
        func tenths(_ value: Double) -> String { value.formatted(.number.precision(.fractionLength(1))) }
        let off = measured - loudness.target
        var line =
            "the \(loudness.anchor.rawValue) measures \(tenths(measured)) LUFS as played, \(tenths(abs(off))) LU "
            + "\(off < 0 ? "under" : "over") the target of \(loudness.target.formatted()) LUFS"
        if let lowered = loudness.ceilingCorrection, loudness.ceilingCorrectedSeconds == nil {
            line +=
                ": the whole file was made \(tenths(-lowered)) dB quieter to hold the ceiling of "
                + "\(loudness.ceiling.formatted()) dBTP as decoded"
        } else if off < 0, let limiter = loudness.limiter, limiter.maxReductionDecibels > squashingDecibels {
            line +=
                ": the limiter already takes off up to \(tenths(limiter.maxReductionDecibels)) dB to hold the "
                + "ceiling of \(loudness.ceiling.formatted()) dBTP; a lower target keeps the voice"
        }
        return line
    }

    /// The encoder's settings, when every setting can be used.
    /// - Throws: ``SessionError`` (`invalidSetting`), a line for each ``problems`` entry.
    package func checkSettings() throws(SessionError) -> EncoderSettings {
        PipelineProbe.current?.count(.settingsCheck)
        let (problems, encoder) = checked()
        guard problems.isEmpty, let encoder else {
            throw SessionError(.invalidSetting, lines: problems.map(\.description))
        }
        return encoder
    }
}

/// A clip synthesis ended: which clip, how long its request and storing took, and why it failed.
package struct MadeClip: Sendable {
    /// The clip's cache key: its file's name without `.mp3`.
    package var key: String
    package var text: String
    package var elapsed: Duration
    /// Why it could not be made; `nil` when it was.
    package var failure: String?
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
    /// A stage ended, after this long: of ``SessionPipeline/run(_:)`` (`check`, `prepare`, `plan`,
    /// `render`, `verify`), or of a batch (`check`, `prepare`, `sessions`, `preview`; each
    /// session's own are `finishedSessionStage`'s).
    public var finishedStage: @Sendable (_ stage: String, _ elapsed: Duration) -> Void
    /// How a warning names a setting it mentions (``SettingReference``): in the library's words,
    /// unless a command names its settings by their flags.
    package var settingName: @Sendable (SettingReference) -> String = { $0.words }
    /// A clip was synthesized and stored (or failed to be), after this long: what a log records
    /// clip by clip, where ``preparing`` only counts.
    package var madeClip: @Sendable (MadeClip) -> Void = { _ in }
    /// A stage of one session of a batch (`plan`, `render`) ended, after this long.
    package var finishedSessionStage: @Sendable (_ session: String, _ stage: String, _ elapsed: Duration) -> Void = {
        _,
        _,
        _ in
    }

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
