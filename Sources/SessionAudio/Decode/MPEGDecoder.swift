internal import CMPG123

#if canImport(Glibc)
import Glibc
#endif

/// Decodes an MPEG audio file (MP3, also MP2 and MP1) to 32-bit float frames with libmpg123.
///
/// Gapless decoding is on: when the file carries a LAME/Xing tag, the encoder's delay and
/// padding are removed, so the frames decoded are exactly the frames that were encoded.
/// The decoder owns its `mpg123_handle` and frees it in `deinit`.
///
/// A file is cut short when it holds fewer frames than its tag promises, or fewer bytes (a last
/// frame cut part of the way, which libmpg123's scan still counts), and the one check of that
/// (``checkPromise(holding:)``) runs wherever a file's length is found: after a scan
/// (``scannedFrameCount()``) and at the end of every decode (``read(into:maximumFrames:)``), so a
/// measurement, a check before storing and a render all refuse it alike.
final class MPEGDecoder {
    private let handle: OpaquePointer
    /// The file libmpg123 reads through; kept alive as long as the handle.
    private let file: BufferedFile
    let path: String
    let sampleRate: Int
    let channelCount: Int
    /// The MPEG audio layer of the first frame: 3 for MP3, 2 for MP2, 1 for MP1 (0 if unknown).
    let layer: Int
    /// Whether the file's LAME/Xing tag gave the encoder delay or padding, which were removed.
    let gapless: Bool
    /// The frames the file's LAME/Xing tag promises (its delay and padding subtracted); 0 without one.
    private let promisedFrames: Int64
    /// The bytes the file's Xing/Info tag promises from its first frame to its last frame's end,
    /// and the bytes the file holds from that first frame on; `nil` without a tag that counts bytes.
    private let promisedBytes: (promised: Int64, held: Int64)?
    /// The frames ``read(into:maximumFrames:)`` has delivered so far.
    private var framesDelivered: Int64 = 0

