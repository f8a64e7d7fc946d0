internal import CSoxr

/// Converts interleaved float frames from one sample rate to another with libsoxr at its
/// high-quality setting (20-bit precision, linear phase), in one thread so that output is
/// identical from run to run. Owns its `soxr_t` and frees it in `deinit`.
final class Resampler {
    private let resampler: soxr_t
    let inputRate: Int
    let outputRate: Int
    let channelCount: Int
    private var scratch: [Float] = []

    /// The corresponding libsoxr call is `soxr_create`.
    init(inputRate: Int, outputRate: Int, channelCount: Int) throws(AudioError) {
        var error: soxr_error_t?
        var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var quality = soxr_quality_spec(UInt(SOXR_20_BITQ), UInt(SOXR_LINEAR_PHASE))
        var runtime = soxr_runtime_spec(1)
        let created = soxr_create(
            Double(inputRate),
            Double(outputRate),
            UInt32(channelCount),
            &error,
            &io,
            &quality,
            &runtime
        )
        guard let created, error == nil else {
            if let created { soxr_delete(created) }
            let reason = error.map { String(cString: $0) } ?? "unknown error"
            throw AudioError(
                .cannotResample,
                path: nil,
                reason: "soxr: \(reason) (\(inputRate) Hz to \(outputRate) Hz, \(channelCount) ch)"
            )
        }
        resampler = created
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channelCount = channelCount
    }

    deinit {
        soxr_delete(resampler)
    }

    /// Resamples the first `frames` frames of `input`, appending what comes out to `output`.
    /// The corresponding libsoxr call is `soxr_process`.
    func process(_ input: [Float], frames: Int, appendingTo output: inout [Float]) throws(AudioError) {
        let failure = input.withUnsafeBytes { bytes in
            run(bytes.baseAddress, frames: frames, appendingTo: &output)
        }
        if let failure { throw failure }
    }

    /// Ends the stream, appending the filter's remaining output to `output`.
    func flush(appendingTo output: inout [Float]) throws(AudioError) {
        if let failure = run(nil, frames: 0, appendingTo: &output) { throw failure }
    }

    /// Feeds all of `input` (nil: end of stream) and collects every frame soxr has ready;
    /// returns the error soxr reported, if any.
    private func run(_ input: UnsafeRawPointer?, frames: Int, appendingTo output: inout [Float]) -> AudioError? {
        let capacity = max(4_096, frames * outputRate / inputRate + 256)
        if scratch.count < capacity * channelCount { scratch = [Float](repeating: 0, count: capacity * channelCount) }
        let frameBytes = channelCount * MemoryLayout<Float>.size
        var consumed = 0
        while true {
            var used = 0
            var produced = 0
            let error = scratch.withUnsafeMutableBytes { out in
                soxr_process(
                    resampler,
                    input.map { $0 + consumed * frameBytes },
                    frames - consumed,
                    &used,
                    out.baseAddress,
                    capacity,
                    &produced
                )
            }
            if let error {
                return AudioError(.cannotResample, path: nil, reason: "soxr: \(String(cString: error))")
            }
            consumed += used
            output.append(contentsOf: scratch[0..<(produced * channelCount)])
            if produced < capacity && consumed >= frames { return nil }
        }
    }
}
