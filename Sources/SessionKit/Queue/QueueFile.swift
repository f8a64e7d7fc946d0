import Foundation
import SessionTimeline

/// The on-device queue JSON (`"kind": "queue"`): the clips and generated silences an app plays one
/// after another, each at its own rate. Only what positions need is read; every other key is ignored.
///
/// Read: `kind`, `schemaVersion`, and per item `index`, `timelineIndex` (optional), `kind`,
/// `phase`, `sourceFrames` and `sourceSampleRate`. An item plays `sourceFrames` frames at
/// `sourceSampleRate`, so its start is the exact sum of the lengths before it; `startSeconds`
/// and `durationSeconds` are that sum and length rounded, and are not read.
enum QueueFile {
    /// The `kind` that marks a queue.
    static let kind = "queue"
    /// The versions of the queue schema this reads.
    static let readableSchemaVersions = 1...1

    /// Whether `data` is a queue rather than a timeline: a JSON object whose `kind` is `queue`.
    static func isQueue(_ data: Data) -> Bool {
        struct Kind: Decodable { let kind: String? }
        return (try? JSONDecoder().decode(Kind.self, from: data))?.kind == kind
    }

    /// The queue's items in `data`, read from the file called `name` in messages.
    /// - Throws: ``SessionError/Code-swift.struct/unreadableTimeline`` naming the file and the cause.
    static func items(in data: Data, name: String) throws(SessionError) -> [PlaybackMap.Item] {
        try decode(data, name: name).items.map {
            PlaybackMap.Item(
                kind: $0.kind,
                phase: $0.phase,
                sampleRate: $0.sourceSampleRate,
                frameCount: $0.sourceFrames,
                timelineIndex: $0.timelineIndex
            )
        }
    }

    /// The queue in `data` as a person reads it: its title and its items with their files and
    /// words, each starting where the ones before it end.
    static func overview(in data: Data, name: String) throws(SessionError) -> QueueOverview {
        let queue = try decode(data, name: name)
        var start = 0.0
        let items = queue.items.map { item in
            defer { start += item.sourceSampleRate.seconds(of: item.sourceFrames) }
            return QueueOverview.Item(
                index: item.index,
                kind: item.kind,
                phase: item.phase,
                file: item.file ?? "",
                text: item.text,
                gain: item.gain ?? 1,
                startSeconds: start,
                durationSeconds: item.sourceSampleRate.seconds(of: item.sourceFrames)
            )
        }
        return QueueOverview(title: queue.title ?? "", items: items, overlayCount: queue.overlays?.count ?? 0)
    }

    /// The queue in `data`, its schema version and items' indexes checked.
    private static func decode(_ data: Data, name: String) throws(SessionError) -> Queue {
        let queue: Queue
        do {
            queue = try JSONDecoder().decode(Queue.self, from: data)
        } catch {
            throw SessionError(
                .unreadableTimeline,
                "Cannot read queue \(name): \(JSONProblem.describe(error))",
                underlyingError: error
            )
        }
        guard readableSchemaVersions.contains(queue.schemaVersion) else {
            throw SessionError(
                .unreadableTimeline,
                "Cannot read queue \(name): schemaVersion \(queue.schemaVersion) is not supported; this version reads \(readableSchemaVersions.upperBound)"
            )
        }
        for (position, item) in queue.items.enumerated() where item.index != position {
            throw SessionError(
                .unreadableTimeline,
                "Cannot read queue \(name): items[\(position)].index: \(item.index) is not the item's position \(position)"
            )
        }
        return queue
    }

    /// The queue's keys this reads.
    private struct Queue: Decodable {
        let schemaVersion: Int
        let title: String?
        let items: [Item]
        /// Only counted.
        let overlays: [Ignored]?
    }

    private struct Ignored: Decodable {}

    /// An item's keys this reads.
    private struct Item: Decodable {
        let index: Int
        let timelineIndex: Int?
        let kind: String
        let phase: String
        let sourceFrames: Frames
        let sourceSampleRate: SampleRate
        let file: String?
        let text: String?
        let gain: Double?
    }
}

/// A queue as `render-session show` prints it.
package struct QueueOverview: Sendable, Equatable {
    package struct Item: Sendable, Equatable {
        package var index: Int
        package var kind: String
        package var phase: String
        package var file: String
        package var text: String?
        package var gain: Double
        /// Where it starts in the queue's own time, and how long it plays.
        package var startSeconds: Double
        package var durationSeconds: Double
    }

    package var title: String
    package var items: [Item]
    package var overlayCount: Int
}
