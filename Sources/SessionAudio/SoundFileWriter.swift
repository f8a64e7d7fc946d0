internal import CSndFile
public import SessionTimeline
#if canImport(Glibc)
import Glibc
#endif

/// Writes a WAV file with libsndfile, which writes every header; frames go in as 32-bit floats
/// and are rounded to the file's format here.
///
/// Floats map to integers by `round(x × 2^(bits−1))`, clamped to the format's range (the
/// inverse of libsndfile's reading scale, so 16-bit sources pass through unchanged). A file
/// whose data would pass 4 GiB is written as RF64. Every write's frame count is checked:
/// libsndfile reports a full disk only there. Owns its `SNDFILE`; ``close()`` finishes the file.
public final class SoundFileWriter {
    private var file: OpaquePointer?
    private let descriptor: Int32
    private var bytesSinceWriteBack = 0
    /// The file being written.
    public let path: String
    /// The file's channel count.
    public let channelCount: ChannelCount
    /// The file's sample format.
    public let format: SampleFormat
    /// Frames written so far.
    public private(set) var framesWritten = Frames.zero
    private var integers: [Int32] = []
    private var shorts: [Int16] = []
    private var zeros: [Int16] = []

    /// Creates `path` (replacing any file there) for `frameCount` frames, or an unknown number.
    ///
    /// The corresponding libsndfile calls are `sf_open_fd` and `sf_set_string`.
    public init(
        path: String, sampleRate: SampleRate, channelCount: ChannelCount, format: SampleFormat, frameCount: Frames? = nil, title: String? = nil
    ) throws(AudioError) {
        let dataBytes = (frameCount ?? .zero).count * Int64(channelCount.count * format.bytesPerSample)
        let container = dataBytes > Int64(UInt32.max) - (1 << 20) ? SF_FORMAT_RF64 : SF_FORMAT_WAV
        let encoding = switch format {
        case .pcm16: SF_FORMAT_PCM_16
        case .pcm24: SF_FORMAT_PCM_24
        case .float32: SF_FORMAT_FLOAT
        }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate.hertz)
        info.channels = Int32(channelCount.count)
        info.format = Int32(container | encoding)
        guard sf_format_check(&info) != 0 else {
            throw AudioError(.unsupportedFormat, path: path, reason: "libsndfile cannot write \(sampleRate) Hz, \(channelCount) channels as \(format.rawValue) WAV")
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(errno)))
        }
        guard let file = sf_open_fd(descriptor, Int32(SFM_WRITE), &info, Int32(SF_TRUE)) else {
            Glibc.close(descriptor)
            throw AudioError(.cannotWrite, path: path, reason: "libsndfile: \(String(cString: sf_strerror(nil)))")
        }
        self.file = file
        self.descriptor = descriptor
        self.path = path
        self.channelCount = channelCount
        self.format = format
        if format == .float32 {
            sf_command(file, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
        }
        if let title, !title.isEmpty, sf_set_string(file, Int32(SF_STR_TITLE), title) != 0 {
            throw failure("cannot set the title tag")
        }
    }

    deinit {
        if let file { sf_close(file) }
    }

    /// Writes the first `frames` frames of interleaved `samples`.
    /// The corresponding libsndfile calls are `sf_writef_short`, `sf_writef_int` and `sf_writef_float`.
    public func write(_ samples: [Float], frames: Int) throws(AudioError) {
        guard let file else { throw AudioError(.cannotWrite, path: path, reason: "the file is already closed") }
        let count = frames * channelCount.count
        precondition(samples.count >= count, "write(_:frames:) was given fewer samples than frames × channels")
        let written: sf_count_t
        switch format {
        case .pcm16:
            if shorts.count < count { shorts = [Int16](repeating: 0, count: count) }
            SampleConversion.quantize(samples, count: count, into: &shorts)
            written = shorts.withUnsafeBufferPointer { sf_writef_short(file, $0.baseAddress, sf_count_t(frames)) }
        case .pcm24:
            if integers.count < count { integers = [Int32](repeating: 0, count: count) }
            SampleConversion.quantize24(samples, count: count, into: &integers)
            written = integers.withUnsafeBufferPointer { sf_writef_int(file, $0.baseAddress, sf_count_t(frames)) }
        case .float32:
            written = samples.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, sf_count_t(frames)) }
        }
        guard written == frames else {
            throw failure("wrote \(written) of \(frames) frames")
        }
        framesWritten += Frames(Int64(frames))
        startWriteBack(after: frames)
    }

    /// Every 4 MiB, asks the kernel to start writing what is in the page cache to disk, so that
    /// the disk works while the render goes on and the flush in ``close()`` has little left to wait for.
    private func startWriteBack(after frames: Int) {
        bytesSinceWriteBack += frames * channelCount.count * format.bytesPerSample
        if bytesSinceWriteBack >= 4 << 20 {
            bytesSinceWriteBack = 0
            WriteBack.start(descriptor)
        }
    }

    /// Writes `frames` frames of digital silence, straight from a block of zeros in the file's
    /// own sample type (no conversion). Stops early, between blocks, if the task is cancelled.
    public func writeSilence(frames: Frames) throws(AudioError) {
        guard let file else { throw AudioError(.cannotWrite, path: path, reason: "the file is already closed") }
        let block = 65_536
        if zeros.count < block * channelCount.count { zeros = [Int16](repeating: 0, count: block * channelCount.count) }
        var remaining = frames.count
        while remaining > 0, !Task.isCancelled {
            let chunk = Int(min(remaining, Int64(block)))
            let written = zeros.withUnsafeBufferPointer { sf_writef_short(file, $0.baseAddress, sf_count_t(chunk)) }
            guard written == chunk else { throw failure("wrote \(written) of \(chunk) frames") }
            framesWritten += Frames(Int64(chunk))
            startWriteBack(after: chunk)
            remaining -= Int64(chunk)
        }
    }

    /// Finishes the header, flushes the file to disk and closes it.
    /// The corresponding libsndfile calls are `sf_write_sync` and `sf_close`.
    public func close() throws(AudioError) {
        guard let file else { return }
        sf_write_sync(file)
        let syncError = sf_error(file)
        let message = String(cString: sf_strerror(file))
        self.file = nil
        let result = sf_close(file)
        guard syncError == 0, result == 0 else {
            throw AudioError(.cannotWrite, path: path, reason: "libsndfile: \(syncError != 0 ? message : String(cString: sf_error_number(result)))")
        }
    }

    private func failure(_ what: String) -> AudioError {
        let detail = file.map { String(cString: sf_strerror($0)) } ?? "file closed"
        return AudioError(.cannotWrite, path: path, reason: "\(what) (libsndfile: \(detail))")
    }
}

