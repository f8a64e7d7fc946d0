/// The LAME/Xing tag frame of a whole MP3 that was encoded in pieces: LAME's own tag frame for
/// the same settings, with the fields that describe the whole stream filled in.
///
/// `lame_get_lametag_frame` describes only what its encoder encoded; a file joined from several
/// encoders' frames and ready-made silent frames needs the whole file's frame count, byte count,
/// seek table, delay, padding and checksums. The layout is LAME's (`VbrTag.c`): after the side
/// information come `Xing`/`Info`, flags, frames, bytes, a 100-entry seek table, a quality, then
/// the LAME extension with the 12-bit delay and padding at +141 and the music length and CRCs at +148.
struct LAMETag {
    /// The frame's bytes.
    private(set) var frame: [UInt8]
    /// Where `Xing` or `Info` starts in the frame.
    private let tagOffset: Int

    /// Reads LAME's tag frame for the stream's settings.
    init(template: [UInt8]) throws(AudioError) {
        guard let header = MPEGFrameHeader(template) else {
            throw AudioError(.cannotEncode, path: nil, reason: "LAME's tag frame has no valid MPEG header")
        }
        let offset = 4 + (header.hasCRC ? 2 : 0) + header.sideInfoByteCount
        let name = template.count >= offset + 156 ? Array(template[offset..<offset + 4]) : []
        guard name == Array("Xing".utf8) || name == Array("Info".utf8),
            template[offset + 7] & 7 == 7,
            Array(template[offset + 120..<offset + 124]) == Array("LAME".utf8)
        else {
            throw AudioError(
                .cannotEncode,
                path: nil,
                reason: "LAME's tag frame is not a Xing/Info frame with a LAME extension"
            )
        }
        frame = template
        tagOffset = offset
    }

    /// Fills in the whole stream: `frameCount` audio frames after this one, `byteCount` bytes
    /// from this frame's first to the last frame's end, the seek table (`toc[p]`: the byte at
    /// p % of the frames, as 256ths of `byteCount`), the delay and padding a gapless decoder drops
    /// (LAME's, without the decoder's 529), and the CRC-16 of the audio frames.
    mutating func fill(
        frameCount: Int,
        byteCount: Int,
        toc: [UInt8],
        delay: Int,
        padding: Int,
        musicCRC: UInt16
    ) {
        precondition(toc.count == 100 && (0..<4_096).contains(delay) && (0..<4_096).contains(padding))
        put(UInt32(frameCount), at: tagOffset + 8)
        put(UInt32(byteCount), at: tagOffset + 12)
        frame.replaceSubrange(tagOffset + 16..<tagOffset + 116, with: toc)
        frame[tagOffset + 141] = UInt8(delay >> 4)
        frame[tagOffset + 142] = UInt8((delay & 15) << 4 | padding >> 8)
        frame[tagOffset + 143] = UInt8(padding & 255)
        put(UInt32(byteCount), at: tagOffset + 148)
        frame[tagOffset + 152] = UInt8(musicCRC >> 8)
        frame[tagOffset + 153] = UInt8(musicCRC & 255)
        let tagCRC = CRC16.update(0, frame[0..<tagOffset + 154])
        frame[tagOffset + 154] = UInt8(tagCRC >> 8)
        frame[tagOffset + 155] = UInt8(tagCRC & 255)
    }

    private mutating func put(_ value: UInt32, at offset: Int) {
        for index in 0..<4 { frame[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
    }
}

/// The CRC-16 LAME's tag uses (polynomial 0x8005, reflected, starting at 0).
enum CRC16 {
    private static let table: [UInt16] = (0..<256).map { byte in
        var crc = UInt16(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? crc >> 1 ^ 0xA001 : crc >> 1 }
        return crc
    }

    /// `crc` continued over `bytes`.
    static func update(_ crc: UInt16, _ bytes: some Collection<UInt8>) -> UInt16 {
        table.withUnsafeBufferPointer { table in
            var crc = crc
            for byte in bytes { crc = crc >> 8 ^ table[Int((crc ^ UInt16(byte)) & 255)] }
            return crc
        }
    }
}
