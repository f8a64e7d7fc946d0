internal import COpusEnc
public import SessionTimeline

/// The tags and chapters of an Ogg Opus file, as Vorbis comments: owns its `OggOpusComments`.
///
/// Tags are `TITLE`, `ALBUM` and `ARTIST`. Chapters follow the OGM convention that ffmpeg,
/// ffprobe, VLC and mpv read from Vorbis comments: `CHAPTER001=HH:MM:SS.mmm` for the start and
/// `CHAPTER001NAME=…` for the title. The convention has no end times; a reader ends each chapter
/// where the next starts and the last at the end of the file.
final class OpusComments {
    /// The libopusenc comments handle; the encoder copies it at creation, so it can go after.
    let handle: OpaquePointer

    /// The most chapters the convention's three digits can number.
    static let maximumChapterCount = 999

    /// Builds the comments for `metadata`; `path` names the file in errors.
    /// The corresponding libopusenc calls are `ope_comments_create` and `ope_comments_add`.
    init(metadata: AudioMetadata, path: String) throws(AudioError) {
        guard let handle = ope_comments_create() else {
            throw AudioError(.cannotEncode, path: path, reason: "libopusenc cannot allocate the comments")
        }
        self.handle = handle
        guard metadata.chapters.count <= Self.maximumChapterCount else {
            throw AudioError(
                .unsupportedFormat,
                path: path,
                reason:
                    "an Ogg Opus file holds at most \(Self.maximumChapterCount) chapters (CHAPTER001 … CHAPTER999), not \(metadata.chapters.count)"
            )
        }
        for (tag, value) in [("TITLE", metadata.title), ("ALBUM", metadata.album), ("ARTIST", metadata.artist)] {
            if let value, !value.isEmpty { try add(tag, value, path: path) }
        }
        for (index, chapter) in metadata.chapters.enumerated() {
            let key = "CHAPTER" + Self.threeDigits(index + 1)
            try add(key, Self.timestamp(of: chapter.startFrame), path: path)
            try add(key + "NAME", chapter.title, path: path)
        }
    }

    deinit {
        ope_comments_destroy(handle)
    }

    private func add(_ tag: String, _ value: String, path: String) throws(AudioError) {
        let result = ope_comments_add(handle, tag, value)
        guard result == OPE_OK else {
            throw AudioError(
                .cannotEncode,
                path: path,
                reason: "cannot add the \(tag) comment: \(OpusEncoder.message(result))"
            )
        }
    }

    /// `00:01:05.250`: a frame at 48 kHz (the only rate Opus files are written at) as the
    /// chapter convention writes a time, rounded to the nearest millisecond, halves up.
    ///
    /// The one place chapter frames become clock time: `ms = round(frame × 1000 / 48000)`.
    static func timestamp(of frame: Frames) -> String {
        let milliseconds = (max(frame.count, 0) * 1_000 + 24_000) / 48_000
        let seconds = milliseconds / 1_000
        return "\(twoDigits(seconds / 3_600)):\(twoDigits(seconds / 60 % 60)):\(twoDigits(seconds % 60))."
            + threeDigits(Int(milliseconds % 1_000))
    }

    private static func twoDigits(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : String(value)
    }

    private static func threeDigits(_ value: Int) -> String {
        String(repeating: "0", count: max(0, 3 - String(value).count)) + String(value)
    }
}
