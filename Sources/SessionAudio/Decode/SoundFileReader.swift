internal import CSndFile

/// Reads any format libsndfile knows (WAV, RF64, FLAC, Ogg Vorbis/Opus, AIFF, CAF, …) as
/// 32-bit float frames. Owns its `SNDFILE` and closes it in `deinit`.
final class SoundFileReader {
    private let file: OpaquePointer
    let path: String
    let sampleRate: Int
    let channelCount: Int
    /// The frame count the file's header declares; a promise, not proof.
    let declaredFrameCount: Int64
    /// libsndfile's name for the container, such as `WAV (Microsoft)`.
    let formatName: String

    /// Reads the file open at `descriptor`, which it owns from now on (libsndfile closes it, on
    /// failure too); `path` names it in errors. The corresponding libsndfile call is `sf_open_fd`.
    init(descriptor: Int32, path: String) throws(AudioError) {
        var info = SF_INFO()
        guard let file = sf_open_fd(descriptor, Int32(SFM_READ), &info, Int32(SF_TRUE)) else {
            throw AudioError(.cannotOpen, path: path, SoundFileError.last(nil)) { "libsndfile: \($0)" }
        }
        guard info.channels > 0, info.samplerate > 0 else {
            sf_close(file)
            throw AudioError(
                .cannotOpen,
                path: path,
                reason: "libsndfile reports \(info.samplerate) Hz and \(info.channels) channels"
            )
        }
        self.file = file
        self.path = path
        sampleRate = Int(info.samplerate)
        channelCount = Int(info.channels)
        declaredFrameCount = Int64(info.frames)
        var formatInfo = SF_FORMAT_INFO()
        formatInfo.format = info.format & Int32(SF_FORMAT_TYPEMASK)
        if sf_command(file, Int32(SFC_GET_FORMAT_INFO), &formatInfo, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0,
            let name = formatInfo.name
        {
            formatName = String(cString: name)
        } else {
            formatName = "sound file"
        }
    }

    deinit {
        sf_close(file)
    }

    /// When the header declares more audio data than the file holds: the declared and actual
    /// byte counts, as libsndfile's log reports them (`data : 16000 (should be 6000)`). libsndfile
    /// itself reads what is there and says nothing.
    /// The corresponding libsndfile call is `sf_command(SFC_GET_LOG_INFO)`.
    var dataShortfall: (declared: Int, actual: Int)? {
        var log = [CChar](repeating: 0, count: 16_384)
        let length = sf_command(file, Int32(SFC_GET_LOG_INFO), &log, Int32(log.count))
        guard length > 0 else { return nil }
        let text = String(decoding: log.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("data : ") && line.contains("(should be ") {
            let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            if numbers.count >= 2, numbers[0] > numbers[1] { return (numbers[0], numbers[1]) }
        }
        return nil
    }

    /// Reads up to `maximumFrames` frames into `samples` (interleaved, from index 0).
    ///
    /// Returns the number of frames read; 0 only at the end. The corresponding libsndfile call is
    /// `sf_readf_float`.
    func read(into samples: inout [Float], maximumFrames: Int) throws(AudioError) -> Int {
        let wanted = maximumFrames * channelCount
        if samples.count < wanted { samples = [Float](repeating: 0, count: wanted) }
        let frames = samples.withUnsafeMutableBufferPointer { buffer in
            sf_readf_float(file, buffer.baseAddress, sf_count_t(maximumFrames))
        }
        if frames == 0, sf_error(file) != 0 {
            throw AudioError(.cannotDecode, path: path, SoundFileError.last(file)) { "libsndfile: \($0)" }
        }
        return Int(frames)
    }
}
