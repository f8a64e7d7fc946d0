internal import COpus
internal import CVorbis

#if canImport(Glibc)
import Glibc
#endif

/// An Ogg Opus file being encoded by libopus at 48 kHz, its pages made by libogg: owns its
/// libopus encoder, its `ogg_stream_state` and the file descriptor the pages go to.
///
/// The stream is laid out as RFC 7845 says: an `OpusHead` page whose pre-skip is the encoder's
/// lookahead, an `OpusTags` page (``OpusComments``), then 20 ms packets. Each page's granule
/// position counts the 48 kHz samples decoded through its last packet, pre-skip included, and the
/// last page's is pre-skip + the frames written, so a decoder that honours both (ffmpeg,
/// libopusfile, libsndfile) gives back exactly the frames that went in, unshifted. Pages go out
/// through ``DescriptorOutput`` (every byte written, `EINTR` retried; a failed write reports the
/// system's own reason, `No space left on device`).
///
/// libopusenc, which wrote these files before, took as long again as the encoding itself here: it
/// calls `opus_multistream_encoder_ctl` twice per packet, and Debian 12's libopus (built with
/// custom modes) runs its CPU detection on every multistream call and encode, once per stream
/// (`opus_encoder_get_size` → `opus_custom_mode_create` → `cpuid`, which traps to the hypervisor
/// in a virtual machine): 198,000 detections for the 10.6-minute timer fixture, a third of its
/// render as Opus. A single-stream encoder detects once, when created. The rest of what
/// libopusenc did (the two headers, granule positions, pages of at most a second) is the few
/// lines below, with libogg.
final class OpusEncoder {
    private var encoder: OpaquePointer?
    private let stream: UnsafeMutablePointer<ogg_stream_state>
    private var streamReady = false
    private var descriptor: Int32
    private var output: DescriptorOutput
    /// The file, for errors.
    let path: String
    private let channels: Int
    /// Audio packets encoded so far (each one ``frameSize`` frames); headers are not counted.
    private(set) var packetCount: Int64 = 0
    /// The header's pre-skip: the encoder's lookahead, read when the header goes out.
    private(set) var preSkip: Int64 = 0
    /// Frames given so far.
    private var framesTaken: Int64 = 0
    /// The frames of the next packet given so far, interleaved.
    private var pending: [Float]
    private var pendingFrames = 0
    private var packet = [UInt8](repeating: 0, count: OpusEncoder.maximumPacketBytes)
    private var packetsOnPage = 0
    private var bytesAtLastWriteBack: Int64 = 0

    /// The duration of every packet, 20 ms, so that ``packetCount`` × 960 is the stream's decoded
    /// length before trimming.
    static let frameSize: Int64 = 960
    /// The largest packet libopus makes, with room to spare (its documentation's figure).
    private static let maximumPacketBytes = 4_000
    /// Packets per page at most: a second, as libopusenc and opusenc page, so that a player seeks
    /// to within a second and a page's loss costs at most that.
    private static let packetsPerPage = 50

