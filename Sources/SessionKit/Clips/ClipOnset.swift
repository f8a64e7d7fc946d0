import SessionAudio
import SessionTimeline

/// Where a sounding item's own sound starts: the lead-in of silence its source file begins with,
/// so that a clip that naturally starts 50 ms in is not taken for a clip placed 50 ms late.
enum ClipOnset {
    /// The frames at `rate` before `item`'s source first reaches ``VerificationRules/onsetLevel``
    /// once played at the item's gain; `nil` when the source cannot be read (no path, built in,
    /// gone) or never gets that loud. Decodes only as far as that first frame.
    ///
    /// A timeline read from a file names a clip by its file name in the cache, not by a path
    /// (docs/timeline.md): such a clip is looked for in the default clip cache.
    static func lead(of item: TimelineItem, at rate: SampleRate) -> Frames? {
        guard let source = item.source, let path = source.path, path != AudioSourceInfo.builtinName, item.gain > 0
        else { return nil }
        let cached = item.clip != nil && !path.contains("/") ? ClipCache.defaultDirectory() + "/" + path : nil
        guard
            let decoder = (try? AudioFileDecoder(path: path, inside: source.libraryFolder))
                ?? cached.flatMap({ try? AudioFileDecoder(path: $0) })
        else { return nil }
        let level = VerificationRules.onsetLevel / Float(item.gain)
        let channels = decoder.channelCount.count
        var buffer: [Float] = []
        var position: Int64 = 0
        while let frames = try? decoder.read(into: &buffer, maximumFrames: 4_096), frames > 0 {
            if let index = buffer.prefix(frames * channels).firstIndex(where: { abs($0) >= level }) {
                let frame = Frames(position + Int64(index / channels))
                return rate.frames(converting: frame, from: decoder.sampleRate)
            }
            position += Int64(frames)
        }
        return nil
    }
}
