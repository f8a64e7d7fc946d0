public import SessionTimeline

/// Writes MP3. (Being built: issue 12.)
public final class MP3FileWriter: AudioFileSink {
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
        throw AudioError(.unsupportedFormat, path: path, reason: "MP3 output is not built yet")
    }

    public func write(_ samples: [Float], frames: Int) throws(AudioError) {}
    public func writeSilence(frames: Frames) throws(AudioError) {}
    public func close() throws(AudioError) -> AudioEncoding { AudioEncoding(container: "mp3", codec: "mp3") }
}
