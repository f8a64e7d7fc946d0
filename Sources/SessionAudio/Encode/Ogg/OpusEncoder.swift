internal import COpusEnc

#if canImport(Glibc)
import Glibc
#endif

/// An Ogg Opus file being encoded by libopusenc at 48 kHz: owns its `OggOpusEnc` and the file
/// descriptor the pages go to.
///
/// The file is opened here, not by `ope_encoder_create_file`, so that its pages go out through
/// ``DescriptorOutput`` (every byte written, `EINTR` retried) and a failed write reports the
/// system's own reason (`No space left on device`), which libopusenc's `fopen`/`fwrite` would
/// reduce to "write failed". libopusenc sets the header's pre-skip to the encoder's lookahead and
/// the last page's granule position to pre-skip + frames written, so a decoder that honours
/// both (ffmpeg, libopusfile, libsndfile) gives back exactly the frames that went in, unshifted.
final class OpusEncoder {
    private var encoder: OpaquePointer?
    private var descriptor: Int32
    private let output: DescriptorOutput
    /// The file, for errors.
    let path: String
    /// Audio packets encoded so far (each one ``frameSize`` frames); headers are not counted.
    private(set) var packetCount: Int64 = 0
    private var headerPacketsSeen = 0

    /// The duration of every packet, 20 ms: libopusenc's default, set explicitly so that
    /// ``packetCount`` × 960 is the stream's decoded length before trimming.
    static let frameSize: Int64 = 960

    /// Creates `path` (replacing any file there) for `channelCount` channels of 48 kHz audio.
    /// The corresponding calls are `open` and `ope_encoder_create_callbacks`.
    init(path: String, channelCount: Int, comments: OpusComments) throws(AudioError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(errno)))
        }
        let output = DescriptorOutput(descriptor: descriptor)
        var callbacks = OpusEncCallbacks(
            write: { userData, pointer, length in
                guard let userData, let pointer else { return 1 }
                let output = Unmanaged<DescriptorOutput>.fromOpaque(userData).takeUnretainedValue()
                return output.write(UnsafeRawBufferPointer(start: pointer, count: Int(length))) ? 0 : 1
            },
            // The descriptor is this value's to close, after the data is on disk.
            close: { _ in 0 }
        )
        var error: Int32 = 0
        guard
            let encoder = ope_encoder_create_callbacks(
                &callbacks,
                Unmanaged.passUnretained(output).toOpaque(),
                comments.handle,
                48_000,
                Int32(channelCount),
                0,
                &error
            )
        else {
            Glibc.close(descriptor)
            throw AudioError(.cannotEncode, path: path, Self.message(error)) { "libopusenc: \($0)" }
        }
        self.encoder = encoder
        self.descriptor = descriptor
        self.output = output
        self.path = path
        let counter: ope_packet_func = { userData, _, _, _ in
            guard let userData else { return }
            let encoder = Unmanaged<OpusEncoder>.fromOpaque(userData).takeUnretainedValue()
            if encoder.headerPacketsSeen < 2 {
                encoder.headerPacketsSeen += 1
            } else {
                encoder.packetCount += 1
            }
        }
        try check(
            copusenc_set_packet_callback(encoder, counter, Unmanaged.passUnretained(self).toOpaque()),
            "cannot count packets"
        )
        try set(OPUS_SET_EXPERT_FRAME_DURATION_REQUEST, OPUS_FRAMESIZE_20_MS, "cannot set 20 ms packets")
    }

    deinit {
        if let encoder { ope_encoder_destroy(encoder) }
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// Sets an `OPUS_SET_…` or `OPE_SET_…` value; `what` says what failed.
    /// The corresponding libopusenc call is `ope_encoder_ctl`.
    func set(_ request: Int32, _ value: Int32, _ what: String) throws(AudioError) {
        try check(copusenc_set(try handle(), request, value), what)
    }

    /// Reads an `OPUS_GET_…` or `OPE_GET_…` value.
    /// The corresponding libopusenc call is `ope_encoder_ctl`.
    func get(_ request: Int32, _ what: String) throws(AudioError) -> Int32 {
        var value: Int32 = 0
        try check(copusenc_get(try handle(), request, &value), what)
        return value
    }

    /// Writes the two header pages now, which fixes the pre-skip: libopusenc reads the lookahead
    /// once, when the header goes out. The corresponding libopusenc call is `ope_encoder_flush_header`.
    func flushHeader() throws(AudioError) {
        try check(ope_encoder_flush_header(try handle()), "cannot write the Opus header")
    }

    /// Encodes `frames` frames of interleaved floats at `samples`.
    /// The corresponding libopusenc call is `ope_encoder_write_float`.
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws(AudioError) {
        try check(ope_encoder_write_float(try handle(), samples, Int32(frames)), "cannot encode \(frames) frames")
    }

    /// Encodes what is buffered, writes the last page (its granule position trims the end),
    /// flushes the file to disk and closes it. Nothing can be written after.
    /// The corresponding calls are `ope_encoder_drain`, `ope_encoder_destroy`, `fsync` and `close`.
    func finish() throws(AudioError) {
        let encoder = try handle()
        let drained = ope_encoder_drain(encoder)
        ope_encoder_destroy(encoder)
        self.encoder = nil
        try check(drained, "cannot finish the stream")
        let descriptor = self.descriptor
        self.descriptor = -1
        let synced = fsync(descriptor) == 0 ? 0 : errno
        let closed = Glibc.close(descriptor) == 0 ? 0 : errno
        if synced != 0 || closed != 0 {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(synced != 0 ? synced : closed)))
        }
    }

    private func handle() throws(AudioError) -> OpaquePointer {
        guard let encoder else { throw AudioError(.cannotWrite, path: path, reason: "the file is already closed") }
        return encoder
    }

    /// Turns a libopusenc return code into an error; a failed write names the system's reason.
    private func check(_ result: Int32, _ what: String) throws(AudioError) {
        guard result != OPE_OK else { return }
        let message = Self.message(result)
        if result == OPE_WRITE_FAIL, let cause = output.failure {
            throw AudioError(.cannotWrite, path: path, reason: "\(what): \(cause)", libraryCode: message.code)
        }
        throw AudioError(.cannotEncode, path: path, message) { "\(what): libopusenc: \($0)" }
    }

    /// libopusenc's message for a code, with the code: `invalid argument (code -11)`.
    ///
    /// `ope_encoder_ctl` passes libopus's own codes (−1 … −7) through unchanged, which
    /// `ope_strerror` would call unknown; it reads libopus's codes 10 lower, so they are moved there.
    static func message(_ code: Int32) -> LibraryMessage {
        let text = String(cString: ope_strerror(code < 0 && code > -10 ? code - 10 : code))
        return LibraryMessage("\(text) (code \(code))", .libopusenc, code)
    }
}
