/// The sample arithmetic of mixing interleaved blocks, here so that only SessionAudio works on raw
/// buffers. Each loop is the one the mixer has always run: the same products and sums in the same
/// order, so a render's bytes do not depend on where the loop lives.
package enum SampleBlock {
    /// Sets `count` samples of `buffer`, from index `start`, to zero.
    package static func zero(_ buffer: inout [Float], from start: Int, count: Int) {
        precondition(start >= 0 && count >= 0 && start + count <= buffer.count, "a span inside the buffer")
        buffer.withUnsafeMutableBufferPointer { samples in
            samples.baseAddress!.advanced(by: start).update(repeating: 0, count: count)
        }
    }

    /// Writes `source[0 ..< count] × gain` into `buffer` from index `offset`.
    package static func copy(
        _ source: [Float],
        count: Int,
        gain: Float,
        into buffer: inout [Float],
        at offset: Int
    ) {
        precondition(count <= source.count && offset >= 0 && offset + count <= buffer.count, "spans inside the buffers")
        buffer.withUnsafeMutableBufferPointer { samples in
            source.withUnsafeBufferPointer { source in
                for index in 0..<count { samples[offset + index] = source[index] * gain }
            }
        }
    }

    /// Adds `frames` frames of `source` (`channels` interleaved), each times its own entry of
    /// `gains`, into `mix` from sample index `offset`.
    package static func add(
        _ source: [Float],
        frames: Int,
        channels: Int,
        gains: [Float],
        into mix: inout [Float],
        at offset: Int
    ) {
        let count = frames * channels
        precondition(
            count <= source.count && frames <= gains.count && offset >= 0 && offset + count <= mix.count,
            "spans inside the buffers"
        )
        mix.withUnsafeMutableBufferPointer { mix in
            source.withUnsafeBufferPointer { source in
                gains.withUnsafeBufferPointer { gains in
                    let (mix, source, gains) = (mix.baseAddress! + offset, source.baseAddress!, gains.baseAddress!)
                    // Mono and stereo spelled out, so that the optimizer vectorizes them.
                    switch channels {
                    case 1:
                        for frame in 0..<frames { mix[frame] += source[frame] * gains[frame] }
                    case 2:
                        for frame in 0..<frames {
                            let gain = gains[frame]
                            mix[2 * frame] += source[2 * frame] * gain
                            mix[2 * frame + 1] += source[2 * frame + 1] * gain
                        }
                    default:
                        for frame in 0..<frames {
                            let gain = gains[frame]
                            for channel in 0..<channels {
                                mix[frame * channels + channel] += source[frame * channels + channel] * gain
                            }
                        }
                    }
                }
            }
        }
    }

    /// Whether `count` samples from `samples` are all digital silence (±0). The bits of 64 samples
    /// at a time are or-ed together without a branch per sample, which the optimizer vectorizes,
    /// and sound ends the scan at its first 64.
    package static func isSilent(_ samples: UnsafePointer<Float>, count: Int) -> Bool {
        var start = 0
        while start < count {
            let end = min(count, start + 64)
            var bits: UInt32 = 0
            for index in start..<end { bits |= samples[index].bitPattern }
            if bits & 0x7fff_ffff != 0 { return false }
            start = end
        }
        return true
    }

    /// Whether the first `count` samples of `samples` are all digital silence (±0).
    package static func isSilent(_ samples: [Float], count: Int) -> Bool {
        precondition(count >= 0 && count <= samples.count, "a span inside the buffer")
        return samples.withUnsafeBufferPointer { isSilent($0.baseAddress!, count: count) }
    }
}
