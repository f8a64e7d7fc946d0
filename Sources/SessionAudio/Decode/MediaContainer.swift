/// A container that libavformat reads for ``MediaFileDecoder``, detected by the file's first bytes,
/// never by its name: what neither libsndfile nor libmpg123 can read.
enum MediaContainer: Equatable {
    /// MP4, M4A, M4B or QuickTime (`ftyp` at byte 4): libavformat's `mov` demuxer.
    case mp4
    /// Core Audio Format holding AAC or ALAC (`caff`, its `desc` chunk's format `aac ` or `alac`):
    /// libavformat's `caf` demuxer. libsndfile reads CAF's PCM, A-law and µ-law itself; its
    /// ALAC reader (1.2.0, Debian 12) refuses ALAC in CAF as ffmpeg writes it ("Supported file
    /// format but unsupported encoding").
    case caf
    /// Raw AAC in ADTS frames (the 12-bit sync `0xFFF` with layer 0), perhaps after an ID3v2 tag:
    /// libavformat's `aac` demuxer.
    case adts
    /// Ogg Opus (`OggS`, then `OpusHead` in the first page): libavformat's `ogg` demuxer and
    /// libavcodec's own Opus decoder. Never detected: only a caller that asks for it gets it
    /// (``AudioFileDecoder/init(path:opusThroughLibavcodec:)``); every other Ogg file is
    /// libsndfile's.
    case oggOpus

    /// The name of the one libavformat demuxer that may read this container.
    var demuxer: String {
        switch self {
        case .mp4: "mov"
        case .caf: "caf"
        case .adts: "aac"
        case .oggOpus: "ogg"
        }
    }

    /// The codecs this container's audio may hold, by libavcodec's names (`avcodec_get_name`),
    /// each decoded by the libavcodec decoder of that name; any other is refused.
    var codecNames: [String] {
        self == .oggOpus ? ["opus"] : ["aac", "alac"]
    }

    /// ``codecNames`` as an error names them: "only … read".
    var codecsRead: String {
        self == .oggOpus ? "Opus is" : "AAC and ALAC are"
    }

    /// What the file is, as ``AudioMeasurement/formatName`` says it.
    var formatName: String {
        switch self {
        case .mp4: "MP4"
        case .caf: "CAF"
        case .adts: "ADTS AAC"
        case .oggOpus: "Ogg Opus"
        }
    }

    /// The container `prefix` (the file's first bytes, 32 or more when the file has them) starts,
    /// or `nil` for anything else. `bytes(offset, count)` reads further, for the frame after an
    /// ID3v2 tag.
    init?(prefix: [UInt8], bytes: (Int64, Int) -> [UInt8]) {
        if prefix.count >= 8, prefix[4..<8].elementsEqual("ftyp".utf8) {
            self = .mp4
        } else if prefix.count >= 32, prefix.starts(with: Array("caff".utf8)),
            prefix[8..<12].elementsEqual("desc".utf8),
            prefix[28..<32].elementsEqual("aac ".utf8) || prefix[28..<32].elementsEqual("alac".utf8)
        {
            // The desc chunk comes first (the CAF specification requires it): its format ID at 28.
            self = .caf
        } else if Self.isADTSHeader(prefix) {
            self = .adts
        } else if prefix.count >= 10, prefix.starts(with: Array("ID3".utf8)), prefix[6..<10].allSatisfy({ $0 < 0x80 }) {
            let tagSize = prefix[6..<10].reduce(Int64(0)) { $0 << 7 | Int64($1) }
            let end = 10 + tagSize + (prefix[5] & 0x10 != 0 ? 10 : 0)
            guard Self.isADTSHeader(bytes(end, 2)) else { return nil }
            self = .adts
        } else {
            return nil
        }
    }

    /// Whether a file starts an Ogg stream of Opus: `OggS`, and its first page's one packet
    /// `OpusHead` (at byte 28); `bytes(offset, count)` reads it.
    static func startsAsOggOpus(_ bytes: (Int64, Int) -> [UInt8]) -> Bool {
        bytes(0, 4).elementsEqual("OggS".utf8) && bytes(28, 8).elementsEqual("OpusHead".utf8)
    }

    /// Whether `bytes` starts with an ADTS header's sync word and layer 0 (MPEG audio's layers are 1…3).
    private static func isADTSHeader(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 2 && bytes[0] == 0xFF && bytes[1] & 0xF6 == 0xF0
    }
}

/// What a container declares about its own structure, read before libavformat sees it: whether
/// it is cut short, and CAF's packet table. Read through `bytes(offset, count)` over a file of
/// `size` bytes.
struct ContainerLayout {
    /// A top-level box (MP4) or chunk (CAF) that runs past the end of the file: its type, the
    /// bytes it declares, and the bytes of it the file holds.
    var cutBox: (type: String, declared: Int64, held: Int64)?
    /// CAF's packet table (`pakt`): how many packets the stream holds, the frames they hold once
    /// the encoder's priming and remainder are taken off, and the priming frames.
    var packetTable: (packets: Int64, validFrames: Int64, primingFrames: Int64)?
    /// Whether an MP4's `moov` holds a compressed movie (`cmov`): zlib data that libavformat
    /// inflates into a buffer of whatever size it declares, 1,000 times its own (a 2 MB file
    /// cost 2.1 GB). No encoder of ours or of the apps writes one, so it is refused unread.
    var compressedMovie = false
    /// Whether a track of an MP4's `moov` has an edit list (`edts`): libavformat then takes the
    /// encoder's priming and the track's length from it; without one, an iTunes-era file says
    /// them in `iTunSMPB` alone.
    var hasEditList = false

