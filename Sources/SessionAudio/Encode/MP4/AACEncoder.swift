internal import CFFmpeg

/// Encodes PCM to AAC-LC with FFmpeg's own encoder (libavcodec's `aac`), 1,024 frames a packet.
///
/// Owns its `AVCodecContext`, the `AVFrame` samples go in through and the `AVPacket` they come
/// out in, and frees them in `deinit`. Frames are buffered until a packet's worth is there; the
/// last, short one is padded with zeros on ``flush()``. The encoder delays its output by
/// ``delay`` (1,024) frames: its first packet holds only what came before the first input frame.
final class AACEncoder: SpanEncoder {
    /// How bits are spent.
    enum RateControl: Equatable {
        /// An average bit rate in kb/s, which the encoder's rate control holds over the stream.
        case average(kilobits: Int)
        /// FFmpeg's variable quality, `-q:a` 0.1 … 2.
        case variable(quality: Double)
    }

    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let channels: Int
    /// Frames buffered in `frame`, not yet sent.
    private var buffered = 0
    /// Frames sent so far: the next frame's time stamp.
    private var sent: Int64 = 0
    private var packets: [[UInt8]] = []
    private var flushed = false

    /// Frames in every packet.
    static let frameSize = 1_024
    /// The frames before the first input frame that the encoder puts in front: one packet's.
    static let delay: Int64 = 1_024

    /// The corresponding libavcodec calls are `avcodec_find_encoder_by_name("aac")`,
    /// `avcodec_alloc_context3` and `avcodec_open2`.
    init(sampleRate: Int, channelCount: Int, rateControl: RateControl) throws(AudioError) {
        try FFmpegError.prepare(or: .cannotEncode)
        guard let codec = avcodec_find_encoder_by_name("aac") else {
            throw AudioError(.cannotEncode, path: nil, reason: "this libavcodec has no AAC encoder")
        }
        // Each handle is kept as soon as it is made, so that deinit frees it if a later one fails.
        context = avcodec_alloc_context3(codec)
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        channels = channelCount
        guard let context, frame != nil, packet != nil else {
            throw AudioError(.cannotEncode, path: nil, reason: "libavcodec cannot allocate an AAC encoder")
        }
        context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        context.pointee.sample_rate = Int32(sampleRate)
        context.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
        av_channel_layout_default(&context.pointee.ch_layout, Int32(channelCount))
        context.pointee.profile = FF_PROFILE_AAC_LOW
        // The AudioSpecificConfig goes in the MP4's `esds`, not in front of every packet.
        context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        switch rateControl {
        case .average(let kilobits):
            context.pointee.bit_rate = Int64(kilobits) * 1_000
        case .variable(let quality):
            context.pointee.flags |= AV_CODEC_FLAG_QSCALE
            context.pointee.global_quality = Int32((quality * Double(FF_QP2LAMBDA)).rounded())
        }
        let opened = avcodec_open2(context, codec, nil)
        guard opened >= 0 else {
            throw AudioError(.cannotEncode, path: nil, FFmpegError.message(.libavcodec, opened)) {
                "libavcodec's AAC encoder refuses \(sampleRate) Hz, \(channelCount) ch, \(rateControl): \($0)"
            }
        }
        guard context.pointee.frame_size == Int32(Self.frameSize) else {
            throw AudioError(
                .cannotEncode,
                path: nil,
                reason:
                    "libavcodec's AAC encoder takes \(context.pointee.frame_size) frames a packet, not \(Self.frameSize)"
            )
        }
        try prepareFrame()
    }

    deinit {
        avcodec_free_context(&context)
        av_frame_free(&frame)
        av_packet_free(&packet)
    }

    /// The AudioSpecificConfig (ISO 14496-3) the packets are decoded with, for the MP4's `esds`.
    var audioSpecificConfig: [UInt8] {
        guard let context, let data = context.pointee.extradata else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(context.pointee.extradata_size)))
    }

    func encode(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(AudioError) {
        guard let frame else { throw Self.closed }
        var done = 0
        while done < frames {
            let chunk = min(frames - done, Self.frameSize - buffered)
            for channel in 0..<channels {
                let plane = UnsafeMutableRawPointer(frame.pointee.extended_data[channel]!)
                    .assumingMemoryBound(to: Float.self)
                var source = (done * channels) + channel
                for index in buffered..<(buffered + chunk) {
                    plane[index] = samples[source]
                    source += channels
                }
            }
            buffered += chunk
            done += chunk
            if buffered == Self.frameSize { try sendFrame() }
        }
    }

    func flush() throws(AudioError) {
        guard !flushed else { return }
        if buffered > 0 { try sendFrame() }
        flushed = true
        try send(nil)
    }

    func takePackets() throws(AudioError) -> [[UInt8]] {
        let taken = packets
        packets.removeAll()
        return taken
    }

    /// Makes `frame` writable for the next packet's samples.
    private func prepareFrame() throws(AudioError) {
        guard let frame, let context else { throw Self.closed }
        av_frame_unref(frame)
        frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointee.sample_rate = context.pointee.sample_rate
        frame.pointee.nb_samples = Int32(Self.frameSize)
        var result = av_channel_layout_copy(&frame.pointee.ch_layout, &context.pointee.ch_layout)
        if result >= 0 { result = av_frame_get_buffer(frame, 0) }
        guard result >= 0 else {
            throw AudioError(
                .cannotEncode,
                path: nil,
                reason: "libavutil cannot allocate an audio frame",
                libraryCode: AudioError.LibraryCode(.libavutil, result)
            )
        }
    }

    /// Sends the buffered frames (a short last packet as it is: the encoder pads it).
    private func sendFrame() throws(AudioError) {
        guard let frame else { throw Self.closed }
        frame.pointee.nb_samples = Int32(buffered)
        frame.pointee.pts = sent
        sent += Int64(buffered)
        try send(frame)
        buffered = 0
        try prepareFrame()
    }

    /// Sends `frame` (`nil` ends the stream) and collects every packet the encoder has ready.
    /// The corresponding libavcodec calls are `avcodec_send_frame` and `avcodec_receive_packet`.
    private func send(_ frame: UnsafeMutablePointer<AVFrame>?) throws(AudioError) {
        guard let context, let packet else { throw Self.closed }
        let result = avcodec_send_frame(context, frame)
        guard result >= 0 else {
            throw AudioError(.cannotEncode, path: nil, FFmpegError.message(.libavcodec, result)) {
                "libavcodec's AAC encoder: \($0)"
            }
        }
        while true {
            let received = avcodec_receive_packet(context, packet)
            if received == cffmpeg_error_again() || received == cffmpeg_error_eof() { return }
            guard received >= 0 else {
                throw AudioError(.cannotEncode, path: nil, FFmpegError.message(.libavcodec, received)) {
                    "libavcodec's AAC encoder: \($0)"
                }
            }
            packets.append(Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size))))
            av_packet_unref(packet)
        }
    }

    private static var closed: AudioError {
        AudioError(.cannotEncode, path: nil, reason: "the AAC encoder is already closed")
    }
}
