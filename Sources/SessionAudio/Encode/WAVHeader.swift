internal import SessionTimeline

/// The RIFF form a WAV is written in.
enum WAVContainer: Sendable, Equatable {
    /// Plain RIFF/WAVE, with 32-bit sizes.
    case riff
    /// RF64 (EBU Tech 3306): the sizes move to a `ds64` chunk of 64-bit values.
    case rf64

    /// RF64 when `dataByteCount` would pass 4 GiB less 1 MiB (left for the header and tags), RIFF
    /// otherwise: the rule both of ``SoundFileWriter``'s destinations use.
    init(dataByteCount: Int64) {
        self = dataByteCount > Int64(UInt32.max) - (1 << 20) ? .rf64 : .riff
    }
}

/// The bytes around the samples of a WAV whose frame count is known in advance, as libsndfile
/// 1.2.0 writes them for ``SoundFileWriter/init(path:sampleRate:channelCount:format:frameCount:title:)``,
/// computed before the first sample so that a stream never has to seek back.
///
/// Written by hand only because libsndfile cannot write it: its WAV and RF64 writers refuse a
/// pipe (`SFE_NO_PIPE_WRITE`) and, whatever the destination, write a provisional header at open
/// and seek back at close to fill in the sizes. Everything here reproduces what that seek-back
/// leaves in a file, so that a streamed WAV is byte for byte the file libsndfile would have
/// written (the tests compare the two):
///
/// - `RIFF` container: a 16-byte `fmt ` chunk (`WAVE_FORMAT_PCM`, or `WAVE_FORMAT_IEEE_FLOAT`
///   followed by a `fact` chunk holding the frame count); libsndfile's WAV writer never uses
///   `WAVE_FORMAT_EXTENSIBLE`, whatever the channel count.
/// - `RF64` container: a `ds64` chunk (RIFF size, data size, frame count, no table) and a 40-byte
///   `WAVE_FORMAT_EXTENSIBLE` `fmt ` chunk, with libsndfile's default channel mask (mono: centre;
///   stereo: left and right; 4, 6 and 8 channels: quad, 5.1 and 7.1; otherwise none) and the PCM
///   or IEEE-float subformat GUID. The `data` chunk's 32-bit size is `0xFFFFFFFF`, as RF64 says.
/// - Tags are a `LIST`/`INFO` chunk after `fmt ` (and `fact`): the title as `INAM`, the album as
///   `IPRD`, the artist as `IART`, in that order, each NUL-terminated and padded to an even length.
/// - Chapters are a `cue ` and a `LIST`/`adtl` chunk after the tags (``WAVChapterChunks``), of any
///   size: libsndfile cannot write them past about 100 KB of header (it drops the `adtl` list and
///   leaves `data` inside the size it declared), so every WAV file with a known length is written
///   from this header, not only a stream.
/// - 32-bit float RIFF: libsndfile reserves room for a `PEAK` chunk when it opens the file;
///   ``SoundFileWriter`` then turns the chunk off, and libsndfile keeps the samples where they
///   were by filling the room with a `PAD ` chunk whenever the header without it is at least 9
///   bytes shorter (so a short title can leave a `PAD ` chunk too).
/// - 32-bit float RF64: libsndfile 1.2.0 *adds* a `PEAK` chunk when asked to leave it out (its
///   `SFC_SET_ADD_PEAK_CHUNK` handler creates the chunk when none exists), holding each channel's
///   peak and a time stamp taken at close. A stream cannot know the peaks before the samples, so
///   it writes a `PAD ` chunk of the same size instead: the one difference from the file, and the
///   samples still start at the same offset.
/// - After the samples, one zero byte when their length is odd; the RIFF size counts it, the
///   `data` size does not.
struct WAVHeader: Sendable, Equatable {
    /// The bytes before the first sample, ending with the `data` chunk's header.
    let bytes: [UInt8]
    /// The bytes after the last sample: a zero pad byte when the data's length is odd, or nothing.
    let trailer: [UInt8]
    /// The length of the samples the header announces.
    let dataByteCount: Int64

