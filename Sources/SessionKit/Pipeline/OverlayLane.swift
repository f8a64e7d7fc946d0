import Foundation
internal import SessionAudio
internal import SessionTimeline

/// The overlays of a mix as samples: each opened when the mix reaches its start, read at
/// its gain and envelope, and closed at its end. Only the overlays sounding at once are open.
struct OverlayLane {
    private let lanes: MixLanes
    private var next = 0
    private var active: [Playing] = []
    private var scratch: [Float] = []
    private let spoken: [Range<Int64>]

    /// An overlay that is sounding.
    private struct Playing {
        let overlay: TimelineOverlay
        let stream: any OverlayStream
        /// The fade at the end of a sound cut short by the output's end; 0 when it plays whole.
        let cutFadeFrames: Int64
    }

    /// The length of the fade that ends a cue cut short by the end of the output.
    static let cutFadeSeconds = 0.005

    init(_ lanes: MixLanes) {
        self.lanes = lanes
        spoken = NarrationLane.spokenRanges(of: lanes.items)
    }

    /// Adds every overlay's frames `start ..< start + frames` into `mix` (interleaved, from index 0).
    mutating func add(into mix: inout [Float], frames: Int, at start: Int64) throws(SessionError) {
        let end = start + Int64(frames)
        while next < lanes.overlays.count, lanes.overlays[next].startFrame.count < end {
            active.append(try open(lanes.overlays[next]))
            next += 1
        }
        let channels = lanes.channelCount.count
        var stillPlaying: [Playing] = []
        for playing in active {
            let overlay = playing.overlay
            let from = max(start, overlay.startFrame.count)
            let to = min(end, overlay.endFrame.count)
            if from < to {
                let count = Int(to - from)
                let read: Int
                do {
                    read = try playing.stream.read(into: &scratch, maximumFrames: count)
                } catch {
                    throw SessionError(.unusableSound, "\(Self.describe(overlay)): \(error)", underlyingError: error)
                }
                guard read == count else {
                    throw SessionError(
                        .unusableSound,
                        "\(Self.describe(overlay)) ended \(count - read) frames before its planned end \(overlay.endFrame.count)"
                    )
                }
                let gains = envelope(of: playing, frames: from..<to)
                let offset = Int(from - start) * channels
                SampleBlock.add(scratch, frames: count, channels: channels, gains: gains, into: &mix, at: offset)
            }
            if to < overlay.endFrame.count { stillPlaying.append(playing) }
        }
        active = stillPlaying
    }

    /// Each frame's gain: the overlay's gain times its fades, its ducking and its cut fade.
    private func envelope(of playing: Playing, frames range: Range<Int64>) -> [Float] {
        let overlay = playing.overlay
        var gains = [Float](repeating: Float(overlay.gain), count: range.count)
        let start = overlay.startFrame.count
        let end = overlay.endFrame.count
        func fade(_ length: Int64, atStart: Bool) {
            guard length > 0 else { return }
            let fadeRange = atStart ? start..<(start + length) : (end - length)..<end
            let lower = max(range.lowerBound, fadeRange.lowerBound)
            let upper = min(range.upperBound, fadeRange.upperBound)
            guard lower < upper else { return }
            for frame in lower..<upper {
                let position = Double(atStart ? frame - start : end - frame) / Double(length)
                gains[Int(frame - range.lowerBound)] *= Float(0.5 - 0.5 * cos(Double.pi * position))
            }
        }
        if let bed = overlay.bed {
            fade(bed.fadeInFrames.count, atStart: true)
            fade(bed.fadeOutFrames.count, atStart: false)
            if bed.duckDecibels > 0 {
                duck(&gains, frames: range, depth: bed.duckDecibels, ramp: bed.duckRampFrames.count)
            }
        }
        fade(playing.cutFadeFrames, atStart: false)
        return gains
    }

    /// Lowers `gains` by up to `depth` dB where narration plays: fully over each clip, ramping
    /// down over the `ramp` frames before it and up over the `ramp` frames after it.
    private func duck(_ gains: inout [Float], frames range: Range<Int64>, depth: Double, ramp: Int64) {
        let floor = Float(Loudness.linear(decibels: -depth))
        var amounts = [Float](repeating: 0, count: range.count)
        for clip in spoken where clip.lowerBound - ramp < range.upperBound && clip.upperBound + ramp > range.lowerBound
        {
            for frame in max(range.lowerBound, clip.lowerBound - ramp)..<min(range.upperBound, clip.upperBound + ramp) {
                let amount: Float
                if frame < clip.lowerBound {
                    amount = Float(frame - (clip.lowerBound - ramp)) / Float(ramp)
                } else if frame < clip.upperBound {
                    amount = 1
                } else {
                    amount = 1 - Float(frame - clip.upperBound) / Float(max(ramp, 1))
                }
                let index = Int(frame - range.lowerBound)
                amounts[index] = max(amounts[index], amount)
            }
        }
        for index in gains.indices where amounts[index] > 0 {
            gains[index] *= 1 - (1 - floor) * amounts[index]
        }
    }

    private func open(_ overlay: TimelineOverlay) throws(SessionError) -> Playing {
        let source = overlay.source
        guard let path = source.path else { preconditionFailure("overlays are files") }
        let natural = source.frameCount(at: lanes.sampleRate)
        do {
            if overlay.bed != nil, let synthesized = SoundLibrary.synthesizedBed(at: path) {
                let stream = try ClipStream.synthesizedBed(
                    synthesized,
                    frames: overlay.frameCount,
                    outputRate: lanes.sampleRate,
                    outputChannels: lanes.channelCount
                )
                return Playing(overlay: overlay, stream: stream, cutFadeFrames: 0)
            }
            if let bed = overlay.bed {
                let stream = try LoopStream(
                    path: path,
                    inside: source.libraryFolder,
                    sourceFrames: source.frameCount,
                    outputRate: lanes.sampleRate,
                    outputChannels: lanes.channelCount,
                    crossfade: bed.loopCrossfadeFrames
                )
                return Playing(overlay: overlay, stream: stream, cutFadeFrames: 0)
            }
            let stream = try ClipStream(
                decoder: AudioFileDecoder(path: path, inside: source.libraryFolder),
                sourceFrames: source.frameCount,
                outputRate: lanes.sampleRate,
                outputChannels: lanes.channelCount,
                outputFrames: natural
            )
            let cut =
                overlay.frameCount < natural
                ? min(
                    overlay.frameCount.count,
                    Int64((Double(lanes.sampleRate.hertz) * Self.cutFadeSeconds).rounded())
                )
                : 0
            return Playing(overlay: overlay, stream: stream, cutFadeFrames: cut)
        } catch {
            throw SessionError(.unusableSound, "\(Self.describe(overlay)): \(error)", underlyingError: error)
        }
    }

    /// `Interval gong "gong" (overlay 3)`.
    static func describe(_ overlay: TimelineOverlay) -> String {
        let what =
            switch overlay.kind {
            case .ambience: "Ambience"
            case .gong: overlay.startFrame == .zero ? "Start gong" : "Gong"
            case .bell: "Bell"
            case .cue: "Cue"
            }
        return "\(what) \(quoted(overlay.name)) (overlay \(overlay.index))"
    }
}

/// What an overlay reads from: a sound played once or a bed looped.
protocol OverlayStream: AnyObject {
    func read(into samples: inout [Float], maximumFrames: Int) throws(AudioError) -> Int
}

extension ClipStream: OverlayStream {}
extension LoopStream: OverlayStream {}
