internal import CFFmpeg

#if canImport(Glibc)
import Glibc
#endif

/// Decodes AAC and ALAC in MP4 (M4A, M4B, MOV), AAC in CAF and raw ADTS AAC to 32-bit float
/// frames with libavformat and libavcodec: what libsndfile and libmpg123 cannot read.
///
/// The file is read from the descriptor ``AudioFileDecoder`` opened, through a custom
/// `AVIOContext`: libavformat opens nothing itself (no protocol, no file an MP4's data reference
/// names), and only the one demuxer the content was detected as (``MediaContainer``) may read it,
/// so hostile bytes reach no other demuxer. Only the AAC and ALAC decoders are opened.
///
/// Gapless: libavformat's `mov` demuxer turns an edit list's start (and iTunSMPB's priming) into
/// samples the decoder skips; FFmpeg 5.1 does not trim the end, so the decoder stops at the
/// length the track declares (its duration, from the edit list when there is one). In CAF the
/// packet table's priming frames are skipped here and its valid frames are the most decoded (a
/// table may count ALAC's short last packet as whole: ffmpeg's does). An MP4 stream that ends short
/// of its declared length, and a CAF stream with fewer packets than its table, are cut short.
///
/// The decoder owns its `AVFormatContext`, `AVIOContext`, `AVCodecContext`, `AVPacket` and
/// `AVFrame` and frees them in `deinit`.
final class MediaFileDecoder {
    private let file: BufferedFile
    private var io: UnsafeMutablePointer<AVIOContext>?
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var streamIndex: Int32 = -1
    private let container: MediaContainer
    private let layout: ContainerLayout
    let path: String
    /// The sample rate of the decoded audio (for HE-AAC, twice the core's).
    private(set) var sampleRate = 0
    /// The channel count of the decoded audio.
    private(set) var channelCount = 0
    /// Whether the container said how many of the encoder's frames to skip at the start (an edit
    /// list, iTunSMPB, CAF's packet table), and they were skipped.
    private(set) var gapless = false
    /// The frames the container declares the stream to hold, once known; `nil` when it declares
    /// none (ADTS, or a track without a duration). No more are delivered.
    private(set) var declaredFrameCount: Int64?
    /// Whether the stream must deliver all of ``declaredFrameCount`` (MP4) or only as many
    /// packets as its table declares (CAF).
    private var countsFrames = false
    /// The packets of the stream read in full.
    private var packetsRead: Int64 = 0
    /// Frames still to be skipped at the start (CAF's priming, which libavformat 59 leaves in).
    private var framesToSkip: Int64 = 0
    /// The last decoded frame, interleaved, and how many of its frames have been handed out.
    private var pending: [Float] = []
    private var pendingFrames = 0
    private var pendingOffset = 0
    /// Whether the first packet was read (the start trim and declared length are known).
    private var startKnown = false
    private var draining = false
    private var finished = false
    /// The frames ``read(into:maximumFrames:)`` has delivered so far.
    private var framesDelivered: Int64 = 0

    /// Opens the file and decodes its first frame, which tells the sample rate and channel count.
    ///
    /// The corresponding libavformat and libavcodec calls are `avio_alloc_context`,
    /// `avformat_open_input`, `av_find_best_stream`, `avcodec_parameters_to_context` and
    /// `avcodec_open2`. `descriptor` is the open file, which the decoder owns from now on
    /// (closed on failure too); `path` names it in errors.
    init(descriptor: Int32, path: String, container: MediaContainer) throws(AudioError) {
        do {
            try FFmpegError.prepare(or: .cannotDecode, path: path)
        } catch {
            close(descriptor)
            throw error
        }
        guard let file = BufferedFile(descriptor: descriptor) else {
            throw AudioError(.cannotOpen, path: path, reason: String(cString: strerror(errno)))
        }
        self.file = file
        self.path = path
        self.container = container
        layout = ContainerLayout(container, size: file.size) { file.bytes(at: $0, count: $1) }
        if let cut = layout.cutBox {
            throw AudioError(
                .truncated,
                path: path,
                reason:
                    "the file is cut short: its \(cut.type) \(container == .caf ? "chunk" : "box") declares \(cut.declared) bytes, the file holds \(cut.held) of them"
            )
        }
        if layout.compressedMovie {
            throw AudioError(
                .unsupportedFormat,
                path: path,
                reason:
                    "its movie box is compressed (cmov), which is refused: inflating it can cost a thousand times the file"
            )
        }
        if let table = layout.packetTable, table.packets > ContainerLayout.maximumCAFPackets {
            throw AudioError(
                .unsupportedFormat,
                path: path,
                reason:
                    "its packet table lists \(table.packets) packets, more than the \(ContainerLayout.maximumCAFPackets) (over 24 hours of 48 kHz AAC) that are read"
            )
        }
        streamIndex = try Self.open(
            file,
            container: container,
            path: path,
            io: &io,
            format: &format
        )
        try openCodec()
        guard try decodeFrame() else {
            throw AudioError(.noAudio, path: path, reason: "the file decodes to no audio frames")
        }
    }

