internal import Foundation
internal import SessionAudio
public import SessionTimeline

/// Which clip a text is: the cache it lives in and the voice and speed it is spoken in.
/// Together with the text these make the cache key, so changing any of them means other clips;
/// under ``CacheKeyScheme/text`` only the text does.
public struct ClipIdentity: Sendable, Equatable, Encodable {
    /// The range of speaking speeds accepted (the OpenAI speech API's range).
    package static let speedRange: ClosedRange<Double> = 0.25...4.0
    /// The clip cache folder.
    public var cacheFolder: String
    /// The voice, such as `espeak:en-us`.
    public var voice: Voice
    /// The speaking speed, 1.0 being normal.
    public var speed: Double
    /// How the key is made: from text, voice and speed (the default), or the text alone.
    public var keyScheme: CacheKeyScheme
    /// The pauses inside a clip, for voices that apply them (Piper's); part of the key when not the default.
    public var pacing: SpeechPacing

    public init(
        cacheFolder: String = ClipCache.defaultDirectory(),
        voice: Voice = .defaultVoice,
        speed: Double = 1.0,
        keyScheme: CacheKeyScheme = .textVoiceSpeed,
        pacing: SpeechPacing = .standard
    ) {
        self.cacheFolder = cacheFolder
        self.voice = voice
        self.speed = speed
        self.keyScheme = keyScheme
        self.pacing = pacing
    }

    /// What decides a clip's sound, for hashing the settings: everything but where the cache is.
    private enum CodingKeys: String, CodingKey {
        case voice, speed, keyScheme, pacing
    }

    /// The cache these clips live in.
    package var cache: ClipCache { ClipCache(directory: cacheFolder) }

    /// The voice as the cache key names it: the voice id, and for a voice that applies
    /// ``pacing`` (Piper's), pauses that differ from the defaults (``SpeechPacing/keySuffix``).
    package var keyedVoice: String {
        if case .piper = voice { voice.id + pacing.keySuffix } else { voice.id }
    }

    /// The cache entry of `text` spoken with this voice, speed and pacing, keyed by ``keyScheme``;
    /// for a Piper voice, a text whose sentences are parted otherwise than at every full stop is
    /// keyed apart (``SpeechPacing/sentenceKeySuffix(for:)``).
    package func entry(for text: String) -> ClipCache.Entry {
        let keyed =
            if case .piper = voice { keyedVoice + SpeechPacing.sentenceKeySuffix(for: text) } else { keyedVoice }
        return cache.entry(text: text, voice: keyed, speed: speed, scheme: keyScheme)
    }
}

/// What decides the plan besides the script: the random draws, the output's shape, the sounds
/// and loudness, and whether missing clips and sounds are tolerated.
public struct PlanSettings: Sendable, Equatable, Encodable {
    /// The output channel counts accepted.
    package static let channelCountRange: ClosedRange<Int> = 1...8

    /// The seed for the interjections' random choices; `nil` draws one (and records it in the timeline).
    public var seed: UInt64?
    /// The output sample rate; `nil` takes the rate of the first segment's clip.
    public var sampleRate: SampleRate?
    /// The output channel count.
    public var channelCount: ChannelCount
    /// The bed, gongs, bell, lead-in and loudness; a field set here wins over the script's `sound` block.
    public var sound: SoundSettings
    /// The sound library sounds are looked up in by name; `nil` is the default library
    /// (`$XDG_CACHE_HOME/render-session/sounds/v5`, else `~/.cache/render-session/sounds/v5`), made on first use.
    public var soundLibrary: String?
    /// Whether a missing or unusable clip leaves its slot silent (with a warning) instead of failing.
    public var allowMissing: Bool
    /// Whether a sound that is not found is left out (with a warning, and listed in the
    /// timeline's skipped sounds) instead of failing before any work: the seed apps skip a
    /// missing sound, but a typo must not ship a session without its gong unless asked for.
    public var allowsMissingSounds: Bool
    /// The most a clip may start after its planned start (pushed by a long clip before it), in
    /// seconds; `nil` allows any lateness. A plan with a later clip fails before rendering.
    public var maximumLateSeconds: Double?
    /// The regions a stretching region file draws from, by id or region; `nil` is every region.
    public var stretchRegions: [String]?
    /// How many stretches a region file draws from each region; `nil` is one.
    public var stretchesPerRegion: Int?
    /// How long a stretch lasts whose length the file does not give (a region file's never do);
    /// `nil` is 60 seconds.
    public var stretchSeconds: Double?

