import Foundation
package import SessionTimeline

/// Captions written from a timeline file that is already there (`render-session captions`), as
/// a render writes them (``OutputSettings/captions``).
package enum CaptionsFile {
    /// The timeline at `path` (`-`: standard input), refusing a queue, whose items are not in
    /// one output's frames.
    /// - Throws: ``SessionError/Code-swift.struct/unreadableTimeline`` naming the file and the cause.
    package static func timeline(at path: String) throws(SessionError) -> Timeline {
        guard case .timeline(let timeline) = try SessionDocument.read(path) else {
            throw SessionError(
                .unreadableTimeline,
                "Cannot caption \(path == "-" ? "standard input" : path): it is a queue, whose items play at their own rates; give the timeline it was made from"
            )
        }
        return timeline
    }

    /// The format captions written to `path` take: `format` if given, else the one its extension
    /// names.
    /// - Throws: ``SessionError`` (invalid setting) when neither says one.
    package static func format(of path: String, chosen format: CaptionFormat?) throws(SessionError) -> CaptionFormat {
        guard let format = format ?? CaptionFormat(path: path) else {
            throw SessionError(
                .invalidSetting,
                "Cannot write captions to \(path): the name must end in .vtt, .srt or .json (WebVTT, SubRip, a JSON transcript)"
            )
        }
        return format
    }

    /// Writes `timeline`'s captions to `path` in `format`, replacing any file there atomically,
    /// and a WebVTT file's chapters beside it (``CaptionFormat/chaptersPath(forCaptionsAt:)``).
    /// - Returns: the paths written.
    package static func write(
        _ timeline: Timeline,
        to path: String,
        format: CaptionFormat
    ) throws(SessionError) -> [String] {
        try AtomicFile.write(format.data(of: timeline), to: path)
        guard format == .webVTT, let chapters = CaptionFormat.chaptersPath(forCaptionsAt: path) else { return [path] }
        try AtomicFile.write(Data(Captions.chaptersWebVTT(timeline).utf8), to: chapters)
        return [path, chapters]
    }
}
