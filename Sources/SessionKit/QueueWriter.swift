import Foundation
public import SessionTimeline

#if canImport(Glibc)
import Glibc
#endif

/// Writes a session's queue (``SessionQueue``) into a folder: its files and `queue.json`.
///
/// The folder is built beside its destination under a temporary name and renamed into place when
/// complete, so a failure, a cancellation or a kill never leaves half a queue. A folder that
/// exists is replaced only if it is empty or a queue folder (it holds `queue.json`); anything else
/// is refused, so nothing of the user's is lost.
public enum QueueWriter {
    /// The name of the queue's description in its folder.
    public static let descriptionFileName = "queue.json"

    /// Writes `queue`, planned from `timeline`, into `folder`.
    ///
    /// Copied files are the source's bytes; rendered ones are `timeline`'s item on its own, encoded
    /// as `encoder` says; silences are 16-bit mono WAV at ``SessionQueue/silenceSampleRate``, one
    /// file per length.
    /// - Parameter progress: called after each file with the number written and the total.
    /// - Throws: ``SessionError``; nothing is left at `folder` on failure.
    public static func write(
        _ queue: SessionQueue,
        of timeline: Timeline,
        to folder: String,
        encoder: EncoderSettings,
        replaceExisting: Bool,
        progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) throws(SessionError) {
        try checkDestination(folder, replaceExisting: replaceExisting)
        let staging = AtomicFile(destination: folder)
        do {
            try FileManager.default.createDirectory(atPath: staging.temporaryPath, withIntermediateDirectories: true)
        } catch {
            throw SessionError(.cannotWrite, "Cannot write \(folder): \(FileProblem.describe(error, path: folder))")
        }
        do {
            try writeFiles(queue, of: timeline, into: staging.temporaryPath, encoder: encoder, progress: progress)
            try AtomicFile.write(CanonicalJSON.encode(queue), to: staging.temporaryPath + "/" + descriptionFileName)
            try commit(staging, to: folder)
        } catch {
            staging.discard()
            throw error
        }
    }

    private static func writeFiles(
        _ queue: SessionQueue,
        of timeline: Timeline,
        into staging: String,
        encoder: EncoderSettings,
        progress: (Int, Int) -> Void
    ) throws(SessionError) {
        var written = Set<String>()
        let total = queue.items.count + queue.overlays.count
        for (done, (file, origin, write)) in files(of: queue, timeline: timeline).enumerated() {
            if Task.isCancelled { throw SessionError.cancelled }
            let path = staging + "/" + file
            if written.insert(file).inserted {
                if case .copied(let source) = origin {
                    try copy(source, to: path, as: file)
                } else {
                    try write(path, encoder)
                }
            }
            progress(done + 1, total)
        }
    }

    /// Every file of `queue` in order, with how to write it when it is not a copy.
    private static func files(
        of queue: SessionQueue,
        timeline: Timeline
    ) -> [(String, QueueItem.Origin, (String, EncoderSettings) throws(SessionError) -> Void)] {
        let items = queue.items.map { item in
            let write: (String, EncoderSettings) throws(SessionError) -> Void = { path, encoder throws(SessionError) in
                if item.origin == .silence {
                    try SilenceFile.write(
                        frameCount: item.sourceFrames,
                        sampleRate: SessionQueue.silenceSampleRate,
                        to: .path(path)
                    )
                } else {
                    try render(
                        timeline.items[item.timelineIndex],
                        at: timeline.sampleRate,
                        of: timeline,
                        to: path,
                        encoder: encoder
                    )
                }
            }
            return (item.file, item.origin, write)
        }
        let overlays = queue.overlays.map { queued in
            // An overlay's file is its sound once through at its own rate and unit gain.
            let source = queued.overlay.source
            let sound = TimelineItem(
                index: 0,
                kind: .bell,
                startFrame: .zero,
                frameCount: source.frameCount,
                source: source
            )
            let write: (String, EncoderSettings) throws(SessionError) -> Void = { path, encoder throws(SessionError) in
                try render(sound, at: source.sampleRate, of: timeline, to: path, encoder: EncoderSettings())
            }
            return (queued.file, queued.origin, write)
        }
        return items + overlays
    }

    private static func copy(_ source: String, to path: String, as file: String) throws(SessionError) {
        do {
            try FileManager.default.copyItem(atPath: source, toPath: path)
        } catch {
            throw SessionError(
                .unusableClips,
                "Cannot copy \(source) into the queue as \(file): \(FileProblem.describe(error, path: source))"
            )
        }
    }

    /// Renders `item` alone from frame 0 at `rate`, at its gain, as `encoder` says.
    private static func render(
        _ item: TimelineItem,
        at rate: SampleRate,
        of timeline: Timeline,
        to path: String,
        encoder: EncoderSettings
    ) throws(SessionError) {
        var alone = item
        alone.index = 0
        alone.startFrame = .zero
        let single = Timeline(
            scriptId: timeline.scriptId,
            title: item.clip?.text ?? item.name ?? timeline.title,
            seed: timeline.seed,
            sampleRate: rate,
            channelCount: timeline.channelCount,
            items: [alone],
            // The loudness target's true-peak limiter, as in the whole render: gains above 1 cannot clip.
            loudness: timeline.loudness.map { TimelineLoudness(target: $0.target, truePeakCeiling: $0.truePeakCeiling) }
        )
        try SessionRenderer.render(
            single,
            encoder: encoder,
            metadata: AudioMetadata(),
            audio: try OutputTarget.resolve(.path(path), replaceExisting: false),
            timelineJSON: nil
        ) { _ in }
    }

    /// Refuses, before any work, a destination that is not a folder, or one that holds the user's files.
    static func checkDestination(_ folder: String, replaceExisting: Bool) throws(SessionError) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) else { return }
        guard isFolder.boolValue else {
            throw SessionError(.cannotWrite, "Cannot write the queue to \(folder): it is a file, not a folder")
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { !$0.hasPrefix(".") }
        guard !names.isEmpty else { return }
        guard names.contains(descriptionFileName) else {
            throw SessionError(
                .cannotWrite,
                "Cannot write the queue to \(folder): the folder holds other files and no \(descriptionFileName); name a new or empty folder"
            )
        }
        guard replaceExisting else {
            throw SessionError(.outputExists, "\(folder) already holds a queue (and -n was given)")
        }
    }

    /// Moves the finished folder into place: onto nothing or an empty folder in one rename, else
    /// by moving the old queue aside first and removing it once the new one is in place.
    private static func commit(_ staging: AtomicFile, to folder: String) throws(SessionError) {
        if rename(staging.temporaryPath, folder) == 0 { return }
        guard errno == ENOTEMPTY || errno == EEXIST else {
            throw SessionError(.cannotWrite, "Cannot write \(folder): \(String(cString: strerror(errno)))")
        }
        let old = AtomicFile(destination: folder, removingStaleTemporaries: false)
        guard rename(folder, old.temporaryPath) == 0, rename(staging.temporaryPath, folder) == 0 else {
            throw SessionError(
                .cannotWrite,
                "Cannot replace the queue in \(folder): \(String(cString: strerror(errno)))"
            )
        }
        old.discard()
    }
}