    deinit {
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&codec)
        avformat_close_input(&format)
        if io != nil { av_freep(&io!.pointee.buffer) }
        avio_context_free(&io)
    }

    /// Opens `file` as `container` through a custom `AVIOContext`, with nothing but that
    /// container's demuxer allowed; returns the index of its audio stream, every other stream
    /// discarded.
    private static func open(
        _ file: BufferedFile,
        container: MediaContainer,
        path: String,
        io: inout UnsafeMutablePointer<AVIOContext>?,
        format: inout UnsafeMutablePointer<AVFormatContext>?
    ) throws(AudioError) -> Int32 {
        let bufferSize: Int32 = 1 << 16
        guard let buffer = av_malloc(Int(bufferSize)),
            let context = avio_alloc_context(
                buffer.assumingMemoryBound(to: UInt8.self),
                bufferSize,
                0,
                Unmanaged.passUnretained(file).toOpaque(),
                readFile,
                nil,
                seekFile
            )
        else {
            throw AudioError(.cannotOpen, path: path, reason: "libavformat: cannot allocate its reader")
        }
        io = context
        guard let demuxer = av_find_input_format(container.demuxer), let allocated = avformat_alloc_context() else {
            throw AudioError(.cannotOpen, path: path, reason: "libavformat has no \(container.demuxer) demuxer")
        }
        allocated.pointee.pb = context
        allocated.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        // Nothing is opened by name: an MP4's data references and any nested URL are refused.
        allocated.pointee.io_open = { _, _, _, _, _ in -EPERM }
        var options: OpaquePointer?
        av_dict_set(&options, "format_whitelist", container.demuxer, 0)
        av_dict_set(&options, "protocol_whitelist", "none", 0)
        av_dict_set(&options, "codec_whitelist", container.codecNames.joined(separator: ","), 0)
        format = allocated
        let result = avformat_open_input(&format, nil, demuxer, &options)
        av_dict_free(&options)
        guard result == 0, let opened = format else {
            // avformat_open_input frees the context when it fails.
            format = nil
            throw AudioError(.cannotOpen, path: path, FFmpegError.message(.libavformat, result)) {
                "it starts as \(container.formatName) but libavformat cannot read it: \($0)"
            }
        }
        // The first audio stream (ADTS's rate and channels are unknown until a frame is decoded,
        // which av_find_best_stream does not choose).
        let streams = (0..<Int(opened.pointee.nb_streams)).map { opened.pointee.streams[$0]! }
        guard let index = streams.firstIndex(where: { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO })
        else {
            throw AudioError(.noAudio, path: path, reason: "the \(container.formatName) file holds no audio stream")
        }
        for (other, stream) in streams.enumerated() where other != index { stream.pointee.discard = AVDISCARD_ALL }
        return Int32(index)
    }

    /// The audio stream being decoded.
    private var stream: UnsafeMutablePointer<AVStream> {
        format!.pointee.streams[Int(streamIndex)]!
    }

    /// Opens the decoder of the stream's codec, refusing codecs not among the container's
    /// ``MediaContainer/codecNames`` and, before any decoding, channel counts and rates out of
    /// range. Decoding errors are not concealed.
    private func openCodec() throws(AudioError) {
        let parameters = stream.pointee.codecpar!
        let codecID = parameters.pointee.codec_id
        let codecName = String(cString: avcodec_get_name(codecID))
        guard container.codecNames.contains(codecName) else {
            throw AudioError(
                .unsupportedFormat,
                path: path,
                reason: "the \(container.formatName) file holds \(codecName) audio; only \(container.codecsRead) read"
            )
        }
        // ADTS declares its rate and channels in each frame: 0 here until one is decoded.
        let declaredChannels = Int(parameters.pointee.ch_layout.nb_channels)
        let declaredRate = Int(parameters.pointee.sample_rate)
        if declaredChannels != 0 || declaredRate != 0 {
            _ = try AudioFileDecoder.checkedFormat(rate: declaredRate, channels: declaredChannels, path: path)
        }
        guard let decoder = avcodec_find_decoder(codecID), let context = avcodec_alloc_context3(decoder),
            let packet = av_packet_alloc(), let frame = av_frame_alloc()
        else {
            throw AudioError(.cannotOpen, path: path, reason: "libavcodec: cannot allocate its decoder")
        }
        codec = context
        self.packet = packet
        self.frame = frame
        var result = avcodec_parameters_to_context(context, parameters)
        if result >= 0 {
            context.pointee.pkt_timebase = stream.pointee.time_base
            context.pointee.err_recognition |= AV_EF_EXPLODE | AV_EF_BITSTREAM | AV_EF_BUFFER
            result = avcodec_open2(context, decoder, nil)
        }
        guard result >= 0 else {
            throw AudioError(.cannotOpen, path: path, FFmpegError.message(.libavcodec, result)) { "libavcodec: \($0)" }
        }
    }

    /// Decodes up to `maximumFrames` frames into `samples` (interleaved, from index 0).
    ///
    /// Returns the number of frames decoded; 0 only at the end, which is the length the
    /// container declares when it declares one. A stream that ends short of it is an error.
    /// The corresponding libavformat and libavcodec calls are `av_read_frame`,
    /// `avcodec_send_packet` and `avcodec_receive_frame`.
    func read(into samples: inout [Float], maximumFrames: Int) throws(AudioError) -> Int {
        let wanted = maximumFrames * channelCount
        if samples.count < wanted { samples = [Float](repeating: 0, count: wanted) }
        var delivered = 0
        while delivered < maximumFrames {
            if pendingOffset == pendingFrames {
                guard try decodeFrame() else { break }
                continue
            }
            var count = min(maximumFrames - delivered, pendingFrames - pendingOffset)
            if let declared = declaredFrameCount {
                count = Int(max(0, min(Int64(count), declared - framesDelivered - Int64(delivered))))
                if count == 0 {
                    finished = true
                    break
                }
            }
            let channels = channelCount
            samples.withUnsafeMutableBufferPointer { target in
                pending.withUnsafeBufferPointer { source in
                    let from = source.baseAddress! + pendingOffset * channels
                    (target.baseAddress! + delivered * channels).update(from: from, count: count * channels)
                }
            }
            pendingOffset += count
            delivered += count
        }
        framesDelivered += Int64(delivered)
        if delivered == 0 { try checkComplete() }
        return delivered
    }

    /// At the end: throws if the stream held less than its container declares, in frames (MP4)
    /// or in packets (CAF's packet table).
    private func checkComplete() throws(AudioError) {
        if countsFrames, let declared = declaredFrameCount, framesDelivered < declared {
            throw AudioError(
                .truncated,
                path: path,
                reason:
                    "the file is cut short: its \(container.formatName) header declares \(declared) frames, it holds \(framesDelivered)"
            )
        }
        if container == .caf, let table = layout.packetTable, packetsRead < table.packets {
            throw AudioError(
                .truncated,
                path: path,
                reason:
                    "the file is cut short: its CAF packet table declares \(table.packets) packets, it holds \(packetsRead)"
            )
        }
    }

    /// Decodes the next frame into ``pending``; `false` at the end of the stream (or of the
    /// declared length).
    private func decodeFrame() throws(AudioError) -> Bool {
        guard !finished, let codec, let frame, let packet else { return false }
        while true {
            let received = avcodec_receive_frame(codec, frame)
            if received == 0 {
                defer { av_frame_unref(frame) }
                if try keep(frame) { return true }
                continue
            }
            if received == cffmpeg_error_eof() {
                finished = true
                return false
            }
            guard received == cffmpeg_error_again(), !draining else {
                throw AudioError(.cannotDecode, path: path, FFmpegError.message(.libavcodec, received)) {
                    "libavcodec: \($0)"
                }
            }
            let read = av_read_frame(format, packet)
            if read == cffmpeg_error_eof() {
                draining = true
                avcodec_send_packet(codec, nil)
                continue
            }
            guard read >= 0 else {
                throw AudioError(.cannotDecode, path: path, FFmpegError.message(.libavformat, read)) {
                    "libavformat: \($0)"
                }
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            // libavformat marks a packet it could not read in full: the file ends inside it.
            if packet.pointee.flags & AV_PKT_FLAG_CORRUPT != 0 {
                guard declaredFrameCount != nil else {
                    throw AudioError(
                        .truncated,
                        path: path,
                        reason:
                            "the file is cut short: its \(container.formatName) packet at byte \(packet.pointee.pos) runs past its end"
                    )
                }
                // The end of the stream: the frames it held are counted against the declared length.
                draining = true
                avcodec_send_packet(codec, nil)
                continue
            }
            if !startKnown { try learnStart(from: packet) }
            packetsRead += 1
            let sent = avcodec_send_packet(codec, packet)
            guard sent >= 0 else {
                if let declared = Self.cutADTSFrame(packet) {
                    throw AudioError(
                        .truncated,
                        path: path,
                        reason:
                            "the file is cut short: its last ADTS frame declares \(declared) bytes, the file holds \(packet.pointee.size) of them"
                    )
                }
                throw AudioError(.cannotDecode, path: path, FFmpegError.message(.libavcodec, sent)) {
                    "libavcodec: \($0)"
                }
            }
        }
    }

    /// The bytes `packet`'s ADTS header declares when the packet holds fewer (the file ends inside
    /// the frame: the ADTS parser hands over what is left); `nil` otherwise.
    private static func cutADTSFrame(_ packet: UnsafeMutablePointer<AVPacket>) -> Int? {
        let size = Int(packet.pointee.size)
        guard size >= 7, let data = packet.pointee.data, data[0] == 0xFF, data[1] & 0xF6 == 0xF0 else { return nil }
        let declared = Int(data[3] & 3) << 11 | Int(data[4]) << 3 | Int(data[5]) >> 5
        return declared > size ? declared : nil
    }

    /// From the first packet: how many frames the decoder skips at the start, whether the file
    /// is gapless, and the length it declares, in frames at the stream's own rate (checked
    /// against the decoded rate once a frame is decoded).
    private func learnStart(from packet: UnsafeMutablePointer<AVPacket>) throws(AudioError) {
        startKnown = true
        var size = 0
        var skip: Int64 = 0
        if let data = av_packet_get_side_data(packet, AV_PKT_DATA_SKIP_SAMPLES, &size), size >= 4 {
            skip = Int64(UInt32(data[0]) | UInt32(data[1]) << 8 | UInt32(data[2]) << 16 | UInt32(data[3]) << 24)
        }
        let iTunes = container == .mp4 && !layout.hasEditList ? iTunesGapless : nil
        switch container {
        case .mp4 where iTunes != nil:
            // An iTunes-era file, gapless by iTunSMPB alone: libavformat 5.1 skips its priming
            // in some files and not in others (not in ours with the edit list made a free box),
            // never trims the padding, and counts both in the track's duration.
            guard let (priming, frames) = iTunes else { return }
            declaredFrameCount = frames
            framesToSkip = skip > 0 ? 0 : priming
            countsFrames = true
            gapless = true
        case .mp4:
            gapless = skip > 0
            let none = cffmpeg_no_timestamp()
            let duration = stream.pointee.duration
            guard duration != none, duration > 0 else { return }
            let firstTimestamp = packet.pointee.pts == none ? 0 : packet.pointee.pts
            let start = stream.pointee.start_time == none ? firstTimestamp : stream.pointee.start_time
            // The track's end, less where the first packet starts, in the stream's time base; then frames.
            let (end, overflowEnd) = start.addingReportingOverflow(duration)
            let (span, overflowSpan) = end.subtractingReportingOverflow(firstTimestamp)
            let timeBase = stream.pointee.time_base
            guard !overflowEnd, !overflowSpan, span > 0, timeBase.num > 0, timeBase.den > 0,
                let rate = Int32(exactly: stream.pointee.codecpar.pointee.sample_rate), rate > 0
            else {
                throw AudioError(
                    .cannotDecode,
                    path: path,
                    reason:
                        "its MP4 header declares an impossible length (duration \(duration), start \(start), time base \(timeBase.num)/\(timeBase.den))"
                )
            }
            let frames = av_rescale_q(span, timeBase, AVRational(num: 1, den: rate))
            declaredFrameCount = max(0, frames - skip)
            countsFrames = true
        case .caf:
            if let table = layout.packetTable, table.validFrames > 0 {
                declaredFrameCount = table.validFrames
                framesToSkip = skip > 0 ? 0 : max(0, table.primingFrames)
                gapless = true
            }
        case .adts:
            break
        case .oggOpus:
            // The header's pre-skip, which the decoder skips; the last page's granule position
            // trims the end.
            gapless = skip > 0
        }
    }

    /// The encoder's priming and the stream's frame count an MP4's `iTunSMPB` records; `nil`
    /// without one, or with one that does not parse (``iTunesGapless(_:)``).
    /// The corresponding libavutil call is `av_dict_get`.
    private var iTunesGapless: (priming: Int64, frames: Int64)? {
        guard let metadata = format?.pointee.metadata, let entry = av_dict_get(metadata, "iTunSMPB", nil, 0),
            let value = entry.pointee.value
        else { return nil }
        return Self.iTunesGapless(String(cString: value))
    }

    /// The priming and frame count in `iTunSMPB`'s text: ` 00000000 PPPPPPPP QQQQQQQQ
    /// CCCCCCCCCCCCCCCC …`, hexadecimal: a reserved field, the priming, the padding and the
    /// frame count. `nil` unless the count is positive and the priming under 65,536 frames.
    static func iTunesGapless(_ text: String) -> (priming: Int64, frames: Int64)? {
        let fields = text.split(separator: " ")
        guard fields.count >= 4, let priming = Int64(fields[1], radix: 16), let frames = Int64(fields[3], radix: 16),
            (0..<65_536).contains(priming), frames > 0
        else { return nil }
        return (priming, frames)
    }

    /// Converts `frame` into ``pending``, after the frames still to skip; `false` when nothing
    /// of it is left. The first frame sets the rate and channel count; a later one that differs
    /// is an error, as is a frame the decoder marks damaged.
    private func keep(_ frame: UnsafeMutablePointer<AVFrame>) throws(AudioError) -> Bool {
        let rate = Int(frame.pointee.sample_rate)
        let channels = Int(frame.pointee.ch_layout.nb_channels)
        if channelCount == 0 {
            _ = try AudioFileDecoder.checkedFormat(rate: rate, channels: channels, path: path)
            (sampleRate, channelCount) = (rate, channels)
            let declaredRate = Int(stream.pointee.codecpar.pointee.sample_rate)
            if let declared = declaredFrameCount, declaredRate > 0, declaredRate != rate {
                // HE-AAC: the track counts at the core's rate, the decoder delivers twice as many.
                // av_rescale computes in 128 bits (INT64_MIN when the result does not fit).
                declaredFrameCount = max(0, av_rescale(declared, Int64(rate), Int64(declaredRate)))
            }
        } else if rate != sampleRate || channels != channelCount {
            throw AudioError(
                .formatChanged,
                path: path,
                reason:
                    "the stream changes from \(sampleRate) Hz \(channelCount) ch to \(rate) Hz \(channels) ch part of the way through"
            )
        }
        if frame.pointee.decode_error_flags != 0 || frame.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0 {
            throw AudioError(.cannotDecode, path: path, reason: "libavcodec: a frame decodes damaged")
        }
        let frames = Int(frame.pointee.nb_samples)
        let skipped = Int(min(framesToSkip, Int64(frames)))
        framesToSkip -= Int64(skipped)
        guard frames > skipped else { return false }
        try convert(frame, frames: frames, from: skipped)
        return true
    }

    /// Copies `frame`'s samples from frame `first` on into ``pending``, interleaved floats,
    /// whatever the decoder's sample format.
    private func convert(_ frame: UnsafeMutablePointer<AVFrame>, frames: Int, from first: Int) throws(AudioError) {
        let channels = channelCount
        let count = (frames - first) * channels
        if pending.count < count { pending = [Float](repeating: 0, count: count) }
        guard let planes = frame.pointee.extended_data else {
            throw AudioError(.cannotDecode, path: path, reason: "libavcodec: a frame has no samples")
        }
        let format = AVSampleFormat(rawValue: frame.pointee.format)
        let planar = av_sample_fmt_is_planar(format) != 0
        // Where sample `index` of channel `channel` is: its plane and its place in it.
        func locate(_ index: Int, _ channel: Int) -> (plane: Int, offset: Int) {
            planar ? (channel, index) : (0, index * channels + channel)
        }
        func copy<Sample>(_: Sample.Type, _ value: (Sample) -> Float) {
            pending.withUnsafeMutableBufferPointer { target in
                for channel in 0..<channels {
                    for index in first..<frames {
                        let (plane, offset) = locate(index, channel)
                        let source = UnsafeRawPointer(planes[plane]!).assumingMemoryBound(to: Sample.self)
                        target[(index - first) * channels + channel] = value(source[offset])
                    }
                }
            }
        }
        switch format {
        case AV_SAMPLE_FMT_FLT, AV_SAMPLE_FMT_FLTP: copy(Float.self) { $0 }
        case AV_SAMPLE_FMT_DBL, AV_SAMPLE_FMT_DBLP: copy(Double.self) { Float($0) }
        case AV_SAMPLE_FMT_S16, AV_SAMPLE_FMT_S16P: copy(Int16.self) { Float($0) / 32_768 }
        case AV_SAMPLE_FMT_S32, AV_SAMPLE_FMT_S32P: copy(Int32.self) { Float(Double($0) / 2_147_483_648) }
        default:
            let name = av_get_sample_fmt_name(format).map { String(cString: $0) } ?? "\(frame.pointee.format)"
            throw AudioError(.unsupportedFormat, path: path, reason: "libavcodec decodes it to samples of \(name)")
        }
        pendingFrames = frames - first
        pendingOffset = 0
    }
}

/// libavformat's read callback over a `BufferedFile`: the bytes read, or `AVERROR_EOF` at the end.
private func readFile(
    _ opaque: UnsafeMutableRawPointer?,
    _ target: UnsafeMutablePointer<UInt8>?,
    _ count: Int32
) -> Int32 {
    guard let opaque, let target, count > 0 else { return -EINVAL }
    let read = Unmanaged<BufferedFile>.fromOpaque(opaque).takeUnretainedValue().read(into: target, count: Int(count))
    if read < 0 { return -EIO }
    return read == 0 ? cffmpeg_error_eof() : Int32(read)
}

/// libavformat's seek callback over a `BufferedFile`; `AVSEEK_SIZE` asks for the file's size.
private func seekFile(_ opaque: UnsafeMutableRawPointer?, _ offset: Int64, _ whence: Int32) -> Int64 {
    guard let opaque else { return Int64(-EINVAL) }
    let file = Unmanaged<BufferedFile>.fromOpaque(opaque).takeUnretainedValue()
    if whence & AVSEEK_SIZE != 0 { return file.size }
    let position = file.seek(offset: offset, whence: whence & ~AVSEEK_FORCE)
    return position < 0 ? Int64(-EINVAL) : position
}