    /// Lays out the header for `frameCount` frames; `strings` are the tags' `INFO` markers and
    /// UTF-8 bytes (``infoStrings(_:)``), none when empty; `chapters` go in `cue ` and
    /// `LIST`/`adtl` chunks after them, where libsndfile puts them in a file (``WAVChapterChunks``).
    init(
        container: WAVContainer,
        sampleRate: Int,
        channelCount: Int,
        format: SampleFormat,
        frameCount: Int64,
        strings: [InfoString],
        chapters: [AudioChapter] = []
    ) {
        let blockAlign = channelCount * format.bytesPerSample
        let bitsPerSample = UInt16(format.bytesPerSample * 8)
        let isFloat = format == .float32
        dataByteCount = frameCount * Int64(blockAlign)
        trailer = dataByteCount % 2 == 1 ? [0] : []
        // WAVLIKE_PEAK_CHUNK_SIZE: version, time stamp, and a value and position per channel.
        let peakChunkLength = 8 + 8 + 8 * channelCount

        var out = LittleEndianBytes()
        switch container {
        case .riff:
            out.tag("RIFF")
            out.uint32(0)  // the RIFF size, filled in below
            out.tag("WAVE")
            out.tag("fmt ")
            out.uint32(16)
            out.uint16(isFloat ? 3 : 1)  // WAVE_FORMAT_IEEE_FLOAT or WAVE_FORMAT_PCM
            out.uint16(UInt16(truncatingIfNeeded: channelCount))
            out.uint32(UInt32(truncatingIfNeeded: sampleRate))
            out.uint32(UInt32(truncatingIfNeeded: sampleRate * blockAlign))
            out.uint16(UInt16(truncatingIfNeeded: blockAlign))
            out.uint16(bitsPerSample)
            if isFloat {
                out.tag("fact")
                out.uint32(4)
                out.uint32(UInt32(truncatingIfNeeded: frameCount))
            }
            let dataOffsetAtOpen = out.count + peakChunkLength + 8
            out.list(strings)
            out.chapters(chapters)
            if isFloat, out.count + 16 < dataOffsetAtOpen {
                out.padChunk(payload: dataOffsetAtOpen - out.count - 16)
            }
            out.tag("data")
            out.uint32(UInt32(truncatingIfNeeded: dataByteCount))
            let riffSize = Int64(out.count) + dataByteCount + Int64(trailer.count) - 8
            out.patchUInt32(UInt32(truncatingIfNeeded: riffSize), at: 4)
        case .rf64:
            out.tag("RF64")
            out.uint32(0xFFFF_FFFF)
            out.tag("WAVE")
            out.tag("ds64")
            out.uint32(28)
            out.uint64(0)  // the RIFF size, filled in below
            out.uint64(UInt64(dataByteCount))
            out.uint64(UInt64(frameCount))
            out.uint32(0)  // no table
            out.tag("fmt ")
            out.uint32(40)
            out.uint16(0xFFFE)  // WAVE_FORMAT_EXTENSIBLE
            out.uint16(UInt16(truncatingIfNeeded: channelCount))
            out.uint32(UInt32(truncatingIfNeeded: sampleRate))
            out.uint32(UInt32(truncatingIfNeeded: sampleRate * blockAlign))
            out.uint16(UInt16(truncatingIfNeeded: blockAlign))
            out.uint16(bitsPerSample)
            out.uint16(22)  // cbSize
            out.uint16(bitsPerSample)  // valid bits per sample
            out.uint32(Self.defaultChannelMask(channelCount: channelCount))
            // KSDATAFORMAT_SUBTYPE_PCM or _IEEE_FLOAT: {0000000X-0000-0010-8000-00AA00389B71}.
            out.uint32(isFloat ? 3 : 1)
            out.append([0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71])
            out.list(strings)
            out.chapters(chapters)
            if isFloat {
                out.padChunk(payload: peakChunkLength - 8)
            }
            out.tag("data")
            out.uint32(0xFFFF_FFFF)
            let riffSize = Int64(out.count) + dataByteCount + Int64(trailer.count) - 8
            out.patchUInt64(UInt64(riffSize), at: 20)
        }
        bytes = out.bytes
    }

    /// One `LIST`/`INFO` string: its marker (`INAM`) and its UTF-8 bytes, without a NUL.
    struct InfoString: Sendable, Equatable {
        let marker: String
        let bytes: [UInt8]
    }

