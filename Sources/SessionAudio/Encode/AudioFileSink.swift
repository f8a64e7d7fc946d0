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

/// Opens the sink for a format.
package enum AudioFileWriter {
    /// Creates `path` (replacing any file there) in `settings.format`, for exactly `frameCount` frames.
    ///
    /// - Throws: ``AudioError`` (`unsupportedFormat`, `cannotWrite`, `cannotEncode`).
    package static func create(
        path: String,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        settings: EncoderSettings,
        metadata: AudioMetadata,
        frameCount: Frames
    ) throws(AudioError) -> any AudioFileSink {
        if let problem = settings.format.problem(sampleRate: sampleRate.hertz, channelCount: channelCount.count) {
            throw AudioError(.unsupportedFormat, path: path, reason: problem)
        }
        switch settings.format {
        case .wav, .flac:
            return try SoundFileWriter(
                path: path,
                sampleRate: sampleRate,
                channelCount: channelCount,
                settings: settings,
                metadata: metadata,
                frameCount: frameCount
            )
        case .vorbis:
            return try VorbisFileWriter(
                path: path,
                sampleRate: sampleRate,
                channelCount: channelCount,
                settings: settings,
                metadata: metadata,
                frameCount: frameCount
            )
        case .mp3:
            return try MP3FileWriter(
                path: path,
                sampleRate: sampleRate,
                channelCount: channelCount,
                settings: settings,
                metadata: metadata,
                frameCount: frameCount
            )
        case .m4a, .m4b:
            return try AACFileWriter(
                path: path,
                sampleRate: sampleRate,
                channelCount: channelCount,
                settings: settings,
                metadata: metadata,
                frameCount: frameCount
            )
        case .opus:
            return try OpusFileWriter(
                path: path,
                sampleRate: sampleRate,
                channelCount: channelCount,
                settings: settings,
                metadata: metadata,
                frameCount: frameCount
            )
        }
    }
}
