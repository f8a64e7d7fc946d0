public import Foundation

/// ffmpeg as an encoder: test inputs in the formats render-session reads but does not write
/// (AAC and ALAC in MP4, ALAC in CAF, ADTS AAC), made at test time.
extension FFmpeg {
    /// Runs `ffmpeg -i input ARGUMENTS output` quietly, replacing `output`; fails with ffmpeg's
    /// own message. With `lavfi`, `input` is a filter source (`sine=frequency=440:duration=1`).
    public static func encode(
        _ input: String,
        _ arguments: [String],
        to output: String,
        lavfi: Bool = false
    ) async throws {
        let ffmpeg = try Self.path ?? { throw Failure(message: "ffmpeg is not installed") }()
        let source = (lavfi ? ["-f", "lavfi"] : []) + ["-i", input]
        _ = try await run(ffmpeg, ["-hide_banner", "-nostdin", "-v", "error", "-y"] + source + arguments + [output])
    }
}

/// A Core Audio Format file holding AAC, built from ADTS frames, as Apple's `afconvert` writes
/// one: FFmpeg 5.1's CAF muxer refuses AAC ("muxing codec currently unsupported"), so tests build
/// it themselves. Its `kuki` chunk is the MPEG-4 `esds` descriptor libavformat reads, its `pakt`
/// chunk the packet sizes with the valid, priming and remainder frames.
public enum CAFWithAAC {
    /// The CAF file for the ADTS stream `adts` (AAC LC, one raw block per frame), declaring
    /// `validFrames` frames after `primingFrames` of the encoder's priming.
    public static func file(fromADTS adts: [UInt8], validFrames: Int64, primingFrames: Int32) throws -> Data {
        var packets: [ArraySlice<UInt8>] = []
        var offset = 0
        var header: [UInt8] = []
        while offset + 7 <= adts.count {
            let bytes = adts[offset..<(offset + 7)].map { $0 }
            guard bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 else {
                throw FFmpeg.Failure(message: "no ADTS sync at byte \(offset)")
            }
            let headerLength = bytes[1] & 1 == 1 ? 7 : 9
            let length = Int(bytes[3] & 3) << 11 | Int(bytes[4]) << 3 | Int(bytes[5]) >> 5
            guard length > headerLength, offset + length <= adts.count else {
                throw FFmpeg.Failure(message: "a bad ADTS frame length at byte \(offset)")
            }
            if header.isEmpty { header = bytes }
            packets.append(adts[(offset + headerLength)..<(offset + length)])
            offset += length
        }
        guard !header.isEmpty else { throw FFmpeg.Failure(message: "no ADTS frames") }
        let objectType = UInt8(header[2] >> 6) + 1
        let rateIndex = (header[2] >> 2) & 0xF
        let channels = (header[2] & 1) << 2 | header[3] >> 6
        let rates: [Double] = [
            96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000,
        ]
        let audioSpecificConfig = [objectType << 3 | rateIndex >> 1, (rateIndex & 1) << 7 | channels << 3]

        var file = Data("caff".utf8) + [0, 1, 0, 0]
        func chunk(_ type: String, _ body: [UInt8]) {
            file += Data(type.utf8) + bigEndian(UInt64(body.count)) + body
        }
        chunk(
            "desc",
            bigEndian(rates[Int(rateIndex)].bitPattern) + Array("aac ".utf8) + bigEndian(UInt32(2))
                + bigEndian(UInt32(0)) + bigEndian(UInt32(1_024)) + bigEndian(UInt32(channels)) + bigEndian(UInt32(0))
        )
        // esds: version and flags, then ES, decoder config and decoder-specific descriptors.
        let decoderSpecific: [UInt8] = [0x05, UInt8(audioSpecificConfig.count)] + audioSpecificConfig
        let decoderConfig: [UInt8] =
            [0x04, UInt8(13 + decoderSpecific.count), 0x40, 0x15, 0, 0, 0] + bigEndian(UInt32(0))
            + bigEndian(UInt32(0)) + decoderSpecific
        let elementary: [UInt8] = [0x03, UInt8(3 + decoderConfig.count + 3), 0, 0, 0] + decoderConfig + [0x06, 1, 2]
        chunk("kuki", [0, 0, 0, 0] + elementary)
        var table = bigEndian(UInt64(packets.count)) + bigEndian(UInt64(validFrames))
        table += bigEndian(UInt32(bitPattern: primingFrames))
        table += bigEndian(UInt32(Int64(packets.count) * 1_024 - validFrames - Int64(primingFrames)))
        for packet in packets { table += variableLength(packet.count) }
        chunk("pakt", table)
        chunk("data", [0, 0, 0, 0] + packets.flatMap { $0 })
        return file
    }

    /// `value`'s bytes, most significant first.
    private static func bigEndian<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    /// CAF's variable-length integer: 7 bits a byte, most significant first, the high bit set
    /// on all but the last.
    private static func variableLength(_ value: Int) -> [UInt8] {
        var bytes = [UInt8(value & 0x7F)]
        var rest = value >> 7
        while rest > 0 {
            bytes.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
            rest >>= 7
        }
        return bytes
    }
}
