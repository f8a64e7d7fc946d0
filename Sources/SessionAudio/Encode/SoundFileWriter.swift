internal import CSndFile
package import SessionTimeline

#if canImport(Glibc)
import Glibc
#endif

/// Writes a WAV or FLAC file with libsndfile, which writes every header; frames go in as 32-bit
/// floats and are rounded to the file's format here. (Ogg Vorbis is ``VorbisFileWriter``'s.)
///
/// Floats map to integers by `round(x × 2^(bits−1))`, clamped to the format's range (the
/// inverse of libsndfile's reading scale, so 16-bit sources pass through unchanged). A file
/// whose data would pass 4 GiB is written as RF64. Every write's frame count is checked:
/// libsndfile reports a full disk only there. Owns its `SNDFILE`; ``close()`` finishes the file.
///
/// A WAV can also be streamed to a descriptor that cannot seek (standard output, a pipe, a FIFO,
/// a character device) with ``init(streamingTo:name:sampleRate:channelCount:format:frameCount:title:)``:
/// see there for how its header and samples are written.
package final class SoundFileWriter: AudioFileSink {
    private var file: OpaquePointer?
    private let descriptor: Int32
    /// Whether ``descriptor`` is a file this writer opened for a WAV header it writes itself, and
    /// so must close (libsndfile closes the descriptors it writes files through).
    private let ownsDescriptor: Bool
    private var bytesSinceWriteBack = 0
    /// Where a stream's bytes go and the header they follow; `nil` for a file.
    private let stream: (output: DescriptorOutput, header: WAVHeader)?
    /// What libsndfile writes: WAV (RIFF or RF64) or FLAC.
    private let kind: SoundFileKind
    /// The file's rate, for its chapters' times.
    private let sampleRate: Int
    /// Chapters added after libsndfile has closed the file (FLAC); a WAV's went in with its header.
    private let chapters: [AudioChapter]
    /// The file being written, or the name a stream was given.
    package let path: String
    /// The file's channel count.
    package let channelCount: ChannelCount
    /// The channel count as C counts it, for buffer sizes.
    private let channels: Int
    /// The file's sample format.
    package let format: SampleFormat
    /// Frames written so far.
    package var framesWritten: Frames { Frames(promise.written) }
    private var promise: FramePromise
    private var integers: [Int32] = []
    private var shorts: [Int16] = []
    private var zeros: [Int16] = []

    /// Creates `path` (replacing any file there) for `frameCount` frames, or an unknown number.
    ///
    /// The corresponding libsndfile calls are `sf_open_fd` and `sf_set_string`.
    package convenience init(
        path: String,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        format: SampleFormat,
        frameCount: Frames? = nil,
        title: String? = nil
    ) throws(AudioError) {
        let dataBytes = (frameCount ?? .zero).count * Int64(channelCount.count * format.bytesPerSample)
        try self.init(
            path: path,
            sampleRate: sampleRate.hertz,
            channelCount: channelCount.count,
            format: format,
            container: WAVContainer(dataByteCount: dataBytes),
            title: title
        )
    }

    /// Creates `path` (replacing any file there) as `settings.format` (WAV or FLAC), for
    /// `frameCount` frames, with `metadata`'s tags and chapters.
    ///
    /// Title, album and artist go in through libsndfile: a WAV's `LIST`/`INFO` chunk, FLAC's
    /// comments. Chapters: a WAV's `cue ` and `LIST`/`adtl` chunks (``WAVChapterChunks``);
    /// FLAC's `CHAPTER001=HH:MM:SS.mmm` and `CHAPTER001NAME=` comments, added with libFLAC after
    /// libsndfile has closed the file (``FLACComments``), since libsndfile writes only the tags it
    /// has names for.
    ///
    /// - Throws: ``AudioError`` with code `unsupportedFormat` for MP3, Opus and Ogg Vorbis (their
    ///   own writers) and for what libsndfile cannot write; `cannotWrite` when the file cannot be created.
    package convenience init(
        path: String,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        settings: EncoderSettings,
        metadata: AudioMetadata,
        frameCount: Frames,
        reusing _: SpanReuse? = nil
    ) throws(AudioError) {
        switch settings.format {
        case .wav, .flac: break
        case .mp3, .opus, .vorbis, .m4a, .m4b:
            throw AudioError(.unsupportedFormat, path: path, reason: "\(settings.format) is written by its own writer")
        }
        guard settings.format == .wav else {
            try self.init(
                path: path,
                sampleRate: sampleRate.hertz,
                channelCount: channelCount.count,
                format: settings.sampleFormat,
                kind: SoundFileKind(settings, channelCount: channelCount, frameCount: frameCount),
                metadata: metadata,
                promising: frameCount.count
            )
            return
        }
        // A WAV of known length is written from its own header, as a stream is, into a file this
        // writer owns: libsndfile's header has room for about 100 KB of chapters, and past that it
        // silently writes a file no reader can open (``WAVHeader``).
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(errno)))
        }
        let dataBytes = frameCount.count * Int64(channelCount.count * settings.sampleFormat.bytesPerSample)
        try self.init(
            streamingTo: descriptor,
            name: path,
            sampleRate: sampleRate.hertz,
            channelCount: channelCount.count,
            format: settings.sampleFormat,
            frameCount: frameCount.count,
            container: WAVHeader.container(dataByteCount: dataBytes, chapters: metadata.chapters),
            metadata: metadata,
            ownsDescriptor: true
        )
    }

    /// Creates `path` in the given container; tests use it to write a small RF64 file.
    convenience init(
        path: String,
        sampleRate: Int,
        channelCount: Int,
        format: SampleFormat,
        container: WAVContainer,
        title: String? = nil,
        chapters: [AudioChapter] = []
    ) throws(AudioError) {
        try self.init(
            path: path,
            sampleRate: sampleRate,
            channelCount: channelCount,
            format: format,
            kind: .wav(container),
            metadata: AudioMetadata(title: title, chapters: chapters)
        )
    }

    /// Creates `path` as `kind`, with `metadata`'s tags and chapters, for exactly `promising`
    /// frames when given (else the count is only a hint for the container).
    /// The corresponding libsndfile calls are `sf_open_fd`, `sf_command`, `sf_set_string` and `sf_set_chunk`.
    init(
        path: String,
        sampleRate: Int,
        channelCount: Int,
        format: SampleFormat,
        kind: SoundFileKind,
        metadata: AudioMetadata,
        promising frameCount: Int64? = nil
    ) throws(AudioError) {
        var info = try Self.checkedInfo(
            kind,
            sampleRate: sampleRate,
            channelCount: channelCount,
            format: format,
            name: path
        )
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(errno)))
        }
        guard let file = sf_open_fd(descriptor, Int32(SFM_WRITE), &info, Int32(SF_TRUE)) else {
            Glibc.close(descriptor)
            throw AudioError(.cannotWrite, path: path, SoundFileError.last(nil)) { "libsndfile: \($0)" }
        }
        self.file = file
        self.descriptor = descriptor
        self.ownsDescriptor = false  // libsndfile closes it
        self.stream = nil
        self.promise = FramePromise(path: path, frameCount: frameCount, wording: .file)
        self.kind = kind
        self.sampleRate = sampleRate
        self.chapters = metadata.chapters
        self.path = path
        self.channelCount = ChannelCount(channelCount) ?? .mono
        self.channels = channelCount
        self.format = format
        guard kind.configure(file) else {
            throw failure("cannot set the \(kind.name) encoder's level")
        }
        if format == .float32 {
            sf_command(file, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
        }
        let tags = [
            ("title", SF_STR_TITLE, metadata.title), ("album", SF_STR_ALBUM, metadata.album),
            ("artist", SF_STR_ARTIST, metadata.artist),
        ]
        for (name, type, value) in tags {
            if let value, !value.isEmpty, sf_set_string(file, Int32(type), value) != 0 {
                throw failure("cannot set the \(name) tag")
            }
        }
        if case .wav = kind, !metadata.chapters.isEmpty {
            let chunks = WAVChapterChunks(metadata.chapters)
            try addChunk("cue ", chunks.cue)
            try addChunk("LIST", chunks.labels)
        }
    }

    /// Has libsndfile write a chunk `id` holding `body` (a multiple of 4 bytes) before the samples.
    /// The corresponding libsndfile call is `sf_set_chunk`.
    private func addChunk(_ id: String, _ body: [UInt8]) throws(AudioError) {
        precondition(body.count % 4 == 0, "libsndfile pads a custom chunk to 4 bytes with whatever follows it")
        var chunk = SF_CHUNK_INFO()
        withUnsafeMutableBytes(of: &chunk.id) { target in
            for (index, byte) in id.utf8.enumerated() { target[index] = byte }
        }
        chunk.id_size = UInt32(id.utf8.count)
        chunk.datalen = UInt32(body.count)
        let result = body.withUnsafeBytes { bytes in
            chunk.data = UnsafeMutableRawPointer(mutating: bytes.baseAddress)
            return sf_set_chunk(file, &chunk)
        }
        guard result == 0 else {
            throw AudioError(.cannotWrite, path: path, SoundFileError.message(result)) {
                "cannot add the `\(id)` chunk (libsndfile: \($0))"
            }
        }
    }

    /// Streams a WAV of exactly `frameCount` frames to `descriptor`, an open descriptor that
    /// need not seek: standard output, a pipe, a FIFO, a character device. `name` stands for it
    /// in errors (`standard output`, or the FIFO's path).
    ///
    /// The header goes out first and complete, laid out by ``WAVHeader`` for `frameCount` frames
    /// exactly as libsndfile lays it out in a file, RF64 past 4 GiB as for files. It is made by
    /// hand only because libsndfile cannot make it: its WAV writer refuses a pipe and always seeks
    /// back to finish the header at close.
    ///
    /// The samples still go through libsndfile: a headerless `SF_FORMAT_RAW` handle on virtual
    /// I/O (``DescriptorOutput``) receives the same `sf_writef_short`, `sf_writef_int` and
    /// `sf_writef_float` calls, with the same quantized values, that write a file's samples, so
    /// the data bytes equal a file's by construction rather than through a second copy of
    /// libsndfile's conversions. The writes themselves are this module's: a full destination or
    /// a closed pipe (`EPIPE`, without the process dying of SIGPIPE) is an ``AudioError`` with code
    /// ``AudioError/Code/cannotWrite``, `EINTR` is retried, and nothing ever seeks.
    ///
    /// Writing past `frameCount` frames fails at once; ``close()`` adds the pad byte an odd-length
    /// data chunk needs and fails unless exactly `frameCount` frames were written. The descriptor
    /// stays open: whoever opened it closes it after ``close()`` (for a pipe, that is what tells
    /// the reader the WAV has ended).
    ///
    /// The corresponding libsndfile calls are `sf_format_check` and `sf_open_virtual`.
    package convenience init(
        streamingTo descriptor: Int32,
        name: String,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        format: SampleFormat,
        frameCount: Frames,
        metadata: AudioMetadata = AudioMetadata()
    ) throws(AudioError) {
        let dataBytes = frameCount.count * Int64(channelCount.count * format.bytesPerSample)
        try self.init(
            streamingTo: descriptor,
            name: name,
            sampleRate: sampleRate.hertz,
            channelCount: channelCount.count,
            format: format,
            frameCount: frameCount.count,
            container: WAVHeader.container(dataByteCount: dataBytes, chapters: metadata.chapters),
            metadata: metadata
        )
    }

    /// Streams in the given container; tests use it to stream a small RF64 file. With
    /// `ownsDescriptor`, the descriptor is a file this writer created: it is flushed to disk and
    /// closed by ``close()``, and closed on every failure, here included.
    init(
        streamingTo descriptor: Int32,
        name: String,
        sampleRate: Int,
        channelCount: Int,
        format: SampleFormat,
        frameCount: Int64,
        container: WAVContainer,
        metadata: AudioMetadata = AudioMetadata(),
        ownsDescriptor: Bool = false
    ) throws(AudioError) {
        precondition(frameCount >= 0, "a stream's frame count cannot be negative")
        func abandon(_ error: AudioError) -> AudioError {
            if ownsDescriptor { Glibc.close(descriptor) }
            return error
        }
        let info: SF_INFO
        let header: WAVHeader
        do {
            info = try Self.checkedInfo(
                .wav(container),
                sampleRate: sampleRate,
                channelCount: channelCount,
                format: format,
                name: name
            )
            header = WAVHeader(
                container: container,
                sampleRate: sampleRate,
                channelCount: channelCount,
                format: format,
                frameCount: frameCount,
                strings: try WAVHeader.infoStrings(metadata, name: name),
                chapters: metadata.chapters
            )
        } catch {
            throw abandon(error)
        }
        var raw = info
        raw.format = Int32(SF_FORMAT_RAW | SF_ENDIAN_LITTLE) | (info.format & Int32(SF_FORMAT_SUBMASK))
        let output = DescriptorOutput(descriptor: descriptor)
        var io = DescriptorOutput.virtualIO
        guard let file = sf_open_virtual(&io, Int32(SFM_WRITE), &raw, Unmanaged.passUnretained(output).toOpaque())
        else {
            throw abandon(AudioError(.cannotWrite, path: name, SoundFileError.last(nil)) { "libsndfile: \($0)" })
        }
        self.file = file
        self.descriptor = descriptor
        self.ownsDescriptor = ownsDescriptor
        self.stream = (output, header)
        self.promise = FramePromise(path: name, frameCount: frameCount, wording: .streamHeader)
        self.kind = .wav(container)
        self.sampleRate = sampleRate
        self.chapters = []
        self.path = name
        self.channelCount = ChannelCount(channelCount) ?? .mono
        self.channels = channelCount
        self.format = format
        guard output.write(header.bytes) else {
            throw AudioError(
                .cannotWrite,
                path: name,
                reason: "cannot write the WAV header: \(output.failure ?? "unknown error")"
            )
        }
    }

    /// The `SF_INFO` for a `kind` file, once libsndfile has said it can write one.
    /// The corresponding libsndfile call is `sf_format_check`.
    private static func checkedInfo(
        _ kind: SoundFileKind,
        sampleRate: Int,
        channelCount: Int,
        format: SampleFormat,
        name: String
    ) throws(AudioError) -> SF_INFO {
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channelCount)
        info.format = kind.formatCode(format)
        guard sf_format_check(&info) != 0 else {
            throw AudioError(
                .unsupportedFormat,
                path: name,
                reason:
                    "libsndfile cannot write \(sampleRate) Hz, \(channelCount) channels as \(format.rawValue) \(kind.name)"
            )
        }
        return info
    }

    deinit {
        if let file {
            sf_close(file)
            if ownsDescriptor { Glibc.close(descriptor) }
        }
    }

    /// Writes the first `frames` frames of interleaved `samples`.
    /// The corresponding libsndfile calls are `sf_writef_short`, `sf_writef_int` and `sf_writef_float`.
    package func write(_ samples: [Float], frames: Int) throws(AudioError) {
        guard let file else { throw AudioError(.cannotWrite, path: path, reason: "the file is already closed") }
        let count = frames * channels
        precondition(samples.count >= count, "write(_:frames:) was given fewer samples than frames × channels")
        try promise.checkRoom(for: Int64(frames))
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
        promise.record(Int64(frames))
        startWriteBack(after: frames)
    }

    /// Every 4 MiB, asks the kernel to start writing what is in the page cache to disk, so that
    /// the disk works while the render goes on and the flush in ``close()`` has little left to wait for.
    private func startWriteBack(after frames: Int) {
        guard stream == nil || ownsDescriptor else { return }
        bytesSinceWriteBack += frames * channels * format.bytesPerSample
        if bytesSinceWriteBack >= 4 << 20 {
            bytesSinceWriteBack = 0
            WriteBack.start(descriptor)
        }
    }

    /// Writes `frames` frames of digital silence, straight from a block of zeros in the file's
    /// own sample type (no conversion). Stops early, between blocks, if the task is cancelled.
    package func writeSilence(frames: Frames) throws(AudioError) {
        guard let file else { throw AudioError(.cannotWrite, path: path, reason: "the file is already closed") }
        try promise.checkRoom(for: frames.count)
        let block = 65_536
        if zeros.count < block * channels { zeros = [Int16](repeating: 0, count: block * channels) }
        var remaining = frames.count
        while remaining > 0, !Task.isCancelled {
            let chunk = Int(min(remaining, Int64(block)))
            let written = zeros.withUnsafeBufferPointer { sf_writef_short(file, $0.baseAddress, sf_count_t(chunk)) }
            guard written == chunk else { throw failure("wrote \(written) of \(chunk) frames") }
            promise.record(Int64(chunk))
            startWriteBack(after: chunk)
            remaining -= Int64(chunk)
        }
    }

    /// Finishes the header, flushes the file to disk and closes it.
    ///
    /// For a stream: checks that exactly the promised frames were written and writes the pad
    /// byte an odd-length data chunk needs; the descriptor stays open, unless this writer created
    /// it for a WAV file, which is flushed and closed whatever happens.
    /// The corresponding libsndfile calls are `sf_write_sync` and `sf_close`.
    @discardableResult
    package func close() throws(AudioError) -> AudioEncoding {
        guard let file else { return encoding }
        if let stream {
            self.file = nil
            var closed = !ownsDescriptor
            defer { if !closed { Glibc.close(descriptor) } }
            let result = sf_close(file)
            guard result == 0 else {
                throw AudioError(.cannotWrite, path: path, SoundFileError.message(result)) { "libsndfile: \($0)" }
            }
            try promise.checkKept()
            guard stream.output.write(stream.header.trailer) else {
                throw AudioError(
                    .cannotWrite,
                    path: path,
                    reason: "cannot write the pad byte after the samples: \(stream.output.failure ?? "unknown error")"
                )
            }
            if !closed {
                // What `sf_write_sync` and `sf_close` do for a file libsndfile writes.
                closed = true
                let synced = fsync(descriptor) == 0 ? 0 : errno
                let finished = Glibc.close(descriptor) == 0 ? 0 : errno
                if synced != 0 || finished != 0 {
                    throw AudioError(
                        .cannotWrite,
                        path: path,
                        reason: String(cString: strerror(synced != 0 ? synced : finished))
                    )
                }
            }
            return encoding
        }
        try promise.checkKept()
        sf_write_sync(file)
        let synced = SoundFileError.last(file)
        self.file = nil
        let result = sf_close(file)
        guard synced.code.value == 0, result == 0 else {
            let failure = synced.code.value != 0 ? synced : SoundFileError.message(result)
            throw AudioError(.cannotWrite, path: path, failure) { "libsndfile: \($0)" }
        }
        try addChapterComments()
        return encoding
    }

    /// Adds a FLAC file's chapters as comments, now that libsndfile has closed it.
    private func addChapterComments() throws(AudioError) {
        guard !chapters.isEmpty, let rate = SampleRate(sampleRate) else { return }
        let comments = chapters.enumerated().flatMap { index, chapter in
            VorbisChapterComments.entries(index + 1, chapter, sampleRate: rate)
        }
        switch kind {
        case .wav: break
        case .flac: try FLACComments.append(comments, to: path)
        }
    }

    /// How the file is encoded, as the timeline records it.
    package var encoding: AudioEncoding { kind.encoding(format) }

    private func failure(_ what: String) -> AudioError {
        if let cause = stream?.output.failure {
            return AudioError(.cannotWrite, path: path, reason: "\(what): \(cause)")
        }
        guard let file else { return AudioError(.cannotWrite, path: path, reason: "\(what) (libsndfile: file closed)") }
        return AudioError(.cannotWrite, path: path, SoundFileError.last(file)) { "\(what) (libsndfile: \($0))" }
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
