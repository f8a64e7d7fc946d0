package import SessionTimeline

/// A file being written frame by frame, in any format: what the renderer writes a session through.
///
/// A sink owns its C handles; ``close()`` finishes the file (headers, tags, the last frames) and
/// reports how it was encoded. Writing after ``close()`` fails.
package protocol AudioFileSink: AnyObject {
    /// The file being written.
    var path: String { get }
    /// Frames written so far.
    var framesWritten: Frames { get }
    /// Writes the first `frames` frames of interleaved `samples`, floats in −1 … 1.
    func write(_ samples: [Float], frames: Int) throws(AudioError)
    /// Writes `frames` frames of digital silence.
    func writeSilence(frames: Frames) throws(AudioError)
    /// Finishes the file; returns how it was encoded.
    func close() throws(AudioError) -> AudioEncoding
}

/// A sink that writes a whole session in one format: what ``AudioFileWriter`` opens.
protocol SessionFileWriter: AudioFileSink {
    /// Creates `path` (replacing any file there) in `settings.format`, for exactly `frameCount`
    /// frames, with `metadata`'s tags and chapters. The MP3 and AAC writers, which encode spans of
    /// sound alone, copy the unchanged spans `spans` kept from the last encoding and keep their
    /// own; the others encode the whole stream and have none to keep.
    init(
        path: String,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        settings: EncoderSettings,
        metadata: AudioMetadata,
        frameCount: Frames,
        reusing spans: SpanReuse?
    ) throws(AudioError)
}

extension SoundFileWriter: SessionFileWriter {}
extension VorbisFileWriter: SessionFileWriter {}
extension MP3FileWriter: SessionFileWriter {}
extension AACFileWriter: SessionFileWriter {}
extension OpusFileWriter: SessionFileWriter {}

/// Opens the sink for a format.
package enum AudioFileWriter {
    /// Creates `path` (replacing any file there) in `settings.format`, for exactly `frameCount`
    /// frames. An MP3, M4A or M4B writer given `spans` copies the spans of its last encoding that
    /// did not change and keeps its own for the next (``SpanReuse``).
    ///
    /// - Throws: ``AudioError`` (`unsupportedFormat`, `cannotWrite`, `cannotEncode`).
    package static func create(
        path: String,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        settings: EncoderSettings,
        metadata: AudioMetadata,
        frameCount: Frames,
        reusing spans: SpanReuse? = nil
    ) throws(AudioError) -> any AudioFileSink {
        if let problem = settings.format.problem(sampleRate: sampleRate.hertz, channelCount: channelCount.count) {
            throw AudioError(.unsupportedFormat, path: path, reason: problem)
        }
        let writer: any SessionFileWriter.Type =
            switch settings.format {
            case .wav, .flac: SoundFileWriter.self
            case .vorbis: VorbisFileWriter.self
            case .mp3: MP3FileWriter.self
            case .m4a, .m4b: AACFileWriter.self
            case .opus: OpusFileWriter.self
            }
        return try writer.init(
            path: path,
            sampleRate: sampleRate,
            channelCount: channelCount,
            settings: settings,
            metadata: metadata,
            frameCount: frameCount,
            reusing: spans
        )
    }
}
