import ArgumentParser
import SessionKit
import SessionTimeline

/// How the audio is encoded: the format and the encoder's settings, shared by `render`, `batch`
/// and `silence`.
struct EncodingOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The file format: \(FormatNames.names). (default: from the output's extension; wav for -)",
            valueName: "format"
        ),
        completion: Completions.format,
        transform: { try EncodingOptions.parseFormat($0) }
    )
    var format: FormatChoice?

    @Option(
        name: .customLong("sample-format"),
        help: ArgumentHelp("How WAV and FLAC store samples: s16, s24 or f32 (WAV only).", valueName: "s16|s24|f32")
    )
    var sampleFormat: SampleFormat?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "A constant bit rate in kb/s: mp3 8 to 320, opus 6 to 256, ogg 32 to 500 (nominal), m4a/m4b 8 to 576 (average; default 64 per channel).",
            valueName: "kbps"
        ),
        transform: { try Parse.number($0, as: Int.self, what: "a bit rate in kb/s") }
    )
    var bitrate: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "A variable-rate quality: mp3 -V 0 (best) to 9 (default 6), opus the target kb/s (default 24 per channel), ogg -q -1 to 10 (default 3), m4a/m4b FFmpeg's -q:a 0.1 to 2, flac the compression level 0 to 8 (default 5).",
            valueName: "q"
        ),
        transform: { try Parse.number($0, as: Double.self, what: "a quality") }
    )
    var quality: Double?

    @Flag(
        name: .customLong("encode-silence"),
        help:
            "MP3 and AAC: encode digital silence too, rather than writing ready-made silent frames (same decoded samples; slower)."
    )
    var encodeSilence = false

    @Option(help: ArgumentHelp("The album tag.", valueName: "text"))
    var album: String?

    @Option(help: ArgumentHelp("The artist tag.", valueName: "text"))
    var artist: String?

    /// What `--format` names: a file format, or (as before formats) a WAV sample format.
    enum FormatChoice: Equatable {
        case file(AudioFileFormat)
        case wavSamples(SampleFormat)
    }

    static func parseFormat(_ text: String) throws -> FormatChoice {
        if let format = AudioFileFormat(rawValue: text.lowercased()) { return .file(format) }
        // `--format s16|s24|f32` meant the WAV sample format before there were other formats.
        if let samples = SampleFormat(rawValue: text.lowercased()) { return .wavSamples(samples) }
        throw ValidationError("\(text) is not a format; use \(FormatNames.names)")
    }

    /// The first of these options given, by its flag; `nil` when none is.
    var givenFlag: String? {
        let given: [(String, Bool)] = [
            ("--format", format != nil), ("--sample-format", sampleFormat != nil), ("--bitrate", bitrate != nil),
            ("--quality", quality != nil), ("--encode-silence", encodeSilence), ("--album", album != nil),
            ("--artist", artist != nil),
        ]
        return given.first { $0.1 }?.0
    }

    /// The output settings for `audio` and `timeline`.
    func settings(
        audio: OutputDestination?,
        timeline: OutputDestination? = nil,
        replaceExisting: Bool = true
    ) -> OutputSettings {
        var file: AudioFileFormat?
        var samples = sampleFormat ?? .pcm16
        switch format {
        case .file(let chosen): file = chosen
        case .wavSamples(let chosen):
            file = .wav
            samples = sampleFormat ?? chosen
        case nil: break
        }
        return OutputSettings(
            sampleFormat: samples,
            format: file,
            bitrate: bitrate,
            quality: quality,
            skipsSilence: !encodeSilence,
            album: album,
            artist: artist,
            audio: audio,
            timeline: timeline,
            replaceExisting: replaceExisting
        )
    }
}
