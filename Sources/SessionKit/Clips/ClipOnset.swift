import SessionAudio
import SessionTimeline

/// The folders a timeline read from a file is resolved against: it names a clip by its file name
/// in the cache and a library sound by its path within the library, never by a path of the
/// machine that rendered it (docs/timeline.md).
package struct SourceFolders: Sendable, Equatable {
    /// The clip cache folder.
    package var clips: String
    /// The sound library folder.
    package var sounds: String

    package init(clips: String, sounds: String) {
        self.clips = clips
        self.sounds = sounds
    }
}

/// Where a sounding item's own sound starts: the lead-in of silence its source file begins with,
/// so that a clip that naturally starts 50 ms in is not taken for a clip placed 50 ms late.
enum ClipOnset {
    /// The frames at `rate` before `item`'s source first reaches ``VerificationRules/onsetLevel``
    /// once played at the item's gain; `nil` when the source cannot be read (no path, built in,
    /// gone, outside its folder) or never gets that loud. Decodes only as far as that first frame.
    ///
    /// Without `folders`, the timeline is one a render holds in memory, and each source's path is
    /// its file's. With them, it was read from a file: a clip is its name in `folders.clips`, a
    /// sound its path within `folders.sounds`, and a file outside the folder is never opened.
    static func lead(of item: TimelineItem, at rate: SampleRate, in folders: SourceFolders?) -> Frames? {
        guard let source = item.source, let path = source.path, path != AudioSourceInfo.builtinName, item.gain > 0
        else { return nil }
        let file: (path: String, folder: String?)
        switch (folders, item.clip) {
        case (nil, _): file = (path, source.libraryFolder)
        case (let folders?, .some):
            // The file name alone: a timeline written before names were written held the path.
            let name = path.split(separator: "/").last.map(String.init) ?? path
            file = (folders.clips + "/" + name, folders.clips)
        case (let folders?, nil):
            guard !path.hasPrefix("/") else { return nil }
            file = (folders.sounds + "/" + path, folders.sounds)
        }
        guard let decoder = try? AudioFileDecoder(path: file.path, inside: file.folder) else { return nil }
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
