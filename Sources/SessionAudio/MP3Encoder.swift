internal import CLame

/// Encodes 16-bit PCM to a constant-bit-rate MP3 with libmp3lame, LAME/Xing tag included, so
/// that gapless decoders (libmpg123) give back exactly the frames that went in.
///
/// Owns its `lame_global_flags` and frees it in `deinit`.
final class MP3Encoder {
    private let flags: OpaquePointer
    private let channelCount: Int
    private var output: [UInt8] = []
    private var scratch: [UInt8] = []

    /// The corresponding LAME calls are `lame_init`, the `lame_set_…` setters and `lame_init_params`.
    init(sampleRate: Int, channelCount: Int, bitRate: Int) throws(AudioError) {
        guard let flags = lame_init() else {
            throw AudioError(.cannotEncode, path: nil, reason: "LAME cannot allocate an encoder")
        }
        self.flags = flags
        self.channelCount = channelCount
        lame_set_in_samplerate(flags, Int32(sampleRate))
        lame_set_out_samplerate(flags, Int32(sampleRate))
        lame_set_num_channels(flags, Int32(channelCount))
        lame_set_mode(flags, channelCount == 1 ? MONO : JOINT_STEREO)
        lame_set_VBR(flags, vbr_off)
        lame_set_brate(flags, Int32(bitRate))
        lame_set_quality(flags, 2)
        lame_set_bWriteVbrTag(flags, 1)
        lame_set_findReplayGain(flags, 0)
        let result = lame_init_params(flags)
        guard result >= 0 else {
            throw AudioError(
                .cannotEncode,
                path: nil,
                reason: "LAME refuses \(sampleRate) Hz, \(channelCount) ch at \(bitRate) kb/s (code \(result))"
            )
        }
    }

    deinit {
        lame_close(flags)
    }

    /// Encodes interleaved `samples` (frames × channels values).
    /// The corresponding LAME call is `lame_encode_buffer_interleaved` (or `lame_encode_buffer` for mono).
    func encode(_ samples: [Int16]) throws(AudioError) {
        let frames = samples.count / channelCount
        guard frames > 0 else { return }
        // LAME's documented worst case: 1.25 × frames + 7200 bytes.
        let capacity = frames * 5 / 4 + 7_200
        if scratch.count < capacity { scratch = [UInt8](repeating: 0, count: capacity) }
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
        guard written >= 0 else {
            throw AudioError(.cannotEncode, path: nil, reason: "LAME failed to encode (code \(written))")
        }
        output.append(contentsOf: scratch[0..<Int(written)])
    }

    /// Flushes the encoder and returns the whole MP3, its first frame replaced by the LAME/Xing
    /// tag that records the frame count, encoder delay and padding.
    /// The corresponding LAME calls are `lame_encode_flush` and `lame_get_lametag_frame`.
    func finish() throws(AudioError) -> [UInt8] {
        if scratch.count < 7_200 { scratch = [UInt8](repeating: 0, count: 7_200) }
        let flushed = scratch.withUnsafeMutableBufferPointer {
            lame_encode_flush(flags, $0.baseAddress, Int32($0.count))
        }
        guard flushed >= 0 else {
            throw AudioError(.cannotEncode, path: nil, reason: "LAME failed to flush (code \(flushed))")
        }
        output.append(contentsOf: scratch[0..<Int(flushed)])
        var tag = [UInt8](repeating: 0, count: 2_880)
        let tagSize = tag.withUnsafeMutableBufferPointer { lame_get_lametag_frame(flags, $0.baseAddress, $0.count) }
        guard tagSize > 0, tagSize <= tag.count, tagSize <= output.count else {
            throw AudioError(.cannotEncode, path: nil, reason: "LAME wrote no gapless tag frame")
        }
        output.replaceSubrange(0..<tagSize, with: tag[0..<tagSize])
        return output
    }

    /// Encodes all of `samples` (interleaved 16-bit) in one call.
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
