import Foundation
internal import SessionAudio
package import SessionTimeline

/// A timeline or queue JSON file read for its playback positions: what `render-session position`
/// maps times and items with.
package struct PlaybackFile: Sendable {
    /// What the file was.
    package enum Kind: Sendable, Equatable {
        /// A timeline (docs/timeline.md): items at the timeline's rate.
        case timeline
        /// An on-device queue (`"kind": "queue"`): items at their own rates.
        case queue
    }

    /// What the file is called in messages: its path, or `<stdin>`.
    package let name: String
    /// Whether it was a timeline or a queue.
    package let kind: Kind
    /// Its items, mapped.
    package let map: PlaybackMap

    /// Reads the timeline or queue at `path` (`-`: standard input), told apart by `"kind": "queue"`.
    /// - Throws: ``SessionError/Code-swift.struct/unreadableTimeline`` naming the file and the cause,
    ///   in the words ``SessionVerifier/readTimeline(at:)`` uses for a timeline.
    package static func read(_ path: String) throws(SessionError) -> PlaybackFile {
        let (name, data) = try contents(of: path)
        if QueueFile.isQueue(data) {
            let items = try QueueFile.items(in: data, name: name)
            return PlaybackFile(
                name: name,
                kind: .queue,
                map: try mapped(name) { () throws(ScriptError) in try PlaybackMap(items: items) }
            )
        }
        let timeline = try SessionVerifier.decodeTimeline(data, name: name)
        return PlaybackFile(
            name: name,
            kind: .timeline,
            map: try mapped(name) { () throws(ScriptError) in try PlaybackMap(timeline: timeline) }
        )
    }

    /// The name of the file at `path` in messages, and its bytes (`-`: standard input's).
    static func contents(of path: String) throws(SessionError) -> (name: String, data: Data) {
        let name = path == "-" ? ScriptFile.standardInputName : path
        if path != "-" { return (name, try SessionVerifier.timelineData(at: path)) }
        return (name, try SessionVerifier.timelineData(from: .standardInput, name: name))
    }

    /// The map `build` makes, its problems as lines naming the file.
    private static func mapped(
        _ name: String,
        _ build: () throws(ScriptError) -> PlaybackMap
    ) throws(SessionError) -> PlaybackMap {
        do {
            return try build()
        } catch {
            throw SessionError(
                .unreadableTimeline,
                lines: error.problems.map { "Cannot map \(name): \($0)" },
                underlyingError: error
            )
        }
    }
}

/// A timeline or a queue read whole, for a person to look at (`render-session show`).
package enum SessionDocument: Sendable {
    case timeline(Timeline)
    case queue(QueueOverview)

    /// The timeline or queue at `path` (`-`: standard input), told apart by `"kind": "queue"`.
    /// - Throws: ``SessionError/Code-swift.struct/unreadableTimeline`` naming the file and the cause.
    package static func read(_ path: String) throws(SessionError) -> SessionDocument {
        let (name, data) = try PlaybackFile.contents(of: path)
        if QueueFile.isQueue(data) { return .queue(try QueueFile.overview(in: data, name: name)) }
        return .timeline(try SessionVerifier.decodeTimeline(data, name: name))
    }
}
