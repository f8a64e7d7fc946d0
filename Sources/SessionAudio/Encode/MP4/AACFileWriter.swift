package import SessionTimeline

/// Writes a session as AAC-LC in MP4 (M4A, or M4B for an audiobook) with exact timing, its tags
/// and its chapters: FFmpeg's AAC encoder and our own MP4 layout (``MP4Movie``, whose index
/// costs 4 bytes a packet until the end), encoding only the spans that make sound (``SilenceSplicer``) on two cores.
///
/// **Exact length.** The session's `frameCount` frames go in after `lead` zeros, chosen so that
/// lead + frames is a whole number of 1,024-frame packets; with the encoder's own delay of 1,024,
/// the file's packets then decode to exactly delay + lead + frames frames, with no padding at the
/// end. The edit list starts the presentation at delay + lead and lasts `frameCount` frames (the
/// movie time scale is the sample rate), and `iTunSMPB` says the same for Apple's players. Since
/// nothing is to be trimmed from the end, even a reader that honours only the start (ffmpeg 5.1,
/// which trims no end) decodes exactly `frameCount` frames, each on its frame.
///
/// **Silence.** File packet `g` decodes to session frames `g × 1024 − 1024 − lead ..< …`: the
/// grid one encoder fed from the first lead zero would have. A span of sound is encoded by a
/// fresh encoder on that grid, warmed up on two packets of zeros before it whose packets are
/// dropped (``preRollPackets``), fed 3,072 zeros after its last sound, so its last packets encode
/// only zeros and the MDCT overlap never reaches a packet from elsewhere; between spans go copies
/// of a packet that the same encoder made from zeros, which decodes to zero. docs/formats.md has
/// the argument in full.
package final class AACFileWriter: AudioFileSink {
    package let path: String
    package var framesWritten: Frames { splicer.framesWritten }
    private let channels: Int
    private let frameCount: Int64
    /// The zeros before the session that make lead + frames a whole number of packets.
    private let lead: Int64
    private let totalPackets: Int64
    private let silentPacket: [UInt8]
    private let muxer: MP4Muxer
    private var splicer: SilenceSplicer<AACEncoder>!
    private let encoding: AudioEncoding
    private var closed = false

    /// How many spans were encoded and how many packets were written as silence; tests read them.
    var encodedSpanCount: Int { splicer.encodedSpanCount }
    var silentPacketCount: Int64 { splicer.silentPacketCount }

    /// Packets of zeros each span's encoder encodes, and drops, before the span. FFmpeg's encoder
    /// only buffers the first frames it is given (its delay), so without them a span's first
    /// packet, the one its onset starts in, is the first it encodes, its rate control and
    /// psychoacoustic model at their initial values: onsets after skipped silence decoded their
    /// first 20 ms up to 25 dB worse than a whole-file encode (issue 39). After two packets of
    /// silence the encoder reaches the onset in the state a whole-file encode has there; one is
    /// not enough, more change nothing. docs/formats.md has the measurements.
    static let preRollPackets = 2

    /// The average bit rate when no `bitrate` or `quality` is given: 64 kb/s a channel, what
    /// Apple's podcast guidelines ask of spoken word in AAC-LC, within what the rate can hold.
    package static func defaultBitrate(sampleRate: SampleRate, channelCount: ChannelCount) -> Int {
        min(
            64 * channelCount.count,
            EncoderSettings.aacMostBitrate(sampleRate: sampleRate.hertz, channelCount: channelCount.count)
        )
    }

    /// Creates `path` (replacing any file there) for exactly `frameCount` frames, as M4B when
    /// `settings.format` is ``AudioFileFormat/m4b``, else M4A.
    ///
    /// - Throws: ``AudioError`` with code `cannotWrite` when the file cannot be created,
    ///   `cannotEncode` when libavcodec refuses a setting.
    package init(
        path: String,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        settings: EncoderSettings,
        metadata: AudioMetadata,
        frameCount: Frames,
        reusing spans: SpanReuse? = nil
    ) throws(AudioError) {
        let size = Int64(AACEncoder.frameSize)
        let rateControl: AACEncoder.RateControl
        let bitrate: Int?
        if let quality = settings.quality {
            rateControl = .variable(quality: quality)
            bitrate = nil
        } else {
            let kilobits = settings.bitrate ?? Self.defaultBitrate(sampleRate: sampleRate, channelCount: channelCount)
            rateControl = .average(kilobits: kilobits)
            bitrate = kilobits
        }
        let (rate, channels) = (sampleRate.hertz, channelCount.count)
        let probe: AACEncoder
        let silence: [UInt8]
        do throws(AudioError) {
            // One encoder gives the stream's AudioSpecificConfig (for the esds) and the packet made
            // from zeros after zeros, which decodes to zero between spans.
            probe = try AACEncoder(sampleRate: rate, channelCount: channels, rateControl: rateControl)
            let zeros = [Float](repeating: 0, count: 3 * Int(size) * channels)
            try zeros.withUnsafeBufferPointer { (buffer) throws(AudioError) in
                try probe.encode(buffer, frames: 3 * Int(size))
            }
            try probe.flush()
            let packets = try probe.takePackets()
            guard packets.count == 4 else {
                throw AudioError(
                    .cannotEncode,
                    path: nil,
                    reason: "the AAC encoder made \(packets.count) packets of 3 frames, not 4"
                )
            }
            silence = packets[2]
        } catch {
            throw AudioError(.cannotEncode, path: path, reason: error.reason, libraryCode: error.libraryCode)
        }
        self.path = path
        self.channels = channels
        self.frameCount = frameCount.count
        lead = (size - frameCount.count % size) % size
        totalPackets = (lead + frameCount.count) / size + 1
        silentPacket = silence
        muxer = try MP4Muxer(
            path: path,
            movie: MP4Movie(
                brand: settings.format == .m4b ? .audiobook : .audio,
                sampleRate: rate,
                channelCount: channels,
                audioSpecificConfig: probe.audioSpecificConfig,
                packetCount: totalPackets,
                priming: AACEncoder.delay + lead,
                frameCount: frameCount.count,
                metadata: metadata
            )
        )
        encoding = AudioEncoding(
            container: settings.format.containerName,
            codec: "aac",
            bitrate: bitrate,
            quality: settings.quality,
            encoderDelay: Frames(AACEncoder.delay + lead),
            padding: .zero
        )
        let trailingZeros = 3 * size
        let grid = SilenceSplicer<AACEncoder>.Grid(
            frameSize: size,
            trailingZeros: trailingZeros,
            joinGap: trailingZeros + AACEncoder.delay + size,
            keptDelay: AACEncoder.delay,
            totalPackets: totalPackets,
            preRollPackets: Self.preRollPackets
        )
        splicer = SilenceSplicer(
            grid: grid,
            frameCount: frameCount,
            channels: channels,
            skipsSilence: settings.skipsSilence,
            path: path,
            threadName: "render-session AAC encoder",
            reusing: spans
        ) { () throws(AudioError) in
            try AACEncoder(sampleRate: rate, channelCount: channels, rateControl: rateControl)
        } emit: { [unowned self] (packet) throws(AudioError) in
            switch packet {
            case .encoded(let bytes): try muxer.write(bytes)
            case .silent: try muxer.write(silentPacket[...])
            }
        }
        try splicer.writeLead(frames: lead)
    }

    package func write(_ samples: [Float], frames: Int) throws(AudioError) {
        try splicer.write(samples, frames: frames)
    }

    package func writeSilence(frames: Frames) throws(AudioError) {
        try splicer.writeSilence(frames: frames)
    }

    /// Encodes what is left, writes the index, chapters and tags, records the gapless length in
    /// `iTunSMPB` and closes the file.
    ///
    /// - Throws: ``AudioError`` with code `cannotWrite` unless exactly `frameCount` frames were
    ///   written, or when the file cannot be finished.
    @discardableResult
    package func close() throws(AudioError) -> AudioEncoding {
        guard !closed else { return encoding }
        closed = true
        try splicer.finish()
        try muxer.finish()
        return encoding
    }
}