    public init(
        seed: UInt64? = nil,
        sampleRate: SampleRate? = nil,
        channelCount: ChannelCount = .mono,
        sound: SoundSettings = SoundSettings(),
        soundLibrary: String? = nil,
        allowMissing: Bool = false,
        allowsMissingSounds: Bool = false,
        stretchRegions: [String]? = nil,
        stretchesPerRegion: Int? = nil,
        stretchSeconds: Double? = nil,
        maximumLateSeconds: Double? = nil
    ) {
        self.seed = seed
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.sound = sound
        self.soundLibrary = soundLibrary
        self.allowMissing = allowMissing
        self.allowsMissingSounds = allowsMissingSounds
        self.stretchRegions = stretchRegions
        self.stretchesPerRegion = stretchesPerRegion
        self.stretchSeconds = stretchSeconds
        self.maximumLateSeconds = maximumLateSeconds
    }

    /// `script` with a stretching region file's draw narrowed to ``stretchRegions`` and
    /// ``stretchesPerRegion``, and its stretches without a length lasting ``stretchSeconds``; any
    /// other script as it is.
    /// - Throws: ``SessionError`` naming each region the file does not have, or a session the
    ///   lengths make longer than 24 hours.
    func selectingStretches(of script: Script) throws(SessionError) -> Script {
        guard case .stretch(var stretch) = script.kind,
            stretchRegions != nil || stretchesPerRegion != nil || stretchSeconds != nil
        else {
            return script
        }
        var selected = script
        do {
            stretch = try stretch.selecting(regions: stretchRegions, perRegion: stretchesPerRegion)
        } catch {
            throw SessionError(
                .invalidSetting,
                lines: error.problems.map { "\(script.id): \($0)" },
                underlyingError: error
            )
        }
        if let stretchSeconds { stretch = stretch.lasting(stretchSeconds) }
        selected.kind = .stretch(stretch)
        selected.durationSeconds = stretch.totalSeconds
        let limit = ScriptRules.maximumDurationSeconds
        guard stretch.totalSeconds <= limit else {
            throw SessionError(
                .invalidSetting,
                "\(script.id): (session): \(SettingReference.stretchSeconds.marker) makes it last \(formatted(stretch.totalSeconds)) s, longer than the limit of \(formatted(limit)) (24 hours)"
            )
        }
        return selected
    }
}

/// Where a pipeline's missing clips come from.
public enum ClipSource: Sendable {
    /// Nowhere: a clip not in the cache is missing.
    case offline
    /// A speech provider, `jobs` requests at a time (`nil`: the provider's own default).
    case provider(any SpeechProvider, jobs: Int? = nil)
}

/// Where an output goes.
public enum OutputDestination: Sendable, Equatable, CustomStringConvertible {
    /// Standard output (`-` on the command line).
    case standardOutput
    /// A path: a regular file is replaced atomically; a symbolic link has its target replaced
    /// and stays a link; a FIFO or device is written straight through; a folder is refused.
    case path(String)

    /// `-` for standard output, else the path: how a command line writes it.
    package init(argument: String) {
        self = argument == "-" ? .standardOutput : .path(argument)
    }

    public var description: String {
        switch self {
        case .standardOutput: "standard output"
        case .path(let path): path
        }
    }

    /// Where the timeline of audio written here goes unless told otherwise: beside it, `x.wav`'s
    /// in `x.wav.timeline.json` (``SessionVerifier/sidecarTimelinePath(for:)``), where `verify`,
    /// `show` and the page look for it. `nil` for standard output, a FIFO or a device: they have
    /// no folder of their own to be beside.
    package var sidecarTimeline: OutputDestination? {
        guard case .path(let path) = self else { return nil }
        switch try? FileSystem.kindOfItem(at: (path as NSString).resolvingSymlinksInPath) {
        case nil, .regularFile: return .path(SessionVerifier.sidecarTimelinePath(for: path))
        default: return nil
        }
    }
}

