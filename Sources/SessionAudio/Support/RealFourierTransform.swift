internal import CFFmpeg

/// A real-to-complex discrete Fourier transform of one fixed length, through libavutil's
/// `av_tx` (FFmpeg's own transforms, SIMD on every CPU FFmpeg knows): the library's, not one
/// written here. One value owns the transform's context and frees it once.
final class RealFourierTransform {
    /// The number of real samples each transform takes; it yields `length / 2 + 1` bins.
    let length: Int
    private var context: OpaquePointer?
    private let transform: av_tx_fn
    /// The transform's output, `length / 2 + 1` complex values as (re, im) pairs.
    private var spectrum: [Float]

    /// A transform of `length` samples (even).
    /// The corresponding libavutil call is `av_tx_init` (`AV_TX_FLOAT_RDFT`, unaligned buffers).
    init(length: Int) throws(AudioError) {
        precondition(length >= 2 && length.isMultiple(of: 2), "a real transform of an even length")
        try LazyLibrary.fourierTransform.load(or: .cannotSynthesize)
        var context: OpaquePointer?
        var function: av_tx_fn?
        var scale: Float = 1
        let status = av_tx_init(
            &context,
            &function,
            AV_TX_FLOAT_RDFT,
            0,
            Int32(length),
            &scale,
            UInt64(AV_TX_UNALIGNED.rawValue)
        )
        guard status >= 0, let context, let function else {
            av_tx_uninit(&context)
            throw AudioError(
                .cannotSynthesize,
                path: nil,
                FFmpegError.message(.libavutil, status),
                reason: { "cannot set up a Fourier transform of \(length) samples: \($0)" }
            )
        }
        self.length = length
        self.context = context
        self.transform = function
        spectrum = [Float](repeating: 0, count: length + 2)
    }

    deinit { av_tx_uninit(&context) }

    /// The power (squared magnitude) of each of the `length / 2 + 1` bins of `samples`'
    /// transform, into `power`; `samples` must hold `length` values (av_tx may overwrite them).
    func power(of samples: inout [Float], into power: inout [Float]) {
        precondition(samples.count == length && power.count == length / 2 + 1)
        samples.withUnsafeMutableBytes { input in
            spectrum.withUnsafeMutableBytes { output in
                transform(context, output.baseAddress, input.baseAddress, MemoryLayout<Float>.stride)
            }
        }
        for bin in power.indices {
            let (re, im) = (spectrum[2 * bin], spectrum[2 * bin + 1])
            power[bin] = re * re + im * im
        }
    }
}
