internal import Foundation
internal import SessionAudio
internal import SessionTimeline

/// A voice clips are spoken in: one case per engine, each with what names the voice to it.
///
/// Its ``id`` is how a command line, a script's `voice` field and the clip cache's key write it:
/// `espeak:en-us`, `piper:en_US-joe-medium`, or a name a speech server knows (`alloy`). Reading
/// an id never fails; whether the engine has the voice is asked once, before any work, by the
/// provider that speaks it (``SpeechProvider/checkVoice(_:)``), so that a typo is an error
/// naming the nearest voices rather than a render in another voice.
public enum Voice: Sendable, Hashable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// eSpeak NG's voice for a language (`espeak:en-us`): embedded, offline, no setup.
    case espeak(language: String)
    /// A Piper model by its file name without `.onnx` (`piper:en_US-joe-medium`): offline,
    /// natural. A model name is a plain file name, never a path.
    case piper(model: String)
    /// A voice a speech server knows by this name: the TTS proxy's
    /// (`en-US-Chirp3-HD-Algenib`) or an OpenAI-compatible server's (`alloy`).
    case server(name: String)

    /// The voice spoken when none is chosen: eSpeak NG's American English.
    public static let defaultVoice = Voice.espeak(language: "en-us")

    /// The voice `id` names: `espeak:LANGUAGE`, `piper:MODEL`, or any other text, a server's
    /// name. (`piper:` with nothing after it is a server's name too; `espeak:` alone is eSpeak's
    /// voice for no language, which its check refuses.)
    public init(id: String) {
        if id.hasPrefix(Self.espeakPrefix) {
            self = .espeak(language: String(id.dropFirst(Self.espeakPrefix.count)))
        } else if id.hasPrefix(Self.piperPrefix), id.count > Self.piperPrefix.count {
            self = .piper(model: String(id.dropFirst(Self.piperPrefix.count)))
        } else {
            self = .server(name: id)
        }
    }

    public init(stringLiteral id: String) {
        self.init(id: id)
    }

    /// The voice as ids write it: `espeak:en-us`, `piper:en_US-joe-medium`, `alloy`.
    public var id: String {
        switch self {
        case .espeak(let language): Self.espeakPrefix + language
        case .piper(let model): Self.piperPrefix + model
        case .server(let name): name
        }
    }

    public var description: String { id }

    /// Why this voice can name nothing whatever the engine has, as an `unknownVoice` error; `nil`
    /// when it can. A Piper model's name must be a plain file name (letters, digits, `_`, `-`,
    /// `.`, not starting with a dot), so that a voice id never becomes a path.
    var problem: SessionError? {
        guard case .piper(let model) = self, !PiperModel.isModelName(model) else { return nil }
        return SessionError(
            .unknownVoice,
            "unknown voice \(quoted(id)): a Piper voice is a model's file name without .onnx, such as \(Voice.piperDefault.id)"
        )
    }

    /// Refuses a voice that names nothing whichever provider speaks it: a Piper model name that
    /// is not a plain file name, or a language eSpeak NG has no voice for (naming
    /// the nearest it has). Other names are for a server to judge.
    func check() throws(SessionError) {
        PipelineProbe.current?.count(.voiceCheck)
        if let problem { throw problem }
        // The default needs no look-up: starting eSpeak NG to list its voices costs about 7 MiB
        // and 0.15 s, which a render from the cache would otherwise pay every time.
        guard case .espeak(let language) = self, self != .defaultVoice else { return }
        let known = (try? EmbeddedVoice.voices()) ?? []
        guard
            !known.contains(where: { $0.languages.contains { $0.caseInsensitiveCompare(language) == .orderedSame } })
        else { return }
        let suggestion = didYouMean(language, among: known.compactMap(\.languages.first), prefix: Self.espeakPrefix)
        throw SessionError(
            .unknownVoice,
            "unknown voice \(quoted(id)): eSpeak NG has no such voice\(suggestion); `render-session voices` lists them"
        )
    }

    /// Piper's voice when `--provider piper` is given no other.
    static let piperDefault = Voice.piper(model: "en_US-joe-medium")

    static let espeakPrefix = "espeak:"
    static let piperPrefix = "piper:"

    /// Encoded as its id, the form a script and a timeline write.
    public init(from decoder: any Decoder) throws {
        self.init(id: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(id)
    }
}

/// The voice that speaks when the one asked for cannot be had (a Piper engine or model missing or
/// failing to load).
public enum FallbackVoice: Sendable, Hashable {
    /// eSpeak NG in the language of the voice it stands in for (`piper:de_DE-thorsten-medium` →
    /// `espeak:de`), as the seed apps fall back; `espeak` on the command line.
    case embedded
    /// This voice, whatever the one asked for was.
    case voice(Voice)

    /// `espeak` for ``embedded``, else the voice `id` names.
    public init(id: String) {
        self = id == Self.embeddedName ? .embedded : .voice(Voice(id: id))
    }

    /// What names ``embedded``.
    static let embeddedName = "espeak"
}