/// What a render writes and where.
public struct OutputSettings: Sendable, Equatable {
    /// How samples are stored in a WAV or FLAC file.
    public var sampleFormat: SampleFormat
    /// The file format; `nil` takes it from the audio path's extension (WAV for standard output).
    public var format: AudioFileFormat?
    /// A constant bit rate in kb/s for a lossy format; each format's range is in docs/formats.md.
    public var bitrate: Int?
    /// A variable-rate quality; each format's scale is in docs/formats.md.
    public var quality: Double?
    /// Whether an MP3 skips encoding digital silence (docs/formats.md).
    public var skipsSilence: Bool
    /// The album and artist tags; the title tag is the script's title.
    public var album: String?
    public var artist: String?
    /// Where the audio goes; `nil` writes none (the timeline alone).
    public var audio: OutputDestination?
    /// Where the timeline JSON goes; `nil` writes none.
    public var timeline: OutputDestination?
    /// Where captions of the speech go, in the format the path's extension names
    /// (``CaptionFormat``; WebVTT for standard output); `nil` writes none. A `.vtt` file gets the
    /// phases as WebVTT chapters beside it, `NAME.chapters.vtt`.
    package var captions: OutputDestination?
    /// Where WebVTT captions' chapters go: beside ``captions``, as `NAME.chapters.vtt`.
    package var captionChapters: OutputDestination? {
        guard case .path(let path) = captions else { return nil }
        return CaptionFormat.chaptersPath(forCaptionsAt: path).map(OutputDestination.path)
    }
    /// Whether an existing output may be replaced; if not, an existing one fails the render before any work.
    public var replaceExisting: Bool
    /// Whether a render decodes the audio file it wrote and checks it against its timeline
    /// (``RenderOutcome/verification``); audio written to standard output cannot be.
    public var verifies = false
    /// Whether the outputs go into a folder the tool owns (a batch's), where a link or anything but
    /// a regular file at an output's path is refused rather than followed or written through.
    var inOwnedFolder = false

    public init(
        sampleFormat: SampleFormat = .pcm16,
        format: AudioFileFormat? = nil,
        bitrate: Int? = nil,
        quality: Double? = nil,
        skipsSilence: Bool = true,
        album: String? = nil,
        artist: String? = nil,
        audio: OutputDestination? = nil,
        timeline: OutputDestination? = nil,
        replaceExisting: Bool = true
    ) {
        self.sampleFormat = sampleFormat
        self.format = format
        self.bitrate = bitrate
        self.quality = quality
        self.skipsSilence = skipsSilence
        self.album = album
        self.artist = artist
        self.audio = audio
        self.timeline = timeline
        self.replaceExisting = replaceExisting
    }

    /// The format the audio is written in: ``format``, else the audio path's extension, else WAV.
    package var resolvedFormat: AudioFileFormat {
        if let format { return format }
        if case .path(let path) = audio, let named = AudioFileFormat(path: path) { return named }
        return .wav
    }

    /// The encoder's settings, if the format takes these; ``SessionPipeline/problems`` reports
    /// the rule broken as a problem with ``SettingProblem/Setting/encoding``.
    package func encoder() throws(EncoderSettings.Problem) -> EncoderSettings {
        try EncoderSettings(
            format: resolvedFormat,
            sampleFormat: sampleFormat,
            bitrate: bitrate,
            quality: quality,
            skipsSilence: skipsSilence
        )
    }

    /// The tags and chapters an audio file of `timeline` carries.
    package func metadata(for timeline: Timeline) -> AudioMetadata {
        AudioMetadata(title: timeline.title, album: album, artist: artist, chapters: timeline.chapters)
    }
}

/// A setting whose value cannot be used: which setting, and the rule it breaks.
///
/// A value, not a sentence, so that a command can name the setting as its users know it
/// (`--speed: 5.0 is outside 0.25…4.0`) and a library user as theirs.
public struct SettingProblem: Sendable, Equatable, CustomStringConvertible {
    /// The settings a problem can be about.
    public enum Setting: Sendable, Equatable {
        case voice, speed, sampleRate, channelCount, audioOutput, timelineOutput
        /// ``ClipIdentity/pacing``'s two pauses.
        case sentencePause, paragraphPause
        /// The output's format and its encoder's settings (format, sample format, bit rate, quality).
        case encoding
        /// A field of ``PlanSettings/sound``.
        case sound(SoundSettings.Field)

        /// `speed`, `sound.ambienceGain`.
        public var name: String {
            switch self {
            case .voice: "voice"
            case .speed: "speed"
            case .sentencePause: "pacing.sentencePauseSeconds"
            case .paragraphPause: "pacing.paragraphPauseSeconds"
            case .sampleRate: "sampleRate"
            case .channelCount: "channelCount"
            case .audioOutput: "audioOutput"
            case .timelineOutput: "timelineOutput"
            case .encoding: "encoding"
            case .sound(let field): "sound.\(field.rawValue)"
            }
        }
    }

    /// The setting.
    public let setting: Setting
    /// The rule broken, as a phrase, other settings still marked (``SettingReference``).
    private let markedRule: String
    /// The rule broken, as a phrase: `5.0 is outside 0.25…4.0`.
    public var rule: String { rule(namingSettings: { $0.words }) }

    /// The rule with the other settings it mentions named by `name`: the command names its flags.
    package func rule(namingSettings name: (SettingReference) -> String) -> String {
        namingSettings(in: markedRule, name)
    }

    public init(_ setting: Setting, _ rule: String) {
        self.setting = setting
        self.markedRule = rule
    }

    /// `speed: 5.0 is outside 0.25…4.0`.
    public var description: String { "\(setting.name): \(rule)" }
}
