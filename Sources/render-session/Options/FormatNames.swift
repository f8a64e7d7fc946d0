import SessionTimeline

/// How help texts and messages name the formats the tool writes: made from ``AudioFileFormat``'s
/// cases, so that no help text lists fewer formats than the writers the tool has (the root and
/// `render` overviews once left out M4A and M4B).
enum FormatNames {
    /// `WAV, FLAC, MP3, Opus, Ogg Vorbis, M4A or M4B`.
    static let titles = list(AudioFileFormat.allCases.map(title))
    /// `wav, flac, mp3, opus, ogg, m4a or m4b`: what `--format` takes.
    static let names = list(AudioFileFormat.allCases.map(\.rawValue))
    /// `.wav, .flac, .mp3, .opus, .ogg, .m4a, .m4b`: the extensions an output path may end in.
    static let extensions = AudioFileFormat.allCases.map { "." + $0.fileExtension }.joined(separator: ", ")

    /// How a sentence names `format`.
    static func title(_ format: AudioFileFormat) -> String {
        switch format {
        case .wav: "WAV"
        case .flac: "FLAC"
        case .mp3: "MP3"
        case .opus: "Opus"
        case .vorbis: "Ogg Vorbis"
        case .m4a: "M4A"
        case .m4b: "M4B"
        }
    }

    /// `a, b or c`.
    private static func list(_ items: [String]) -> String {
        items.dropLast().joined(separator: ", ") + (items.count > 1 ? " or " : "") + (items.last ?? "")
    }
}
