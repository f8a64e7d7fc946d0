/// An error from reading, converting or writing audio, with a sentence a person can act on.
///
/// The description names the file and the cause, carrying the C library's own message where
/// there is one: `Cannot decode /cache/3f9a….mp3: mpg123: invalid frame (code -1)`. The C
/// library's code is kept as data too (``libraryCode``), for a program to look at.
package struct AudioError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    package let code: Code
    /// The file concerned, if any.
    package let path: String?
    /// The cause, as a phrase.
    package let reason: String
    /// The C library's own code for the failure, when a C call's result or error state caused it:
    /// libmpg123's −1 for `mpg123: invalid frame (code -1)`. `nil` when the failure was found here
    /// (a file cut short, a format refused) or by a system call (its `errno` is in ``reason``).
    package let libraryCode: LibraryCode?

    /// What kind of failure an ``AudioError`` is.
    package enum Code: String, Sendable, Equatable {
        /// The file could not be opened or is not a format the library reads.
        case cannotOpen
        /// The file opened but its audio could not be decoded to the end.
        case cannotDecode
        /// The file holds no audio frames at all.
        case noAudio
        /// The file's sample rate or channel count changes part of the way through.
        case formatChanged
        /// The file decoded to fewer frames than its header or an earlier measurement promised.
        case truncated
        /// Converting between sample rates failed.
        case cannotResample
        /// The output could not be created or written in full.
        case cannotWrite
        /// A requested format (rate, channels, sample format) is not supported.
        case unsupportedFormat
        /// Encoding (MP3, Vorbis) failed.
        case cannotEncode
        /// The embedded voice could not speak.
        case cannotSynthesize
    }

    /// A C library's code for a failure: which library, and the value it returned or reported.
    package struct LibraryCode: Sendable, Equatable, CustomStringConvertible {
        /// The library that reported the failure.
        package let library: Library
        /// The library's own code: a return value (`MPG123_ERR`, `AVERROR_INVALIDDATA`,
        /// `OPE_BAD_ARG`), or what it reports afterwards (`sf_error`, `FLAC__metadata_chain_status`).
        package let value: Int32

        package init(_ library: Library, _ value: Int32) {
            self.library = library
            self.value = value
        }

        /// The library and the code: `libmpg123 -1`.
        package var description: String { "\(library.rawValue) \(value)" }
    }

    /// The C libraries whose codes an ``AudioError`` carries. (libsoxr reports its failures as
    /// strings only, and libebur128's one fallible call here returns no code: their errors carry none.)
    package enum Library: String, Sendable, Equatable, CaseIterable {
        case libmpg123
        case libsndfile
        case lame = "LAME"
        case libopus
        case libvorbis
        case libogg
        case libFLAC
        case libavformat
        case libavcodec
        case libavutil
        case eSpeakNG = "eSpeak NG"
        case cairo
    }

    package init(_ code: Code, path: String?, reason: String, libraryCode: LibraryCode? = nil) {
        self.code = code
        self.path = path
        self.reason = reason
        self.libraryCode = libraryCode
    }

    /// An error caused by a C library's failure, keeping its code: `reason` makes the error's
    /// reason from the library's words (by default, the words alone).
    init(_ code: Code, path: String?, _ message: LibraryMessage, reason: (String) -> String = { $0 }) {
        self.init(code, path: path, reason: reason(message.text), libraryCode: message.code)
    }

    package var description: String {
        let verb =
            switch code {
            case .cannotOpen: "Cannot open"
            case .cannotDecode, .noAudio, .formatChanged, .truncated: "Cannot decode"
            case .cannotResample: "Cannot resample"
            case .cannotWrite: "Cannot write"
            case .unsupportedFormat: "Cannot use"
            case .cannotEncode: "Cannot encode"
            case .cannotSynthesize: "Cannot synthesize"
            }
        if let path { return "\(verb) \(path): \(reason)" }
        return "\(verb) audio: \(reason)"
    }
}

/// A C library's words for a failure and the code they are for: what the small function each
/// wrapper has for its library's codes gives (``FFmpegError/message(_:_:)``,
/// `MPEGDecoder.describe`, `OpusEncoder.message`), so that the ``AudioError`` made from it keeps
/// the code as data.
struct LibraryMessage {
    /// The words, as they go into an ``AudioError/reason``: `mpg123: invalid frame (code -1)`.
    let text: String
    /// The code they are for.
    let code: AudioError.LibraryCode

    init(_ text: String, _ library: AudioError.Library, _ value: Int32) {
        self.text = text
        code = AudioError.LibraryCode(library, value)
    }
}
