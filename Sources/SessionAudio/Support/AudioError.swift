/// An error from reading, converting or writing audio, with a sentence a person can act on.
///
/// The description names the file and the cause, carrying the C library's own message where
/// there is one: `Cannot decode /cache/3f9a….mp3: mpg123: invalid frame (code -1)`.
package struct AudioError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    package let code: Code
    /// The file concerned, if any.
    package let path: String?
    /// The cause, as a phrase.
    package let reason: String

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

    package init(_ code: Code, path: String?, reason: String) {
        self.code = code
        self.path = path
        self.reason = reason
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
