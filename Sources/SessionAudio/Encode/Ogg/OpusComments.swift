internal import COpus
internal import SessionTimeline

/// The tags and chapters of an Ogg Opus file: its `OpusTags` packet (RFC 7845, 5.2), Vorbis
/// comments after the magic `OpusTags` and libopus's version as the vendor.
///
/// Tags are `TITLE`, `ALBUM` and `ARTIST`. Chapters follow the OGM convention that ffmpeg,
/// ffprobe, VLC and mpv read from Vorbis comments: `CHAPTER001=HH:MM:SS.mmm` for the start and
/// `CHAPTER001NAME=…` for the title. The convention has no end times; a reader ends each chapter
/// where the next starts and the last at the end of the file.
struct OpusComments {
    /// The packet, as the second header page holds it.
    let packet: [UInt8]

    /// The most chapters the convention's three digits can number.
    static let maximumChapterCount = 999

    /// Builds the comments for `metadata`; `path` names the file in errors.
    /// - Throws: ``AudioError`` (`unsupportedFormat`) for more chapters than the convention numbers.
    init(metadata: AudioMetadata, path: String) throws(AudioError) {
        guard metadata.chapters.count <= Self.maximumChapterCount else {
            throw AudioError(
                .unsupportedFormat,
                path: path,
                reason:
                    "an Ogg Opus file holds at most \(Self.maximumChapterCount) chapters (CHAPTER001 … CHAPTER999), not \(metadata.chapters.count)"
            )
        }
        var comments: [(String, String)] = []
        for (tag, value) in [("TITLE", metadata.title), ("ALBUM", metadata.album), ("ARTIST", metadata.artist)] {
            if let value, !value.isEmpty { comments.append((tag, value)) }
        }
        for (index, chapter) in metadata.chapters.enumerated() {
            comments += VorbisChapterComments.entries(index + 1, chapter, sampleRate: 48_000)
        }
        // Each string is its length (32-bit little-endian) and its UTF-8 bytes, no terminator.
        func string(_ bytes: [UInt8]) -> [UInt8] {
            withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { Array($0) } + bytes
        }
        var packet = Array("OpusTags".utf8) + string(Array(String(cString: opus_get_version_string()).utf8))
        packet += withUnsafeBytes(of: UInt32(comments.count).littleEndian) { Array($0) }
        for (tag, value) in comments { packet += string(Array("\(tag)=\(value)".utf8)) }
        self.packet = packet
    }
}
