internal import CLame
internal import SessionTimeline

/// Encodes PCM to MP3 with libmp3lame, at a constant bit rate or a variable quality.
///
/// With the tag on, the first frame is the LAME/Xing tag that records the frame count, encoder
/// delay and padding, so that gapless decoders (libmpg123, ffmpeg) give back exactly the frames
/// that went in. Encoded bytes collect in ``output`` until taken. Owns its `lame_global_flags`
/// and frees it in `deinit`.
final class MP3Encoder {
    /// How bits are spent.
    enum RateControl: Equatable {
        /// A constant bit rate in kb/s.
        case constant(kilobits: Int)
        /// LAME's variable rate at quality `-V` 0 (best) … 9.
        case variable(quality: Double)
    }

    private let flags: OpaquePointer
    private let channelCount: Int
    /// Encoded bytes not yet taken.
    private(set) var output: [UInt8] = []
    private var scratch: [UInt8] = []

    /// Samples per channel in one MP3 frame: 1152 (MPEG-1) or 576 (MPEG-2 and 2.5).
    let frameSize: Int
    /// The zeros LAME puts before the first input frame (576); decoders drop these and 529 more.
    let encoderDelay: Int

    /// The corresponding LAME calls are `lame_init`, the `lame_set_…` setters and `lame_init_params`.
    ///
    /// `algorithmQuality` is LAME's `-q` (0 slowest … 9 fastest); `nil` keeps LAME's default, as the
    /// `lame` command does.
    init(
        sampleRate: Int,
        channelCount: Int,
        rateControl: RateControl,
        algorithmQuality: Int? = nil,
        writesTag: Bool = true
    ) throws(AudioError) {
        guard let flags = lame_init() else {
            throw AudioError(.cannotEncode, path: nil, reason: "LAME cannot allocate an encoder")
        }
        self.flags = flags
        self.channelCount = channelCount
        lame_set_in_samplerate(flags, Int32(sampleRate))
        lame_set_out_samplerate(flags, Int32(sampleRate))
        lame_set_num_channels(flags, Int32(channelCount))
        lame_set_mode(flags, channelCount == 1 ? MONO : JOINT_STEREO)
        switch rateControl {
        case .constant(let kilobits)
        where writesTag
            && !EncoderSettings.mp3FrameHoldsTag(kilobits: kilobits, sampleRate: sampleRate, channelCount: channelCount):
            // LAME leaves its gapless tag out of a constant-rate frame too small for it. Its
            // average rate held to the one bit rate (`lame --abr K -b K -B K -F`) writes every
            // audio frame at that rate all the same, and the tag in a frame of LAME's own choice
            // (64 kb/s at MPEG-2), as a variable rate's is.
            lame_set_VBR(flags, vbr_abr)
            lame_set_VBR_mean_bitrate_kbps(flags, Int32(kilobits))
            lame_set_VBR_min_bitrate_kbps(flags, Int32(kilobits))
            lame_set_VBR_max_bitrate_kbps(flags, Int32(kilobits))
            lame_set_VBR_hard_min(flags, 1)
        case .constant(let kilobits):
            lame_set_VBR(flags, vbr_off)
            lame_set_brate(flags, Int32(kilobits))
        case .variable(let quality):
            lame_set_VBR(flags, vbr_default)
            lame_set_VBR_quality(flags, Float(quality))
        }
        if let algorithmQuality { lame_set_quality(flags, Int32(algorithmQuality)) }
        lame_set_bWriteVbrTag(flags, writesTag ? 1 : 0)
        lame_set_findReplayGain(flags, 0)
        let result = lame_init_params(flags)
        guard result >= 0 else {
            lame_close(flags)
            throw AudioError(
                .cannotEncode,
                path: nil,
                reason: "LAME refuses \(sampleRate) Hz, \(channelCount) ch, \(rateControl) (code \(result))",
                libraryCode: AudioError.LibraryCode(.lame, result)
            )
        }
        frameSize = Int(lame_get_framesize(flags))
        encoderDelay = Int(lame_get_encoder_delay(flags))
    }

    /// Encodes at a constant `bitRate` with LAME's `-q 2`, as the embedded voice's clips are stored.
    convenience init(sampleRate: Int, channelCount: Int, bitRate: Int) throws(AudioError) {
        try self.init(
            sampleRate: sampleRate,
            channelCount: channelCount,
            rateControl: .constant(kilobits: bitRate),
            algorithmQuality: 2
        )
    }

    deinit {
        lame_close(flags)
    }

    /// Makes room for what LAME may write for `frames` frames: its documented worst case,
    /// 1.25 × frames + 7200 bytes.
    private func reserve(for frames: Int) -> Int {
        let capacity = frames * 5 / 4 + 7_200
        if scratch.count < capacity { scratch = [UInt8](repeating: 0, count: capacity) }
        return capacity
    }