/// Linux's `sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE)`: start writing a file's dirty
/// pages without waiting. Glibc declares it only under `_GNU_SOURCE`, which Swift's Glibc module
/// does not set, so it is looked up once by name; where it is missing, nothing happens.
enum WriteBack {
    private typealias SyncFileRange = @convention(c) (Int32, Int64, Int64, UInt32) -> Int32
    private static let syncFileRange: SyncFileRange? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range")
        .map { unsafeBitCast($0, to: SyncFileRange.self) }
    private static let write: UInt32 = 2  // SYNC_FILE_RANGE_WRITE

    static func start(_ descriptor: Int32) {
        _ = syncFileRange?(descriptor, 0, 0, write)
    }
}

/// Float-to-integer sample conversion: `round(x × 2^(bits−1))`, ties to even, clamped.
///
/// Written so the compiler vectorizes it with plain SSE2: the value is clamped, then rounded by
/// adding and reading back 1.5 × 2^23 (whose float spacing is exactly 1, so the FPU's own
/// round-to-nearest-even does the rounding), and the integer is taken from the mantissa bits.
enum SampleConversion {
    /// 1.5 × 2^23 as a float, and its bit pattern.
    private static let magic: Float = 12_582_912
    private static let magicBits: Int32 = 0x4B40_0000

    static func quantize(_ samples: [Float], count: Int, into output: inout [Int16]) {
        samples.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                for index in 0..<count {
                    let clamped = min(max(source[index] * 32_768, -32_768), 32_767)
                    let bits = Int32(bitPattern: (clamped + magic).bitPattern) &- magicBits
                    target[index] = Int16(truncatingIfNeeded: bits)
                }
            }
        }
    }

    /// 24-bit values in the top three bytes of an `Int32`, as libsndfile's `sf_writef_int` expects.
    static func quantize24(_ samples: [Float], count: Int, into output: inout [Int32]) {
        samples.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                for index in 0..<count {
                    let scaled = (Double(source[index]) * 8_388_608).rounded(.toNearestOrEven)
                    target[index] = Int32(max(-8_388_608, min(8_388_607, scaled))) << 8
                }
            }
        }
    }
}

// TEMPORARY STUB until the streaming writer lands.
extension SoundFileWriter {
    public convenience init(
        streamingTo descriptor: Int32, name: String, sampleRate: SampleRate, channelCount: ChannelCount, format: SampleFormat,
        frameCount: Frames, title: String? = nil
    ) throws(AudioError) {
        throw AudioError(.unsupportedFormat, path: name, reason: "streaming is not built yet")
    }
}
