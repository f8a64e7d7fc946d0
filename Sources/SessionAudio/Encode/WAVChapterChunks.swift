internal import SessionTimeline

/// A WAV's chapters as the two RIFF chunks players read markers from: `cue ` (one cue point per
/// chapter, at its start frame) and `LIST`/`adtl` (one `labl` per cue point, holding the title).
///
/// They are handed to libsndfile as custom chunks (`sf_set_chunk`), which it writes in the header
/// before `data`, for RIFF and RF64 alike. libsndfile 1.2.0 has `SFC_SET_CUE` for the cue points,
/// but its RF64 writer ignores it and no writer of it makes `labl` chunks, so both chunks are laid
/// out here, once, for both containers. libsndfile reads them back (`SFC_GET_CUE` returns each
/// point with its label as the name), and so does ffmpeg (`ffprobe -show_chapters`).
///
/// Every size is the RIFF one: a `labl` counts its cue id and its title with one NUL, never the pad
/// byte that follows an odd-length one. Readers depend on it: ffmpeg reads a title up to its NUL
/// and then expects the next `labl` at the next even offset, so a size that also counts
/// padding loses every title after it.
struct WAVChapterChunks: Equatable {
    /// The `cue ` chunk's body: the count, then 24 bytes a point.
    let cue: [UInt8]
    /// The `LIST` chunk's body: `adtl`, then one `labl` subchunk a point.
    let labels: [UInt8]

    /// The chunks for `chapters`; cue point `n` (from 1) is chapter `n`'s start, labelled with its title.
    ///
    /// A cue point's offset is 32 bits: a start past 2^32 − 1 frames (a day at 48 kHz, only
    /// reachable in RF64) is written as the largest offset there is.
    init(_ chapters: [AudioChapter]) {
        var cue: [UInt8] = []
        Self.append(UInt32(chapters.count), to: &cue)
        var labels = Array("adtl".utf8)
        for (index, chapter) in chapters.enumerated() {
            let identifier = UInt32(index + 1)
            let offset = UInt32(clamping: max(chapter.startFrame.count, 0))
            Self.append(identifier, to: &cue)
            Self.append(offset, to: &cue)  // dwPosition: the play-order position, the offset here
            cue += Array("data".utf8)  // fccChunk: the points are in the `data` chunk
            Self.append(0, to: &cue)  // dwChunkStart: no `wavl` list
            Self.append(0, to: &cue)  // dwBlockStart: uncompressed samples
            Self.append(offset, to: &cue)  // dwSampleOffset: the frame the chapter starts at
            // The title as a C string, up to its first NUL; the size counts the id and the string,
            // and a zero pad byte after an odd size keeps the next subchunk at an even offset.
            let text = Array(chapter.title.utf8.prefix { $0 != 0 }) + [0]
            labels += Array("labl".utf8)
            Self.append(UInt32(4 + text.count), to: &labels)
            Self.append(identifier, to: &labels)
            labels += text
            if text.count % 2 == 1 { labels.append(0) }
        }
        // libsndfile writes a custom chunk rounded up to 4 bytes, counting the zeros it adds, and
        // then reads them as the start of another subchunk, past the chunk's end. So a body 2 bytes
        // short of a multiple of 4 ends with RIFF's filler instead: a `JUNK` subchunk of 2 zeros.
        if labels.count % 4 == 2 { labels += Self.filler }
        self.cue = cue
        self.labels = labels
    }

    /// A `JUNK` subchunk holding 2 zero bytes: 10 bytes, which make a body of 4n + 2 a multiple of 4.
    static let filler: [UInt8] = Array("JUNK".utf8) + [2, 0, 0, 0] + [0, 0]

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }
}