    /// Reads far enough into the file to know its format.
    ///
    /// The corresponding libmpg123 calls are `mpg123_new`, `mpg123_param2`, `mpg123_format2`,
    /// `mpg123_replace_reader_handle`, `mpg123_open_handle` and `mpg123_getformat`.
    /// `descriptor` is the open file, which the decoder owns from now on (closed on failure too);
    /// `path` names it in errors.
    init(descriptor: Int32, path: String) throws(AudioError) {
        Self.initializeLibrary
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else {
            close(descriptor)
            throw AudioError(.cannotOpen, path: path, Self.message(for: error)) { "mpg123: \($0)" }
        }
        guard let file = BufferedFile(descriptor: descriptor) else {
            let reason = String(cString: strerror(errno))
            mpg123_delete(handle)
            throw AudioError(.cannotOpen, path: path, reason: reason)
        }
        self.handle = handle
        self.file = file
        self.path = path
        let flags = Int(MPG123_GAPLESS.rawValue | MPG123_QUIET.rawValue)
        var result = mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), flags, 0)
        if result == MPG123_OK.rawValue {
            result = mpg123_param2(handle, Int32(MPG123_REMOVE_FLAGS.rawValue), Int(MPG123_AUTO_RESAMPLE.rawValue), 0)
        }
        if result == MPG123_OK.rawValue { result = mpg123_format_none(handle) }
        if result == MPG123_OK.rawValue {
            let channels = Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue)
            result = mpg123_format2(handle, 0, channels, Int32(MPG123_ENC_FLOAT_32.rawValue))
        }
        if result == MPG123_OK.rawValue {
            result = mpg123_replace_reader_handle(handle, readBuffered, seekBuffered, nil)
        }
        if result == MPG123_OK.rawValue {
            result = mpg123_open_handle(handle, Unmanaged.passUnretained(file).toOpaque())
        }
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        if result == MPG123_OK.rawValue { result = mpg123_getformat(handle, &rate, &channels, &encoding) }
        guard result == MPG123_OK.rawValue else {
            let message = Self.describe(result, handle: handle)
            mpg123_close(handle)
            mpg123_delete(handle)
            // libmpg123 reaches the end of a file without audio (empty, tags only, not MPEG at all)
            // before it finds a format.
            if result == MPG123_DONE.rawValue || result == MPG123_NEED_MORE.rawValue {
                throw AudioError(
                    .noAudio,
                    path: path,
                    reason: "no MPEG audio frames found (the file is empty, holds only tags, or is not audio)",
                    libraryCode: message.code
                )
            }
            throw AudioError(.cannotOpen, path: path, message)
        }
        sampleRate = rate
        channelCount = Int(channels)
        var info = mpg123_frameinfo2()
        layer = mpg123_info2(handle, &info) == MPG123_OK.rawValue ? Int(info.layer) : 0
        var delay = -1
        var padding = -1
        mpg123_getstate2(handle, Int32(MPG123_ENC_DELAY.rawValue), &delay, nil)
        mpg123_getstate2(handle, Int32(MPG123_ENC_PADDING.rawValue), &padding, nil)
        gapless = delay >= 0 || padding >= 0
        // With a LAME/Xing tag, the length known before any scan is the tag's promise.
        promisedFrames = gapless ? max(0, Int64(mpg123_length(handle))) : 0
        promisedBytes = file.xingByteCount()
    }

    deinit {
        mpg123_close(handle)
        mpg123_delete(handle)
    }

    /// The exact length in frames, from a scan of every MPEG frame header (fast: nothing is decoded).
    ///
    /// With a LAME/Xing tag the encoder's delay and padding are already subtracted. A stream
    /// shorter than its tag promises (a cut file) and a stream stitched from several (its rate or
    /// channels change part of the way) are errors. The decoder checks the frames it delivers
    /// against this length, so a file that still lies is caught at decode time.
    /// The corresponding libmpg123 calls are `mpg123_scan` and `mpg123_length`.
    func scannedFrameCount() throws(AudioError) -> Int64 {
        let result = mpg123_scan(handle)
        guard result == MPG123_OK.rawValue else {
            throw AudioError(.cannotDecode, path: path, Self.describe(result, handle: handle))
        }
        let length = mpg123_length(handle)
        guard length >= 0 else {
            throw AudioError(
                .cannotDecode,
                path: path,
                reason: "mpg123 cannot tell the stream's length",
                libraryCode: AudioError.LibraryCode(.libmpg123, Int32(clamping: length))
            )
        }
        var stitched = 0
        mpg123_getstate2(handle, Int32(MPG123_FRANKENSTEIN.rawValue), &stitched, nil)
        if stitched != 0 {
            throw AudioError(
                .formatChanged,
                path: path,
                reason:
                    "the stream is several streams stitched together (its format or encoder tag changes part of the way through)"
            )
        }
        try checkPromise(holding: Int64(length))
        return Int64(length)
    }

    /// Throws if a stream of `frameCount` frames is shorter than the file's LAME/Xing tag promises,
    /// or the file holds fewer bytes than the tag counts.
    private func checkPromise(holding frameCount: Int64) throws(AudioError) {
        if promisedFrames > 0 && frameCount < promisedFrames {
            throw AudioError(
                .truncated,
                path: path,
                reason:
                    "the file is cut short: its LAME/Xing tag promises \(promisedFrames) frames, the stream holds \(frameCount)"
            )
        }
        if let (promised, held) = promisedBytes, held < promised {
            throw AudioError(
                .truncated,
                path: path,
                reason:
                    "the file is cut short: its LAME/Xing tag promises \(promised) bytes of MPEG frames, the file holds \(held)"
            )
        }
    }

    /// Decodes up to `maximumFrames` frames into `samples` (interleaved, from index 0).
    ///
    /// Returns the number of frames decoded; 0 only at the end of the stream. At the end, a stream
    /// that delivered fewer frames than its tag promises is an error (``checkPromise(holding:)``).
    /// The corresponding libmpg123 call is `mpg123_read`.
    func read(into samples: inout [Float], maximumFrames: Int) throws(AudioError) -> Int {
        let frames = try readFrames(into: &samples, maximumFrames: maximumFrames)
        framesDelivered += Int64(frames)
        if frames == 0 { try checkPromise(holding: framesDelivered) }
        return frames
    }

    private func readFrames(into samples: inout [Float], maximumFrames: Int) throws(AudioError) -> Int {
        let wanted = maximumFrames * channelCount
        if samples.count < wanted { samples = [Float](repeating: 0, count: wanted) }
        while true {
            var bytes = 0
            let result = samples.withUnsafeMutableBytes { buffer in
                mpg123_read(handle, buffer.baseAddress, wanted * MemoryLayout<Float>.size, &bytes)
            }
            let frames = bytes / (MemoryLayout<Float>.size * channelCount)
            switch result {
            case MPG123_OK.rawValue:
                if frames > 0 { return frames }
            case MPG123_DONE.rawValue:
                return frames
            case MPG123_NEW_FORMAT.rawValue:
                var rate = 0
                var channels: Int32 = 0
                var encoding: Int32 = 0
                mpg123_getformat(handle, &rate, &channels, &encoding)
                if rate != sampleRate || Int(channels) != channelCount {
                    throw AudioError(
                        .formatChanged,
                        path: path,
                        reason:
                            "the stream changes from \(sampleRate) Hz \(channelCount) ch to \(rate) Hz \(channels) ch part of the way through"
                    )
                }
                if frames > 0 { return frames }
            default:
                throw AudioError(.cannotDecode, path: path, Self.describe(result, handle: handle))
            }
        }
    }

    /// libmpg123 needs `mpg123_init` once per process before version 1.27; it is harmless after.
    private static let initializeLibrary: Void = {
        _ = mpg123_init()
    }()

    /// libmpg123's words for `code`: `invalid frame`. The corresponding libmpg123 call is `mpg123_plain_strerror`.
    private static func message(for code: Int32) -> LibraryMessage {
        LibraryMessage(String(cString: mpg123_plain_strerror(code)), .libmpg123, code)
    }

    /// libmpg123's words for `code`, with the code: `mpg123: invalid frame (code -1)`; for
    /// `MPG123_ERR`, the handle's own last error. The corresponding libmpg123 call is `mpg123_strerror`.
    private static func describe(_ code: Int32, handle: OpaquePointer) -> LibraryMessage {
        let text = code == MPG123_ERR.rawValue ? String(cString: mpg123_strerror(handle)) : message(for: code).text
        return LibraryMessage("mpg123: \(text) (code \(code))", .libmpg123, code)
    }
}