    private func keep(_ written: Int32, _ what: String) throws(AudioError) {
        guard written >= 0 else {
            throw AudioError(
                .cannotEncode,
                path: nil,
                reason: "LAME failed to \(what) (code \(written))",
                libraryCode: AudioError.LibraryCode(.lame, written)
            )
        }
        output.append(contentsOf: scratch[0..<Int(written)])
    }

    /// Encodes interleaved 16-bit `samples` (frames × channels values).
    /// The corresponding LAME call is `lame_encode_buffer_interleaved` (or `lame_encode_buffer` for mono).
    func encode(_ samples: [Int16]) throws(AudioError) {
        let frames = samples.count / channelCount
        guard frames > 0 else { return }
        let capacity = reserve(for: frames)
        var mutableSamples = samples
        let written = mutableSamples.withUnsafeMutableBufferPointer { pcm in
            scratch.withUnsafeMutableBufferPointer { mp3 in
                channelCount == 1
                    ? lame_encode_buffer(
                        flags,
                        pcm.baseAddress,
                        pcm.baseAddress,
                        Int32(frames),
                        mp3.baseAddress,
                        Int32(capacity)
                    )
                    : lame_encode_buffer_interleaved(
                        flags,
                        pcm.baseAddress,
                        Int32(frames),
                        mp3.baseAddress,
                        Int32(capacity)
                    )
            }
        }
        try keep(written, "encode")
    }

    /// Encodes `frames` frames of interleaved floats (full scale ±1) from `samples`.
    /// The corresponding LAME calls are `lame_encode_buffer_ieee_float` (mono) and
    /// `lame_encode_buffer_interleaved_ieee_float`.
    func encode(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(AudioError) {
        guard frames > 0 else { return }
        precondition(samples.count >= frames * channelCount, "encode(_:frames:) was given too few samples")
        let capacity = reserve(for: frames)
        let written = scratch.withUnsafeMutableBufferPointer { mp3 in
            channelCount == 1
                ? lame_encode_buffer_ieee_float(
                    flags,
                    samples.baseAddress,
                    samples.baseAddress,
                    Int32(frames),
                    mp3.baseAddress,
                    Int32(capacity)
                )
                : lame_encode_buffer_interleaved_ieee_float(
                    flags,
                    samples.baseAddress,
                    Int32(frames),
                    mp3.baseAddress,
                    Int32(capacity)
                )
        }
        try keep(written, "encode")
    }

    /// Encodes what LAME still holds, padded with zeros to whole frames.
    /// The corresponding LAME call is `lame_encode_flush`.
    func flush() throws(AudioError) {
        let capacity = reserve(for: 0)
        let flushed = scratch.withUnsafeMutableBufferPointer {
            lame_encode_flush(flags, $0.baseAddress, Int32(capacity))
        }
        try keep(flushed, "flush")
    }

    /// Takes the bytes encoded so far, leaving none.
    func takeOutput() -> [UInt8] {
        defer { output.removeAll(keepingCapacity: true) }
        return output
    }

    /// The LAME/Xing tag frame describing what this encoder encoded (written only with the tag on).
    /// The corresponding LAME call is `lame_get_lametag_frame`.
    func tagFrame() throws(AudioError) -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: 2_880)
        let size = tag.withUnsafeMutableBufferPointer { lame_get_lametag_frame(flags, $0.baseAddress, $0.count) }
        guard size > 0, size <= tag.count else {
            throw AudioError(.cannotEncode, path: nil, reason: "LAME wrote no gapless tag frame")
        }
        return Array(tag[0..<size])
    }

    /// Flushes the encoder and returns the whole MP3, its first frame replaced by the LAME/Xing
    /// tag that records the frame count, encoder delay and padding.
    func finish() throws(AudioError) -> [UInt8] {
        try flush()
        let tag = try tagFrame()
        guard tag.count <= output.count else {
            throw AudioError(.cannotEncode, path: nil, reason: "LAME's gapless tag frame is longer than its output")
        }
        output.replaceSubrange(0..<tag.count, with: tag)
        return takeOutput()
    }

    /// Encodes all of `samples` (interleaved 16-bit) in one call, at a constant bit rate.
    static func encode(
        _ samples: [Int16],
        sampleRate: Int,
        channelCount: Int,
        bitRate: Int
    ) throws(AudioError) -> [UInt8] {
        let encoder = try MP3Encoder(sampleRate: sampleRate, channelCount: channelCount, bitRate: bitRate)
        try encoder.encode(samples)
        return try encoder.finish()
    }
}
