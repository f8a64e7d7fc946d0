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
                for frame in 0..<frames {
                    let gain = gains[frame]
                    for channel in 0..<channels {
                        mix[offset + frame * channels + channel] += source[frame * channels + channel] * gain
                    }
                }
            }
        }
    }

    /// Whether `count` samples from `samples` are all digital silence (±0). The bits are or-ed
    /// together without a branch per sample, which the optimizer vectorizes.
    package static func isSilent(_ samples: UnsafePointer<Float>, count: Int) -> Bool {
        var bits: UInt32 = 0
        for index in 0..<count { bits |= samples[index].bitPattern }
        return bits & 0x7fff_ffff == 0
    }
}