extension BufferedFile {
    /// The byte count of the Xing/Info tag in the file's first MPEG frame (after any ID3v2 tag, and
    /// junk of less than 4 KiB), with the bytes the file holds from that frame on; `nil` if there is
    /// no such tag or it does not count bytes. The layout is LAME's (``LAMETag``): `Xing` or `Info`
    /// after the side information, 4 bytes of flags (bit 1: the byte count is there), then the
    /// frame count if flagged (bit 0), then the byte count.
    func xingByteCount() -> (promised: Int64, held: Int64)? {
        var start: Int64 = 0
        let id3 = bytes(at: 0, count: 10)
        if id3.count == 10, id3.starts(with: Array("ID3".utf8)), id3[6..<10].allSatisfy({ $0 < 0x80 }) {
            let tagSize = id3[6..<10].reduce(Int64(0)) { $0 << 7 | Int64($1) }
            start = 10 + tagSize + (id3[5] & 0x10 != 0 ? 10 : 0)
        }
        let head = bytes(at: start, count: 4_096 + 200)
        guard head.count > 4 else { return nil }
        for offset in 0..<min(4_096, head.count - 4) where head[offset] == 0xFF {
            guard let header = MPEGFrameHeader(head[offset..<(offset + 4)]) else { continue }
            let tag = offset + 4 + (header.hasCRC ? 2 : 0) + header.sideInfoByteCount
            guard tag + 16 <= head.count else { return nil }
            let name = Array(head[tag..<(tag + 4)])
            guard name == Array("Xing".utf8) || name == Array("Info".utf8) else { return nil }
            func word(_ at: Int) -> Int64 { head[at..<(at + 4)].reduce(Int64(0)) { $0 << 8 | Int64($1) } }
            let flags = word(tag + 4)
            guard flags & 2 != 0 else { return nil }
            let promised = word(tag + 8 + (flags & 1 != 0 ? 4 : 0))
            guard promised > 0 else { return nil }
            return (promised, size - start - Int64(offset))
        }
        return nil
    }
}

/// libmpg123's read callback over a `BufferedFile`.
private func readBuffered(_ handle: UnsafeMutableRawPointer?, _ target: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    guard let handle, let target else { return -1 }
    return Unmanaged<BufferedFile>.fromOpaque(handle).takeUnretainedValue().read(into: target, count: count)
}

/// libmpg123's seek callback over a `BufferedFile`.
private func seekBuffered(_ handle: UnsafeMutableRawPointer?, _ offset: off_t, _ whence: Int32) -> off_t {
    guard let handle else { return -1 }
    return off_t(
        Unmanaged<BufferedFile>.fromOpaque(handle).takeUnretainedValue().seek(offset: Int64(offset), whence: whence)
    )
}
