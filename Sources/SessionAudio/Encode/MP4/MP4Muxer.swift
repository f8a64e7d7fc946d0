internal import CFFmpeg
internal import SessionTimeline

/// An MP4 file (M4A or M4B) being written by libavformat's MP4 muxer (`ipod`, the iTunes
/// flavour): one AAC track whose packets the caller gives with their time stamps, the tags, and
/// the chapters both as a QuickTime chapter track and as a Nero `chpl` atom.
///
/// Owns its `AVFormatContext`, its output and its one reusable `AVPacket`. The file is written
/// through FFmpeg's `file` protocol (the only one allowed), since moving the index to the front
/// (`faststart`, so that a player can start before the whole file is there) reopens it by name.
/// The movie time scale is the sample rate, so the edit list's length is in frames, not rounded
/// to milliseconds.
final class MP4Muxer {
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let path: String
    private var headerWritten = false

    /// The brands a file is written with.
    enum Brand: String {
        /// Audio (`M4A `).
        case audio = "M4A "
        /// An audiobook (`M4B `), which players file as a book and let resume.
        case audiobook = "M4B "
    }

    /// Creates `path` (replacing any file there) for one AAC stream encoded by `encoder`, with
    /// `metadata`'s title, album, artist and chapters, plus `comment` (the placeholder that
    /// ``MP4GaplessInfo`` fills in).
    ///
    /// The corresponding libavformat calls are `avformat_alloc_output_context2`,
    /// `avformat_new_stream`, `avcodec_parameters_from_context`, `avio_open2` and
    /// `avformat_write_header`.
    init(
        path: String,
        brand: Brand,
        sampleRate: Int,
        encoder: AACEncoder,
        metadata: AudioMetadata,
        comment: String
    ) throws(AudioError) {
        try FFmpegError.prepare(or: .cannotEncode, path: path)
        self.path = path
        let url = "file:" + path
        var context: UnsafeMutablePointer<AVFormatContext>?
        let allocated = avformat_alloc_output_context2(&context, nil, "ipod", url)
        self.context = context
        self.packet = av_packet_alloc()
        guard allocated >= 0, let context, packet != nil else {
            throw AudioError(.cannotEncode, path: path, FFmpegError.message(.libavformat, allocated)) {
                "libavformat: \($0)"
            }
        }
        guard let stream = avformat_new_stream(context, nil), let parameters = encoder.codecContext else {
            throw AudioError(.cannotEncode, path: path, reason: "libavformat cannot add a stream")
        }
        let copied = avcodec_parameters_from_context(stream.pointee.codecpar, parameters)
        guard copied >= 0 else {
            // avcodec_parameters_from_context is libavcodec's, whatever the words say.
            throw AudioError(.cannotEncode, path: path, FFmpegError.message(.libavcodec, copied)) {
                "libavformat: \($0)"
            }
        }
        stream.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
        for (key, value) in [("title", metadata.title), ("album", metadata.album), ("artist", metadata.artist)] {
            if let value, !value.isEmpty { av_dict_set(&context.pointee.metadata, key, value, 0) }
        }
        av_dict_set(&context.pointee.metadata, "comment", comment, 0)
        try addChapters(metadata.chapters, sampleRate: sampleRate)

        var openOptions: OpaquePointer?
        av_dict_set(&openOptions, "protocol_whitelist", "file", 0)
        let opened = avio_open2(&context.pointee.pb, url, AVIO_FLAG_WRITE, nil, &openOptions)
        av_dict_free(&openOptions)
        guard opened >= 0 else {
            throw AudioError(.cannotWrite, path: path, FFmpegError.text(.libavformat, opened))
        }
        // faststart's second pass reopens the file through the context: by the same protocol only.
        context.pointee.protocol_whitelist = av_strdup("file")

        var options: OpaquePointer?
        av_dict_set(&options, "movflags", "+faststart", 0)
        av_dict_set(&options, "movie_timescale", String(sampleRate), 0)
        av_dict_set(&options, "use_editlist", "1", 0)
        av_dict_set(&options, "brand", brand.rawValue, 0)
        let written = avformat_write_header(context, &options)
        av_dict_free(&options)
        guard written >= 0 else {
            throw AudioError(.cannotWrite, path: path, FFmpegError.text(.libavformat, written)) {
                "cannot write the MP4 header: \($0)"
            }
        }
        headerWritten = true
        let base = stream.pointee.time_base
        guard base.num == 1, base.den == Int32(sampleRate) else {
            throw AudioError(
                .cannotEncode,
                path: path,
                reason: "libavformat keeps the track's time in 1/\(base.den) s, not in frames"
            )
        }
    }

