import Foundation
import SessionAudio
import SessionTimeline
import TestSupport
import Testing

/// AAC and ALAC through libavformat and libavcodec (MediaFileDecoder): MP4 with its edit list,
/// CAF, ADTS, and what a cut or damaged file does. Every input is made by ffmpeg at test time.
@Suite("Decoding AAC and ALAC", .requiresFFmpeg)
struct AACDecodingTests {
    /// The input's length: not a whole number of AAC frames (1,024) or milliseconds.
    static let frameCount = 44_321
    /// Where the tone starts: silence before it.
    static let onset = 1_000

    /// 44,321 frames of 44.1 kHz mono: silence, then a 441 Hz tone at half scale from frame 1,000.
    static func source(in folder: TemporaryFolder) throws -> (path: String, samples: [Float]) {
        let samples: [Float] = (0..<frameCount).map { index in
            index < onset ? 0 : Float(0.5 * sin(2 * Double.pi * 441 * Double(index - onset) / 44_100))
        }
        let path = folder.path("source.wav")
        try writeWAV(samples, rate: 44_100, channels: 1, to: path)
        return (path, samples)
    }

    /// The source encoded by ffmpeg with `arguments` into `folder`'s `name`; returns its path.
    static func encoded(_ arguments: [String], as name: String, in folder: TemporaryFolder) async throws -> String {
        let path = folder.path(name)
        try await FFmpeg.encode(try source(in: folder).path, arguments, to: path)
        return path
    }

    /// The source encoded by ffmpeg as ADTS AAC into `folder`'s `tone.aac`: its bytes.
    static func adts(in folder: TemporaryFolder) async throws -> [UInt8] {
        let path = try await encoded(["-c:a", "aac", "-f", "adts"], as: "tone.aac", in: folder)
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The first frame at which the tone reaches a quarter of full scale.
    static func firstLoud(_ samples: [Float]) -> Int? {
        samples.firstIndex { abs($0) >= 0.25 }
    }

    @Test(
        "An M4A decodes to exactly the frames encoded, its priming and padding trimmed by its edit list",
        arguments: [
            ("exact timescale", ["-movie_timescale", "44100"]),
            ("ffmpeg's default millisecond timescale", []),
        ]
    )
    func m4aIsGapless(name: String, timescale: [String]) async throws {
        let folder = try TemporaryFolder()
        let source = try Self.source(in: folder)
        let path = folder.path("tone.m4a")
        try await FFmpeg.encode(source.path, ["-c:a", "aac", "-b:a", "96k"] + timescale, to: path)
        let measurement = try AudioFileDecoder.measure(path: path)
        #expect(measurement.frameCount == Frames(Int64(Self.frameCount)), "\(name)")
        #expect(measurement.gapless && measurement.formatName == "MP4")
        #expect(measurement.sampleRate == 44_100 && measurement.channelCount == 1)
        let decoded = try decodeAll(path)
        #expect(decoded.samples.count == Self.frameCount, "decoded, \(name)")
        let loud = try #require(Self.firstLoud(decoded.samples))
        #expect((Self.onset..<(Self.onset + 20)).contains(loud), "the tone starts at frame \(loud), not 1,000 + 1,024")
    }

    @Test("ALAC in MP4 decodes to the very samples encoded")
    func alacIsExact() async throws {
        let folder = try TemporaryFolder()
        let source = try Self.source(in: folder)
        let path = folder.path("tone-alac.m4a")
        try await FFmpeg.encode(source.path, ["-c:a", "alac"], to: path)
        let decoded = try decodeAll(path)
        let expected = try decodeAll(source.path).samples
        #expect(decoded.samples == expected, "lossless: every 16-bit sample back")
        #expect(try AudioFileDecoder.measure(path: path).formatName == "MP4")
    }

    @Test("ALAC in CAF (which libsndfile 1.2.0 refuses as ffmpeg writes it) decodes to the samples encoded")
    func alacInCAF() async throws {
        let folder = try TemporaryFolder()
        let source = try Self.source(in: folder)
        let path = folder.path("tone.caf")
        try await FFmpeg.encode(source.path, ["-c:a", "alac", "-f", "caf"], to: path)
        let measurement = try AudioFileDecoder.measure(path: path)
        #expect(measurement.formatName == "CAF" && measurement.gapless, "its packet table says the length")
        #expect(measurement.frameCount == Frames(Int64(Self.frameCount)))
        #expect(try decodeAll(path).samples == decodeAll(source.path).samples)
    }

    @Test("ADTS AAC decodes to every frame it holds, priming included: it says nothing of its length")
    func adts() async throws {
        let folder = try TemporaryFolder()
        let path = try await Self.encoded(["-c:a", "aac", "-f", "adts"], as: "tone.aac", in: folder)
        let measurement = try AudioFileDecoder.measure(path: path)
        #expect(measurement.formatName == "ADTS AAC" && !measurement.gapless)
        #expect(measurement.frameCount == 46_080, "45 AAC frames of 1,024")
        let loud = try #require(Self.firstLoud(try decodeAll(path).samples))
        #expect((Self.onset + 1_024..<(Self.onset + 1_044)).contains(loud), "the priming stays: \(loud)")

        // After an ID3v2 tag, as some servers send it, it is still ADTS.
        let tagged = folder.path("tagged.aac")
        let tag: [UInt8] = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, 10] + [UInt8](repeating: 0, count: 10)
        try (Data(tag) + Data(contentsOf: URL(fileURLWithPath: path))).write(to: URL(fileURLWithPath: tagged))
        #expect(try AudioFileDecoder.measure(path: tagged).frameCount == 46_080)
    }

