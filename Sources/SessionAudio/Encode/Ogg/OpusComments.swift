internal import COpusEnc
internal import SessionTimeline

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
            for (tag, value) in VorbisChapterComments.entries(index + 1, chapter, sampleRate: 48_000) {
                try add(tag, value, path: path)
            }
        }
    }

    deinit {
        ope_comments_destroy(handle)
    }

    private func add(_ tag: String, _ value: String, path: String) throws(AudioError) {
        let result = ope_comments_add(handle, tag, value)
        guard result == OPE_OK else {
            throw AudioError(.cannotEncode, path: path, OpusEncoder.message(result)) {
                "cannot add the \(tag) comment: \($0)"
            }
        }
    }
}
