public import SessionTimeline

/// Writes Ogg Opus. (Being built: issue 12.)
public final class OpusFileWriter: AudioFileSink {
    public let path: String
    public var framesWritten: Frames { .zero }

    public init(
        path: String,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        settings: EncoderSettings,
        metadata: AudioMetadata,
        frameCount: Frames
    ) throws(AudioError) {
        self.path = path
        throw AudioError(.unsupportedFormat, path: path, reason: "Opus output is not built yet")
    }

    public func write(_ samples: [Float], frames: Int) throws(AudioError) {}
    public func writeSilence(frames: Frames) throws(AudioError) {}
    public func close() throws(AudioError) -> AudioEncoding { AudioEncoding(container: "ogg", codec: "opus") }
}