    /// Creates `path` (replacing any file there) for `channelCount` channels of 48 kHz audio.
    /// The corresponding calls are `opus_encoder_create`, `ogg_stream_init` and `open`.
    init(path: String, channelCount: Int) throws(AudioError) {
        self.path = path
        channels = channelCount
        pending = [Float](repeating: 0, count: Int(Self.frameSize) * channelCount)
        stream = .allocate(capacity: 1)
        stream.initialize(to: ogg_stream_state())
        descriptor = -1
        output = DescriptorOutput(descriptor: -1)
        var error: Int32 = 0
        // From here on the value is whole: a throw runs deinit, which frees what was made.
        encoder = opus_encoder_create(48_000, Int32(channelCount), OPUS_APPLICATION_AUDIO, &error)
        guard encoder != nil, error == OPUS_OK else {
            throw AudioError(.cannotEncode, path: path, Self.message(error)) { "libopus: \($0)" }
        }
        // Any serial number will do for a file of one stream; a fixed one keeps the output reproducible.
        let initialized = ogg_stream_init(stream, 0x5345_5353)
        guard initialized == 0 else { throw Self.oggFailure("ogg_stream_init", initialized, path: path) }
        streamReady = true
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(errno)))
        }
        self.descriptor = descriptor
        output = DescriptorOutput(descriptor: descriptor)
    }

    deinit {
        if let encoder { opus_encoder_destroy(encoder) }
        if streamReady { ogg_stream_clear(stream) }
        stream.deallocate()
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// Sets an `OPUS_SET_…` value; `what` says what failed.
    /// The corresponding libopus call is `opus_encoder_ctl`.
    func set(_ request: Int32, _ value: Int32, _ what: String) throws(AudioError) {
        try check(copus_set(try handle(), request, value), what)
    }

    /// Reads an `OPUS_GET_…` value.
    /// The corresponding libopus call is `opus_encoder_ctl`.
    func get(_ request: Int32, _ what: String) throws(AudioError) -> Int32 {
        var value: Int32 = 0
        try check(copus_get(try handle(), request, &value), what)
        return value
    }

    /// Writes the two header pages, `OpusHead` with the encoder's lookahead as pre-skip and
    /// `comments`' `OpusTags`, once the settings are made (the lookahead depends on them).
    /// The corresponding libopus call is `opus_encoder_ctl` (`OPUS_GET_LOOKAHEAD`); libogg's are
    /// `ogg_stream_packetin` and `ogg_stream_flush`.
    func writeHeaders(_ comments: OpusComments) throws(AudioError) {
        preSkip = Int64(try get(OPUS_GET_LOOKAHEAD_REQUEST, "cannot read the pre-skip"))
        // RFC 7845, 5.1: version 1, channels, pre-skip, the input's rate, no output gain, and
        // mapping family 0 (mono or stereo, one stream), all little-endian.
        var head = Array("OpusHead".utf8) + [1, UInt8(channels)]
        head += littleEndian(UInt16(preSkip)) + littleEndian(UInt32(48_000)) + [0, 0, 0]
        try add(head[...], granule: 0, first: true)
        try flushPages()
        try add(comments.packet[...], granule: 0)
        try flushPages()
    }

    /// Encodes `frames` frames of interleaved floats at `samples`, a packet whenever 960 are in.
    /// The corresponding libopus call is `opus_encode_float`.
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws(AudioError) {
        let packetFrames = Int(Self.frameSize)
        var done = 0
        while done < frames {
            if pendingFrames == 0, frames - done >= packetFrames {
                // Whole packets straight from the caller's samples.
                try encode(samples + done * channels, last: false)
                done += packetFrames
                continue
            }
            let take = min(frames - done, packetFrames - pendingFrames)
            pending.withUnsafeMutableBufferPointer { pending in
                (pending.baseAddress! + pendingFrames * channels)
                    .update(from: samples + done * channels, count: take * channels)
            }
            pendingFrames += take
            done += take
            if pendingFrames == packetFrames {
                try encodePending(last: false)
            }
        }
        framesTaken += Int64(frames)
    }

    /// Encodes the frames still pending and as many packets of zeros after them as the decoder
    /// needs to give every frame back (pre-skip + frames, rounded up to whole packets), marks the
    /// last packet the end with pre-skip + frames as its granule position, writes the last page,
    /// flushes the file to disk and closes it. Nothing can be written after.
    /// The corresponding calls are `opus_encode_float`, `opus_encoder_destroy`, `ogg_stream_flush`,
    /// `fsync` and `close`.
    func finish() throws(AudioError) {
        let needed = (framesTaken + preSkip + Self.frameSize - 1) / Self.frameSize
        while packetCount < needed {
            pending.withUnsafeMutableBufferPointer { pending in
                UnsafeMutableBufferPointer(rebasing: pending[(pendingFrames * channels)...]).update(repeating: 0)
            }
            pendingFrames = Int(Self.frameSize)
            try encodePending(last: packetCount + 1 == needed)
        }
        try flushPages()
        if let encoder { opus_encoder_destroy(encoder) }
        encoder = nil
        let descriptor = self.descriptor
        self.descriptor = -1
        let synced = fsync(descriptor) == 0 ? 0 : errno
        let closed = Glibc.close(descriptor) == 0 ? 0 : errno
        if synced != 0 || closed != 0 {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(synced != 0 ? synced : closed)))
        }
    }

    private func encodePending(last: Bool) throws(AudioError) {
        try pending.withUnsafeBufferPointer { (pending) throws(AudioError) in
            try encode(pending.baseAddress!, last: last)
        }
        pendingFrames = 0
    }

    /// Encodes one packet of 960 frames at `samples` and adds it to the stream; the last one's
    /// granule position trims the end.
    private func encode(_ samples: UnsafePointer<Float>, last: Bool) throws(AudioError) {
        let encoder = try handle()
        let size = packet.withUnsafeMutableBufferPointer { packet in
            opus_encode_float(encoder, samples, Int32(Self.frameSize), packet.baseAddress!, Int32(packet.count))
        }
        guard size > 0 else {
            throw AudioError(.cannotEncode, path: path, Self.message(size)) { "cannot encode a packet: libopus: \($0)" }
        }
        packetCount += 1
        let granule = last ? preSkip + framesTaken : packetCount * Self.frameSize
        try add(packet[0..<Int(size)], granule: granule, last: last)
        packetsOnPage += 1
        if packetsOnPage == Self.packetsPerPage || last { try flushPages() }
    }

    /// Adds a packet to the stream. The corresponding libogg call is `ogg_stream_packetin`, which
    /// copies the bytes (so they are lent, not copied first, though its field is not `const`).
    private func add(
        _ bytes: ArraySlice<UInt8>,
        granule: Int64,
        first: Bool = false,
        last: Bool = false
    ) throws(AudioError) {
        let added = bytes.withUnsafeBufferPointer { bytes in
            var packet = ogg_packet(
                packet: UnsafeMutablePointer(mutating: bytes.baseAddress),
                bytes: bytes.count,
                b_o_s: first ? 1 : 0,
                e_o_s: last ? 1 : 0,
                granulepos: ogg_int64_t(granule),
                packetno: 0
            )
            return ogg_stream_packetin(stream, &packet)
        }
        guard added == 0 else { throw Self.oggFailure("ogg_stream_packetin", added, path: path) }
    }

    /// Writes out every packet libogg holds, on as many pages as they take; every 4 MiB, starts
    /// the kernel writing them to disk. The corresponding libogg call is `ogg_stream_flush`.
    private func flushPages() throws(AudioError) {
        packetsOnPage = 0
        var page = ogg_page()
        while ogg_stream_flush(stream, &page) != 0 {
            let parts = [
                UnsafeRawBufferPointer(start: page.header, count: page.header_len),
                UnsafeRawBufferPointer(start: page.body, count: page.body_len),
            ]
            for part in parts where !output.write(part) {
                throw AudioError(.cannotWrite, path: path, reason: output.failure ?? "the write failed")
            }
        }
        if output.byteCount - bytesAtLastWriteBack >= 4 << 20 {
            bytesAtLastWriteBack = output.byteCount
            WriteBack.start(descriptor)
        }
    }

    private func handle() throws(AudioError) -> OpaquePointer {
        guard let encoder else { throw AudioError(.cannotWrite, path: path, reason: "the file is already closed") }
        return encoder
    }

    /// Turns a libopus return code into an error.
    private func check(_ result: Int32, _ what: String) throws(AudioError) {
        guard result < 0 else { return }
        throw AudioError(.cannotEncode, path: path, Self.message(result)) { "\(what): libopus: \($0)" }
    }

    /// libogg's failure in `call`, which returned `code` (libogg has no messages of its own).
    private static func oggFailure(_ call: String, _ code: Int32, path: String) -> AudioError {
        AudioError(
            .cannotEncode,
            path: path,
            reason: "libogg: \(call) failed",
            libraryCode: AudioError.LibraryCode(.libogg, code)
        )
    }

    /// libopus's message for a code, with the code: `invalid argument (code -1)`.
    static func message(_ code: Int32) -> LibraryMessage {
        LibraryMessage("\(String(cString: opus_strerror(code))) (code \(code))", .libopus, code)
    }

    private func littleEndian<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
}
