internal import CSndFile
public import SessionTimeline

/// Writes sound held in memory as a 24-bit FLAC file, with libsndfile (and libFLAC behind it).
///
/// Samples are rounded to 24 bits as ``SoundFileWriter`` rounds them for a 24-bit WAV,
/// `round(x × 2^23)`, ties to even, clamped; the same samples always give the same file.
public enum FLACFile {
    /// Creates `path` (replacing any file there) holding the interleaved `samples`.
    ///
    /// The corresponding libsndfile calls are `sf_format_check`, `sf_open`, `sf_writef_int` and `sf_close`.
    public static func write(
        _ samples: [Float],
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        to path: String
    ) throws(AudioError) {
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate.hertz)
        info.channels = Int32(channelCount.count)
        info.format = Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_24)
        guard sf_format_check(&info) != 0 else {
            throw AudioError(
                .unsupportedFormat,
                path: path,
                reason: "libsndfile cannot write \(sampleRate.hertz) Hz, \(channelCount.count) channels as 24-bit FLAC"
            )
        }
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw AudioError(.cannotWrite, path: path, reason: "libsndfile: \(String(cString: sf_strerror(nil)))")
        }
        let channels = channelCount.count
        let frames = samples.count / channels
        let block = 65_536
        var integers = [Int32](repeating: 0, count: block * channels)
        var done = 0
        while done < frames {
            let chunk = min(block, frames - done)
            let slice = Array(samples[(done * channels)..<((done + chunk) * channels)])
            SampleConversion.quantize24(slice, count: chunk * channels, into: &integers)
            let written = integers.withUnsafeBufferPointer { sf_writef_int(file, $0.baseAddress, sf_count_t(chunk)) }
            guard written == chunk else {
                let reason = String(cString: sf_strerror(file))
                sf_close(file)
                throw AudioError(
                    .cannotWrite,
                    path: path,
                    reason: "wrote \(written) of \(chunk) frames (libsndfile: \(reason))"
                )
            }
            done += chunk
        }
        let result = sf_close(file)
        guard result == 0 else {
            throw AudioError(
                .cannotWrite,
                path: path,
                reason: "libsndfile: \(String(cString: sf_error_number(result)))"
            )
        }
    }
}