    /// The most packets a CAF's packet table may list: 2^22, over 24 hours of 48 kHz AAC (4,050,000
    /// packets of 1,024 frames). libavformat keeps a 24-byte index entry a packet, so a table of
    /// 20 million one-byte packets (a 40 MB file) cost 525 MB; this keeps it under 100 MB.
    static let maximumCAFPackets: Int64 = 1 << 22

    /// At most this many top-level boxes or chunks are walked: a file of millions of empty
    /// boxes is left to libavformat rather than walked for long.
    private static let maximumBoxes = 4_096

    init(_ container: MediaContainer, size: Int64, bytes: (Int64, Int) -> [UInt8]) {
        switch container {
        case .mp4: self.init(mp4Size: size, bytes: bytes)
        case .caf: self.init(cafSize: size, bytes: bytes)
        case .adts, .oggOpus: self.init()
        }
    }

    private init() {}

    /// Walks MP4's top-level boxes: a 32-bit size (1: a 64-bit size follows the type; 0: to the
    /// end of the file) and a 4-character type.
    private init(mp4Size size: Int64, bytes: (Int64, Int) -> [UInt8]) {
        var offset: Int64 = 0
        for _ in 0..<Self.maximumBoxes where offset + 8 <= size {
            let header = bytes(offset, 16)
            guard header.count >= 8 else { return }
            var length = Self.bigEndian(header[0..<4])
            var headerLength: Int64 = 8
            if length == 1 {
                guard header.count >= 16 else { return }
                length = Self.bigEndian(header[8..<16])
                headerLength = 16
            } else if length == 0 {
                return
            }
            guard length >= headerLength else { return }
            if length > size - offset {
                cutBox = (Self.type(header[4..<8]), length, size - offset)
                return
            }
            if Self.type(header[4..<8]) == "moov" {
                let body = (offset + headerLength)..<(offset + length)
                compressedMovie = Self.holdsBox("cmov", from: body.lowerBound, to: body.upperBound, bytes: bytes)
                let tracks = Self.bodies(of: "trak", from: body.lowerBound, to: body.upperBound, bytes: bytes)
                hasEditList = tracks.contains { track in
                    Self.holdsBox("edts", from: track.lowerBound, to: track.upperBound, bytes: bytes)
                }
            }
            offset += length
        }
    }

    /// Whether one of the MP4 boxes between `start` and `end` (the body of another) is of `type`.
    private static func holdsBox(
        _ type: String,
        from start: Int64,
        to end: Int64,
        bytes: (Int64, Int) -> [UInt8]
    ) -> Bool {
        var found = false
        walkBoxes(from: start, to: end, bytes: bytes) { boxType, _ in
            found = boxType == type
            return !found
        }
        return found
    }

    /// The bodies of the MP4 boxes of `type` between `start` and `end` (the body of another).
    private static func bodies(
        of type: String,
        from start: Int64,
        to end: Int64,
        bytes: (Int64, Int) -> [UInt8]
    ) -> [Range<Int64>] {
        var found: [Range<Int64>] = []
        walkBoxes(from: start, to: end, bytes: bytes) { boxType, body in
            if boxType == type { found.append(body) }
            return true
        }
        return found
    }

    /// Hands each MP4 box between `start` and `end` to `visit` (its type and body, clipped to
    /// `end`), at most ``maximumBoxes`` of them, until `visit` returns `false`. A box whose size
    /// is impossible, or runs past `end`, is the last visited (with what body it has).
    private static func walkBoxes(
        from start: Int64,
        to end: Int64,
        bytes: (Int64, Int) -> [UInt8],
        visit: (String, Range<Int64>) -> Bool
    ) {
        var offset = start
        for _ in 0..<maximumBoxes where offset + 8 <= end {
            let header = bytes(offset, 16)
            guard header.count >= 8 else { return }
            var length = bigEndian(header[0..<4])
            var headerLength: Int64 = 8
            if length == 1, header.count >= 16 { (length, headerLength) = (bigEndian(header[8..<16]), 16) }
            let whole = length >= headerLength && length <= end - offset
            let bodyStart = min(offset + headerLength, end)
            let body = bodyStart..<(whole ? offset + length : max(bodyStart, end))
            guard visit(Self.type(header[4..<8]), body), whole else { return }
            offset += length
        }
    }

    /// Walks CAF's chunks after its 8-byte file header: a 4-character type and a 64-bit size
    /// (−1 for a `data` chunk that runs to the end of the file), and reads `pakt`.
    private init(cafSize size: Int64, bytes: (Int64, Int) -> [UInt8]) {
        var offset: Int64 = 8
        for _ in 0..<Self.maximumBoxes where offset + 12 <= size {
            let header = bytes(offset, 12)
            guard header.count == 12 else { return }
            let type = Self.type(header[0..<4])
            let length = Self.bigEndian(header[4..<12])
            if length == -1 && type == "data" { return }
            guard length >= 0 else { return }
            if length > size - offset - 12 {
                cutBox = (type, length, size - offset - 12)
                return
            }
            if type == "pakt", length >= 24 {
                let table = bytes(offset + 12, 24)
                if table.count == 24 {
                    packetTable = (
                        Self.bigEndian(table[0..<8]), Self.bigEndian(table[8..<16]), Self.bigEndian(table[16..<20])
                    )
                }
            }
            offset += 12 + length
        }
    }

    /// The big-endian number in `bytes` (up to 8), as a signed 64-bit value.
    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> Int64 {
        Int64(bitPattern: bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// A box or chunk type for a message: its 4 characters, or their hex when not printable.
    private static func type(_ bytes: ArraySlice<UInt8>) -> String {
        if bytes.allSatisfy({ (0x20...0x7E).contains($0) }) { return String(decoding: bytes, as: UTF8.self) }
        return bytes.map { String($0, radix: 16) }.joined()
    }
}