    deinit {
        if let context {
            if context.pointee.pb != nil { avio_closep(&context.pointee.pb) }
            avformat_free_context(context)
        }
        av_packet_free(&packet)
    }

    /// Puts the chapters on the context, in frames: libavformat has no public call that adds one,
    /// so they are allocated as `ffmpeg` itself does, and `avformat_free_context` frees them.
    private func addChapters(_ chapters: [AudioChapter], sampleRate: Int) throws(AudioError) {
        guard let context, !chapters.isEmpty else { return }
        let size = MemoryLayout<UnsafeMutablePointer<AVChapter>?>.stride
        guard let list = av_calloc(chapters.count, size) else {
            throw AudioError(.cannotEncode, path: path, reason: "libavutil cannot allocate \(chapters.count) chapters")
        }
        let entries = list.bindMemory(to: UnsafeMutablePointer<AVChapter>?.self, capacity: chapters.count)
        context.pointee.chapters = entries
        for (index, chapter) in chapters.enumerated() {
            guard let raw = av_mallocz(MemoryLayout<AVChapter>.stride) else {
                throw AudioError(.cannotEncode, path: path, reason: "libavutil cannot allocate a chapter")
            }
            let entry = raw.bindMemory(to: AVChapter.self, capacity: 1)
            entry.pointee.id = Int64(index + 1)
            entry.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
            entry.pointee.start = chapter.startFrame.count
            entry.pointee.end = chapter.endFrame.count
            av_dict_set(&entry.pointee.metadata, "title", chapter.title, 0)
            entries[index] = entry
            context.pointee.nb_chapters = UInt32(index + 1)
        }
    }

    /// Writes one AAC packet that decodes from `time` for `duration` frames (time stamps in frames
    /// of the encoder's output: the first packets' are negative, before the edit list's start).
    /// The corresponding libavformat call is `av_write_frame`.
    func write(_ bytes: ArraySlice<UInt8>, time: Int64, duration: Int64) throws(AudioError) {
        guard let context, let packet else { throw closed }
        let made = av_new_packet(packet, Int32(bytes.count))
        guard made >= 0 else {
            throw AudioError(.cannotEncode, path: path, FFmpegError.message(.libavcodec, made)) { "libavcodec: \($0)" }
        }
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress {
                packet.pointee.data.update(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            }
        }
        packet.pointee.pts = time
        packet.pointee.dts = time
        packet.pointee.duration = duration
        packet.pointee.stream_index = 0
        packet.pointee.flags = AV_PKT_FLAG_KEY
        let written = av_write_frame(context, packet)
        av_packet_unref(packet)
        guard written >= 0 else {
            throw AudioError(.cannotWrite, path: path, FFmpegError.text(.libavformat, written))
        }
    }

    /// Writes the index (moved to the front), the chapter track and the tags, and closes the file.
    /// The corresponding libavformat calls are `av_write_trailer` and `avio_closep`.
    func finish() throws(AudioError) {
        guard let context else { throw closed }
        let trailer = av_write_trailer(context)
        let closedResult = avio_closep(&context.pointee.pb)
        avformat_free_context(context)
        self.context = nil
        guard trailer >= 0 else {
            throw AudioError(.cannotWrite, path: path, FFmpegError.text(.libavformat, trailer)) {
                "cannot finish the MP4 file: \($0)"
            }
        }
        guard closedResult >= 0 else {
            throw AudioError(.cannotWrite, path: path, FFmpegError.text(.libavformat, closedResult))
        }
    }

    private var closed: AudioError { AudioError(.cannotWrite, path: path, reason: "the file is already closed") }
}
