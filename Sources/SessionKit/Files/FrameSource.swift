internal import SessionAudio
internal import SessionTimeline

/// Audio to be written: a known number of frames at one rate, handed over block by block, so
/// that memory stays the same whatever the length. ``AudioOutput`` writes every source.
protocol FrameSource {
    var sampleRate: SampleRate { get }
    var channelCount: ChannelCount { get }
    /// The frames handed over in all: the file is opened for exactly these, and refuses others.
    var frameCount: Frames { get }
    /// The next block: up to `maximumFrames` frames of samples put in `buffer` from index 0, a run
    /// of digital silence (written without converting zeros), or the end.
    mutating func next(into buffer: inout [Float], maximumFrames: Int) throws(SessionError) -> FrameBlock
    /// What a failure to write the latest block says: a source made of clips names the clip.
    func writeFailure(_ error: AudioError) -> SessionError
}

extension FrameSource {
    func writeFailure(_ error: AudioError) -> SessionError {
        SessionError(.cannotWrite, wrapping: error)
    }
}

/// What a ``FrameSource`` hands over next.
enum FrameBlock: Equatable {
    /// This many frames of interleaved samples, in the caller's buffer.
    case samples(frames: Int)
    /// This many frames of digital silence.
    case silence(Frames)
    case end
}

/// Digital silence, handed over as one run.
struct SilenceFrames: FrameSource {
    let sampleRate: SampleRate
    let channelCount: ChannelCount
    let frameCount: Frames
    private var done = false

    init(frameCount: Frames, sampleRate: SampleRate, channelCount: ChannelCount) {
        self.frameCount = frameCount
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    mutating func next(into buffer: inout [Float], maximumFrames: Int) -> FrameBlock {
        guard !done else { return .end }
        done = true
        return .silence(frameCount)
    }
}

/// Samples already in memory (a synthesized sound), handed over in blocks.
struct SampleFrames: FrameSource {
    let samples: [Float]
    let sampleRate: SampleRate
    let channelCount: ChannelCount
    var frameCount: Frames { Frames(Int64(samples.count / channelCount.count)) }
    private var position = 0

    init(_ samples: [Float], sampleRate: SampleRate, channelCount: ChannelCount) {
        self.samples = samples
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    mutating func next(into buffer: inout [Float], maximumFrames: Int) -> FrameBlock {
        let channels = channelCount.count
        let frames = min(maximumFrames, samples.count / channels - position)
        guard frames > 0 else { return .end }
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: samples[(position * channels)..<((position + frames) * channels)])
        position += frames
        return .samples(frames: frames)
    }
}
