internal import COpus
package import SessionTimeline

/// Writes a session as Ogg Opus at 48 kHz, with its tags and chapters, through libopus and
/// libogg (``OpusEncoder``).
///
/// Timing is exact: the header's pre-skip (the encoder's lookahead, 312 frames) and the last
/// page's granule position make a decoder drop what the encoder added before and after, so the
/// file decodes to exactly `frameCount` frames that line up with the input frame for frame.
/// ``close()`` fails unless exactly `frameCount` frames were written, and a write past them fails
/// at once. Memory stays the same however long the session: the encoder keeps one packet's
/// frames and at most a second of pages before writing them.
///
/// The settings (``EncoderSettings``):
/// - `bitrate`: hard CBR at that many kb/s (`OPUS_SET_VBR(0)`): every 20 ms packet the same size.
/// - `quality`: unconstrained VBR aiming at that many kb/s on average, as `opusenc --vbr` does.
/// - neither: unconstrained VBR at ``defaultBitrate(channelCount:)``.
package final class OpusFileWriter: AudioFileSink {
    package let path: String
    package var framesWritten: Frames { Frames(promise.written) }
    /// The frames the file is for.
    package let frameCount: Frames
    private let encoder: OpusEncoder
    private let channels: Int
    private var promise: FramePromise
    /// The header's pre-skip, read when the header went out.
    private let preSkip: Int64
    private let encoding: AudioEncoding
    /// A block of zeros for ``writeSilence(frames:)``, made once.
    private let zeros: [Float]
    private static let silenceBlock = 4_800

    /// The speed/quality trade-off, 0 (fastest) … 10 (libopus's default): 6, the most libopus
    /// does without its speech/music analysis.
    ///
    /// From 7 up libopus runs a tonality analysis on every frame; on the ten-minute fixture
    /// session (mono, 24 kb/s VBR) that took 8–15 s against 1.3–2.4 s at 0–6, on a loaded
    /// two-core machine (docs/performance.md, "Opus", has the table). 5 and 6 wrote byte-identical files there.
    static let complexity: Int32 = 6

    /// The VBR target when no `bitrate` or `quality` is given: 24 kb/s per channel.
    ///
    /// At 24 kb/s libopus codes mono speech fullband (its voice thresholds switch to super-wideband
    /// at 13.5 kb/s and to fullband at 14 kb/s), in the SILK+CELT hybrid mode made for speech, so
    /// sibilants and the bells' overtones keep their top octave; Xiph's recommended settings put
    /// fullband speech at 28–40 kb/s *constant*, and unconstrained VBR spends less on the pauses
    /// that fill a meditation and more on the voice. Stereo gets twice that, 48 kb/s, above libopus's
    /// 19 kb/s point where stereo voice is coded as stereo rather than folded to mono.
    package static func defaultBitrate(channelCount: ChannelCount) -> Int {
        24 * channelCount.count
    }

    /// Creates `path` (replacing any file there) for exactly `frameCount` frames of 48 kHz audio, in
    /// one or two channels (``AudioFileWriter/create(path:sampleRate:channelCount:settings:metadata:frameCount:reusing:)``
    /// checks both).
    ///
    /// - Throws: ``AudioError`` with code `cannotWrite` when the file cannot be created,
    ///   `cannotEncode` when libopus refuses a setting.
    package init(
        path: String,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        settings: EncoderSettings,
        metadata: AudioMetadata,
        frameCount: Frames,
        reusing _: SpanReuse? = nil
    ) throws(AudioError) {
        let comments = try OpusComments(metadata: metadata, path: path)
        let encoder = try OpusEncoder(path: path, channelCount: channelCount.count)
        let target =
            settings.bitrate
            ?? Int((settings.quality ?? Double(Self.defaultBitrate(channelCount: channelCount))).rounded())
        try encoder.set(OPUS_SET_BITRATE_REQUEST, Int32(target * 1_000), "cannot set \(target) kb/s")
        if settings.bitrate != nil {
            try encoder.set(OPUS_SET_VBR_REQUEST, 0, "cannot set a constant bit rate")
        } else {
            try encoder.set(OPUS_SET_VBR_REQUEST, 1, "cannot set a variable bit rate")
            try encoder.set(OPUS_SET_VBR_CONSTRAINT_REQUEST, 0, "cannot set unconstrained VBR")
        }
        try encoder.set(OPUS_SET_COMPLEXITY_REQUEST, Self.complexity, "cannot set complexity \(Self.complexity)")
        try encoder.writeHeaders(comments)
        let preSkip = encoder.preSkip
        self.path = path
        self.frameCount = frameCount
        self.promise = FramePromise(path: path, frameCount: frameCount.count, wording: .opusFile)
        self.encoder = encoder
        self.channels = channelCount.count
        self.preSkip = preSkip
        self.encoding = AudioEncoding(
            container: AudioFileFormat.opus.containerName,
            codec: "opus",
            bitrate: settings.bitrate,
            quality: settings.bitrate == nil ? settings.quality ?? Double(target) : nil,
            encoderDelay: Frames(preSkip)
        )
        self.zeros = [Float](repeating: 0, count: Self.silenceBlock * channelCount.count)
    }

    /// Encodes the first `frames` frames of interleaved `samples`.
    /// The corresponding libopus call is `opus_encode_float`.
    package func write(_ samples: [Float], frames: Int) throws(AudioError) {
        precondition(
            samples.count >= frames * channels,
            "write(_:frames:) was given fewer samples than frames × channels"
        )
        guard frames > 0 else { return }
        try promise.checkRoom(for: Int64(frames))
        try samples.withUnsafeBufferPointer { (buffer) throws(AudioError) in
            try encoder.write(buffer.baseAddress!, frames: frames)
        }
        promise.record(Int64(frames))
    }

    /// Encodes `frames` frames of digital silence from one block of zeros made at creation.
    /// Stops early, between blocks, if the task is cancelled (``close()`` then fails).
    package func writeSilence(frames: Frames) throws(AudioError) {
        try promise.checkRoom(for: frames.count)
        var remaining = frames.count
        try zeros.withUnsafeBufferPointer { (buffer) throws(AudioError) in
            while remaining > 0, !Task.isCancelled {
                let chunk = Int(min(remaining, Int64(Self.silenceBlock)))
                try encoder.write(buffer.baseAddress!, frames: chunk)
                promise.record(Int64(chunk))
                remaining -= Int64(chunk)
            }
        }
    }

    /// Finishes the stream (the last page's granule position trims the end), flushes the file to
    /// disk and closes it; returns how it was encoded, with the pre-skip as the encoder delay and
    /// the frames the granule position trims from the last packet as the padding.
    ///
    /// - Throws: ``AudioError`` with code `cannotWrite` unless exactly `frameCount` frames were
    ///   written (the file is still closed), or when the file cannot be finished.
    @discardableResult
    package func close() throws(AudioError) -> AudioEncoding {
        try encoder.finish()
        try promise.checkKept()
        var result = encoding
        result.padding = Frames(encoder.packetCount * OpusEncoder.frameSize - preSkip - promise.written)
        return result
    }
}
