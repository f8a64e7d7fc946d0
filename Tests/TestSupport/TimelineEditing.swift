import Foundation
package import SessionTimeline

extension TimelineItem {
    /// Changes the item's clip with `edit`, if it has one: tests that compare timelines made
    /// with other keys.
    package mutating func editClip(_ edit: (inout PlacedClip) -> Void) {
        switch content {
        case .silence, .bell:
            break
        case .segment(var clip, let audio):
            edit(&clip)
            content = .segment(clip, audio)
        case .spokenCue(var clip, let audio, let name, let cue):
            edit(&clip)
            content = .spokenCue(clip, audio, name: name, cue: cue)
        case .interjection(var clip, let audio):
            edit(&clip)
            content = .interjection(clip, audio)
        case .recorded(var item):
            guard var clip = item.clip else { return }
            edit(&clip)
            item.clip = clip
            content = .recorded(item)
        }
    }

    /// Changes the item's source with `edit`, if it has one: tests that play or compare an item
    /// from another file.
    package mutating func editSource(_ edit: (inout AudioSourceInfo) -> Void) {
        switch content {
        case .silence:
            break
        case .segment(let clip, var audio):
            edit(&audio.source)
            content = .segment(clip, audio)
        case .spokenCue(let clip, var audio, let name, let cue):
            edit(&audio.source)
            content = .spokenCue(clip, audio, name: name, cue: cue)
        case .interjection(let clip, var audio):
            edit(&audio.source)
            content = .interjection(clip, audio)
        case .bell(var audio, let name, let cue):
            edit(&audio.source)
            content = .bell(audio, name: name, cue: cue)
        case .recorded(var item):
            guard var audio = item.audio else { return }
            edit(&audio.source)
            item.audio = audio
            content = .recorded(item)
        }
    }
}

/// Removes the `audioFile` stamp from the timeline JSON at `path`, as in a timeline written before
/// stamps were: for tests that check a doctored copy of a rendered file (samples clipped, a clip
/// moved, another encoder's copy) against its timeline, which would otherwise be refused as
/// another file's before any check ran.
package func removeAudioFileStamp(fromTimelineAt path: String) throws {
    let url = URL(fileURLWithPath: path)
    guard var timeline = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] else {
        throw CocoaError(.fileReadCorruptFile)
    }
    timeline["audioFile"] = nil
    try JSONSerialization.data(withJSONObject: timeline, options: [.sortedKeys]).write(to: url)
}
