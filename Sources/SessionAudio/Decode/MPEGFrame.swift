/// An MPEG audio Layer III frame header, read from its four bytes: enough to find where a frame
/// ends in LAME's output and to make a frame of silence that fits beside LAME's frames.
///
/// Read by hand because no library splits an encoder's output into frames: libmpg123 parses
/// headers only while decoding, LAME only while writing.
struct MPEGFrameHeader: Equatable {
    /// The four header bytes, big-endian.
    let bits: UInt32

    /// Reads the header at the start of `bytes`; `nil` unless it is a valid Layer III header.
    init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count >= 4 else { return nil }
        let value = bytes.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        self.init(bits: value)
    }

    init?(bits: UInt32) {
        self.bits = bits
        guard bits >> 21 == 0x7FF, version != 1, layerBits == 1, bitrateIndex != 0, bitrateIndex != 15,
            sampleRateIndex != 3
        else { return nil }
    }

    /// 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5.
    var version: UInt32 { (bits >> 19) & 3 }
    private var layerBits: UInt32 { (bits >> 17) & 3 }
    /// Whether a 16-bit CRC follows the header.
    var hasCRC: Bool { (bits >> 16) & 1 == 0 }
    var bitrateIndex: Int { Int((bits >> 12) & 15) }
    private var sampleRateIndex: Int { Int((bits >> 10) & 3) }
    var isPadded: Bool { (bits >> 9) & 1 == 1 }
    /// 3 for one channel.
    var channelMode: UInt32 { (bits >> 6) & 3 }
    var isMPEG1: Bool { version == 3 }

    /// The bit rate in kb/s.
    var kilobits: Int {
        let table =
            isMPEG1
            ? [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
            : [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        return table[bitrateIndex]
    }

    var sampleRate: Int {
        let base = [44_100, 48_000, 32_000][sampleRateIndex]
        switch version {
        case 3: return base
        case 2: return base / 2
        default: return base / 4
        }
    }

    /// Samples per channel the frame decodes to.
    var samplesPerFrame: Int { isMPEG1 ? 1_152 : 576 }

    /// The frame's length in bytes, header included.
    var byteCount: Int {
        (isMPEG1 ? 144 : 72) * kilobits * 1_000 / sampleRate + (isPadded ? 1 : 0)
    }

    /// Bytes of side information after the header (and its CRC): where a frame's data begins.
    var sideInfoByteCount: Int {
        let mono = channelMode == 3
        return isMPEG1 ? (mono ? 17 : 32) : (mono ? 9 : 17)
    }

    /// The same header at `kilobits`, unpadded; `nil` when its MPEG version has no such bit rate.
    func with(kilobits: Int) -> MPEGFrameHeader? {
        (1..<15).lazy.compactMap { self.with(bitrateIndex: $0) }.first { $0.kilobits == kilobits }
    }

    /// The same header at another bit rate index, unpadded.
    func with(bitrateIndex index: Int) -> MPEGFrameHeader? {
        MPEGFrameHeader(bits: bits & ~(UInt32(15) << 12) & ~(UInt32(1) << 9) | UInt32(index) << 12)
    }

    /// The header's four bytes.
    var bytes: [UInt8] {
        [
            UInt8(bits >> 24), UInt8(truncatingIfNeeded: bits >> 16), UInt8(truncatingIfNeeded: bits >> 8),
            UInt8(truncatingIfNeeded: bits),
        ]
    }
}

/// A frame that decodes to digital silence on its own: the header of the stream's other frames
/// (rate, channels, mode), no CRC, and side information of zeros: no bit reservoir
/// (`main_data_begin` 0), no Huffman data (`part2_3_length` 0), so every coefficient is 0 and,
/// once the frame before it has decoded to silence, so does it.
enum SilentMPEGFrame {
    /// The smallest such frame for a variable rate, or one at `header`'s own rate for a constant one.
    static func bytes(like header: MPEGFrameHeader, constantRate: Bool) -> [UInt8] {
        var chosen = header.with(bitrateIndex: header.bitrateIndex)!
        if !constantRate {
            // The lowest bit rate whose frame holds the header and side information.
            for index in 1..<15 {
                if let candidate = header.with(bitrateIndex: index),
                    candidate.byteCount >= 4 + candidate.sideInfoByteCount
                {
                    chosen = candidate
                    break
                }
            }
        }
        // Protection bit set (no CRC), mode extension cleared (no joint-stereo coding to undo).
        let unprotected = MPEGFrameHeader(bits: (chosen.bits | 1 << 16) & ~(UInt32(3) << 4))!
        var frame = [UInt8](repeating: 0, count: unprotected.byteCount)
        frame.replaceSubrange(0..<4, with: unprotected.bytes)
        return frame
    }
}

/// Splits a byte stream into whole MPEG frames, holding back a partial frame until the rest arrives.
struct MPEGFrameSplitter {
    private var pending: [UInt8] = []

    /// Appends `bytes` and calls `body` with each whole frame now complete, in order.
    mutating func append(
        _ bytes: [UInt8],
        _ body: (ArraySlice<UInt8>, MPEGFrameHeader) throws(AudioError) -> Void
    )
        throws(AudioError)
    {
        pending.append(contentsOf: bytes)
        var start = 0
        while pending.count - start >= 4 {
            guard let header = MPEGFrameHeader(pending[start...]) else {
                throw AudioError(.cannotEncode, path: nil, reason: "LAME's output lost its frame sync at byte \(start)")
            }
            let end = start + header.byteCount
            guard end <= pending.count else { break }
            try body(pending[start..<end], header)
            start = end
        }
        pending.removeFirst(start)
    }

    /// Whether a partial frame is held back.
    var isEmpty: Bool { pending.isEmpty }
}