    @Test("AAC in CAF decodes to its packet table's valid frames, the priming skipped, as the M4A does")
    func aacInCAF() async throws {
        let folder = try TemporaryFolder()
        let source = try Self.source(in: folder)
        try await FFmpeg.encode(source.path, ["-c:a", "aac", "-f", "adts"], to: folder.path("tone.aac"))
        try await FFmpeg.encode(source.path, ["-c:a", "aac", "-movie_timescale", "44100"], to: folder.path("tone.m4a"))
        let adts = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder.path("tone.aac"))))
        let path = folder.path("tone-aac.caf")
        try CAFWithAAC.file(fromADTS: adts, validFrames: Int64(Self.frameCount), primingFrames: 1_024)
            .write(to: URL(fileURLWithPath: path))
        let measurement = try AudioFileDecoder.measure(path: path)
        #expect(measurement.formatName == "CAF" && measurement.gapless)
        #expect(measurement.frameCount == Frames(Int64(Self.frameCount)))
        #expect(try decodeAll(path).samples == decodeAll(folder.path("tone.m4a")).samples, "the same trim as MP4's")
    }

    @Test("An M4A cut at half is cut short: its mdat box runs past the end; one line naming the file")
    func cutAtHalf() async throws {
        let folder = try TemporaryFolder()
        let whole = try await Self.encoded(["-c:a", "aac"], as: "whole.m4a", in: folder)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: whole)))
        let path = folder.path("cut.m4a")
        try Data(bytes.prefix(bytes.count / 2)).write(to: URL(fileURLWithPath: path))
        // ffmpeg writes ftyp, free, mdat, then moov at the end: mdat is the box that is cut.
        let mdat = try #require(Self.box("mdat", in: bytes))
        let error = AudioError(
            .truncated,
            path: path,
            reason:
                "the file is cut short: its mdat box declares \(mdat.size) bytes, the file holds \(bytes.count / 2 - mdat.offset) of them"
        )
        #expect(throws: error) { try AudioFileDecoder.measure(path: path) }
        #expect(!error.description.contains("\n"))
    }

    @Test("An M4A whose mdat holds fewer packets than its sample table declares is cut short, at its end")
    func fewerPacketsThanDeclared() async throws {
        let folder = try TemporaryFolder()
        let source = try Self.source(in: folder)
        let whole = folder.path("whole.m4a")
        try await FFmpeg.encode(
            source.path,
            ["-c:a", "aac", "-movie_timescale", "44100", "-movflags", "+faststart"],
            to: whole
        )
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: whole)))
        // moov first, then mdat, the last box: cut it at half and make its size agree, so that
        // only the sample table (stsz) still declares the packets that are gone.
        let mdat = try #require(Self.box("mdat", in: bytes))
        let kept = mdat.size / 2
        bytes = Array(bytes.prefix(mdat.offset + kept))
        for index in 0..<4 { bytes[mdat.offset + index] = UInt8(truncatingIfNeeded: kept >> (24 - 8 * index)) }
        let path = folder.path("short.m4a")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try decodeAll(path)
        } throws: { error in
            let error = error as? AudioError
            return error?.code == .truncated
                && error?.description.hasPrefix(
                    "Cannot decode \(path): the file is cut short: its MP4 header declares \(Self.frameCount) frames, it holds "
                ) == true
        }
        #expect(throws: AudioError.self) { try AudioFileDecoder.measure(path: path) }
    }

    @Test("A cut ADTS stream and a cut CAF are cut short, each in one line naming the file")
    func cutADTSAndCAF() async throws {
        let folder = try TemporaryFolder()
        let adts = try await Self.adts(in: folder)
        let cutADTS = folder.path("cut.aac")
        let cut = adts.count / 2
        try Data(adts.prefix(cut)).write(to: URL(fileURLWithPath: cutADTS))
        // The frame the cut falls in: each ADTS frame's length is in bits 30…42 of its header.
        var frame = 0
        while case let next = Int(adts[frame + 3] & 3) << 11 | Int(adts[frame + 4]) << 3 | Int(adts[frame + 5]) >> 5,
            frame + next <= cut
        {
            frame += next
        }
        let length = Int(adts[frame + 3] & 3) << 11 | Int(adts[frame + 4]) << 3 | Int(adts[frame + 5]) >> 5
        #expect(
            throws: AudioError(
                .truncated,
                path: cutADTS,
                reason:
                    "the file is cut short: its last ADTS frame declares \(length) bytes, the file holds \(cut - frame) of them"
            )
        ) { try AudioFileDecoder.measure(path: cutADTS) }

        let caf = try CAFWithAAC.file(fromADTS: adts, validFrames: Int64(Self.frameCount), primingFrames: 1_024)
        let cutCAF = folder.path("cut.caf")
        try caf.prefix(caf.count - 1_000).write(to: URL(fileURLWithPath: cutCAF))
        // The data chunk is the last: its declared size runs 1,000 bytes past the end.
        let bytes = [UInt8](caf)
        let data = try #require((0..<(bytes.count - 4)).last { bytes[$0..<($0 + 4)].elementsEqual("data".utf8) })
        let declared = bytes[(data + 4)..<(data + 12)].reduce(0) { $0 << 8 | Int($1) }
        #expect(
            throws: AudioError(
                .truncated,
                path: cutCAF,
                reason:
                    "the file is cut short: its data chunk declares \(declared) bytes, the file holds \(declared - 1_000) of them"
            )
        ) { try AudioFileDecoder.measure(path: cutCAF) }
    }

    @Test("A damaged M4A (bytes overwritten in its audio) is an error naming the file, never silence")
    func damaged() async throws {
        let folder = try TemporaryFolder()
        let whole = try await Self.encoded(["-c:a", "aac", "-movie_timescale", "44100"], as: "whole.m4a", in: folder)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: whole)))
        let mdat = try #require(Self.box("mdat", in: bytes))
        for index in (mdat.offset + 2_000)..<(mdat.offset + 2_600) {
            bytes[index] = UInt8(truncatingIfNeeded: index &* 7_919)
        }
        let path = folder.path("damaged.m4a")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try AudioFileDecoder.measure(path: path)
        } throws: { error in
            let error = error as? AudioError
            return error?.code == .cannotDecode
                && error?.description.hasPrefix("Cannot decode \(path): libavcodec: ") == true
                && error?.description.contains("\n") == false
        }
    }

    @Test("An MP4 holding another codec is refused by name: only AAC and ALAC are read")
    func otherCodec() async throws {
        let folder = try TemporaryFolder()
        let path = try await Self.encoded(["-c:a", "libmp3lame", "-f", "mp4"], as: "mp3-in.mp4", in: folder)
        #expect(
            throws: AudioError(
                .unsupportedFormat,
                path: path,
                reason: "the MP4 file holds mp3 audio; only AAC and ALAC are read"
            )
        ) { try AudioFileDecoder.measure(path: path) }
    }

    /// `bytes` in the zlib format as stored (uncompressed) deflate blocks, which every inflater reads.
    static func zlibStored(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, bytes.count - offset)
            let final: UInt8 = offset + count == bytes.count ? 1 : 0
            out += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += bytes[offset..<(offset + count)]
            offset += count
        } while offset < bytes.count
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return out + withUnsafeBytes(of: (b << 16 | a).bigEndian, Array.init)
    }

    /// An MP4 box of `type` holding `body`.
    static func mp4Box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: UInt32(8 + body.count).bigEndian, Array.init) + Array(type.utf8) + body
    }

    @Test(
        "An M4A with a compressed movie box (cmov) is refused before libavformat inflates it; one line naming the file"
    )
    func compressedMovie() async throws {
        let folder = try TemporaryFolder()
        let whole = try await Self.encoded(["-c:a", "aac"], as: "whole.m4a", in: folder)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: whole)))
        let moov = try #require(Self.box("moov", in: bytes))
        let original = Array(bytes[moov.offset..<(moov.offset + moov.size)])
        let compressed = Self.mp4Box(
            "moov",
            Self.mp4Box(
                "cmov",
                Self.mp4Box("dcom", Array("zlib".utf8))
                    + Self.mp4Box(
                        "cmvd",
                        withUnsafeBytes(of: UInt32(original.count).bigEndian, Array.init) + Self.zlibStored(original)
                    )
            )
        )
        let path = folder.path("cmov.m4a")
        try Data(Array(bytes[..<moov.offset]) + compressed + Array(bytes[(moov.offset + moov.size)...]))
            .write(to: URL(fileURLWithPath: path))
        let error = AudioError(
            .unsupportedFormat,
            path: path,
            reason:
                "its movie box is compressed (cmov), which is refused: inflating it can cost a thousand times the file"
        )
        #expect(throws: error) { try AudioFileDecoder.measure(path: path) }
        // The same file is a real one: ffmpeg inflates the movie and decodes what it decodes of the original.
        #expect(try await FFmpeg.decodedFrameCount(path) == (try await FFmpeg.decodedFrameCount(whole)))
    }

    @Test("A CAF whose packet table lists more than 2^22 packets is refused before libavformat indexes them")
    func hugePacketTable() async throws {
        let folder = try TemporaryFolder()
        let adts = try await Self.adts(in: folder)
        var bytes = [UInt8](
            try CAFWithAAC.file(fromADTS: adts, validFrames: Int64(Self.frameCount), primingFrames: 1_024)
        )
        let pakt = try #require((8..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual("pakt".utf8) })
        let path = folder.path("table.caf")
        for (packets, refused) in [(Int64(1) << 22, false), (Int64(1) << 22 + 1, true), (20_000_000, true)] {
            bytes.replaceSubrange((pakt + 12)..<(pakt + 20), with: withUnsafeBytes(of: packets.bigEndian, Array.init))
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let error = AudioError(
                .unsupportedFormat,
                path: path,
                reason:
                    "its packet table lists \(packets) packets, more than the 4194304 (over 24 hours of 48 kHz AAC) that are read"
            )
            if refused {
                #expect(throws: error) { try AudioFileDecoder.measure(path: path) }
            } else {
                #expect(throws: (any Error).self, "a table that lies within the bound is still no crash") {
                    _ = try decodeAll(path)
                }
            }
        }
    }

    @Test(
        "An M4A gapless by iTunSMPB alone (no edit list, as iTunes-era encoders wrote) decodes to its frames, priming and padding trimmed"
    )
    func iTunSMPBWithoutEditList() throws {
        let folder = try TemporaryFolder()
        let source = try Self.source(in: folder)
        let path = folder.path("tone.m4a")
        let writer = try AACFileWriter(
            path: path,
            sampleRate: 44_100,
            channelCount: .mono,
            settings: try EncoderSettings(format: .m4a),
            metadata: AudioMetadata(),
            frameCount: Frames(Int64(Self.frameCount))
        )
        try writer.write(source.samples, frames: Self.frameCount)
        _ = try writer.close()
        let withEditList = try decodeAll(path)
        #expect(withEditList.samples.count == Self.frameCount)
        // The same file with its edit list made a `free` box of the same size: iTunSMPB alone
        // says the priming and the length, and libavformat's track duration counts both paddings.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let edts = try #require((0..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual("edts".utf8) })
        bytes.replaceSubrange(edts..<(edts + 4), with: Array("free".utf8))
        let smpbOnly = folder.path("itunes.m4a")
        try Data(bytes).write(to: URL(fileURLWithPath: smpbOnly))
        let measured = try AudioFileDecoder.measure(path: smpbOnly)
        #expect(measured.frameCount == Frames(Int64(Self.frameCount)) && measured.gapless)
        #expect(
            try decodeAll(smpbOnly).samples == withEditList.samples,
            "sample for sample the file with its edit list"
        )
    }

    @Test("The seed-shaped library's silence.m4a is one second of silence, exactly")
    func stillMomentSilence() throws {
        let path = Repository.root.appendingPathComponent("Fixtures/sounds/still-moment/silence.m4a").path
        let measurement = try AudioFileDecoder.measure(path: path)
        #expect(measurement.frameCount == 44_100 && measurement.gapless)
        #expect(try decodeAll(path).samples.allSatisfy { $0 == 0 })
    }

    /// The offset and declared size of the first top-level box of `type` in an MP4's `bytes`.
    static func box(_ type: String, in bytes: [UInt8]) -> (offset: Int, size: Int)? {
        var offset = 0
        while offset + 8 <= bytes.count {
            let size = bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            if bytes[(offset + 4)..<(offset + 8)].elementsEqual(type.utf8) { return (offset, size) }
            guard size >= 8 else { return nil }
            offset += size
        }
        return nil
    }
}