    /// The `INFO` strings libsndfile writes for `metadata`'s title, album and artist, in its order;
    /// what it stores of each is the C string, up to the first NUL.
    ///
    /// - Throws: ``AudioError`` with code `cannotWrite`, naming `name`, for a tag that is empty
    ///   before its first NUL, which libsndfile refuses.
    static func infoStrings(_ metadata: AudioMetadata, name: String) throws(AudioError) -> [InfoString] {
        let tags = [
            ("title", "INAM", metadata.title), ("album", "IPRD", metadata.album), ("artist", "IART", metadata.artist),
        ]
        var strings: [InfoString] = []
        for case (let tag, let marker, let value?) in tags where !value.isEmpty {
            let bytes = Array(value.utf8.prefix { $0 != 0 })
            guard !bytes.isEmpty else {
                throw AudioError(
                    .cannotWrite,
                    path: name,
                    reason: "cannot set the \(tag) tag: it is empty before its first NUL character"
                )
            }
            strings.append(InfoString(marker: marker, bytes: bytes))
        }
        return strings
    }

    /// The container for `dataByteCount` bytes of samples after this metadata: RF64 when a RIFF
    /// file would pass 4 GiB less 1 MiB, counting the chapters' chunks, which can be megabytes.
    static func container(dataByteCount: Int64, chapters: [AudioChapter]) -> WAVContainer {
        let chapterBytes = chapters.reduce(Int64(0)) { $0 + 40 + Int64($1.title.utf8.count) }
        return WAVContainer(dataByteCount: dataByteCount + chapterBytes)
    }

    /// libsndfile's channel mask for an RF64 file whose caller set no channel map.
    static func defaultChannelMask(channelCount: Int) -> UInt32 {
        switch channelCount {
        case 1: 0x4
        case 2: 0x3
        case 4: 0x33
        case 6: 0x3F
        case 8: 0xFF
        default: 0
        }
    }
}

/// A byte array built front to back in little-endian order, as RIFF wants its numbers.
private struct LittleEndianBytes {
    var bytes: [UInt8] = []
    var count: Int { bytes.count }

    mutating func append(_ more: [UInt8]) { bytes += more }
    mutating func tag(_ fourCC: String) { bytes += Array(fourCC.utf8) }
    mutating func uint16(_ value: UInt16) { bytes += withUnsafeBytes(of: value.littleEndian, Array.init) }
    mutating func uint32(_ value: UInt32) { bytes += withUnsafeBytes(of: value.littleEndian, Array.init) }
    mutating func uint64(_ value: UInt64) { bytes += withUnsafeBytes(of: value.littleEndian, Array.init) }

    mutating func patchUInt32(_ value: UInt32, at offset: Int) {
        bytes.replaceSubrange(offset..<(offset + 4), with: withUnsafeBytes(of: value.littleEndian, Array.init))
    }

    mutating func patchUInt64(_ value: UInt64, at offset: Int) {
        bytes.replaceSubrange(offset..<(offset + 8), with: withUnsafeBytes(of: value.littleEndian, Array.init))
    }

    /// A `PAD ` chunk of `payload` zero bytes, libsndfile's filler.
    mutating func padChunk(payload: Int) {
        tag("PAD ")
        uint32(UInt32(payload))
        bytes += [UInt8](repeating: 0, count: payload)
    }

    /// The chapters' `cue ` and `LIST`/`adtl` chunks, if there are any.
    mutating func chapters(_ chapters: [AudioChapter]) {
        guard !chapters.isEmpty else { return }
        let chunks = WAVChapterChunks(chapters)
        for (id, body) in [("cue ", chunks.cue), ("LIST", chunks.labels)] {
            tag(id)
            uint32(UInt32(body.count))
            append(body)
        }
    }

    /// A `LIST`/`INFO` chunk of `strings`, as libsndfile's `wavlike_write_strings` writes it:
    /// each string with its NUL, padded to an even length. Nothing when there are none.
    mutating func list(_ strings: [WAVHeader.InfoString]) {
        guard !strings.isEmpty else { return }
        let stored = strings.map { ($0.bytes.count + 1 + 1) & ~1 }
        tag("LIST")
        uint32(UInt32(4 + stored.reduce(0) { $0 + 8 + $1 }))
        tag("INFO")
        for (string, length) in zip(strings, stored) {
            tag(string.marker)
            uint32(UInt32(length))
            bytes += string.bytes
            bytes += [UInt8](repeating: 0, count: length - string.bytes.count)
        }
    }
}
