import Foundation
internal import SessionAudio
package import SessionTimeline

/// Writes a session's queue (``SessionQueue``) into a folder: its files and `queue.json`.
///
/// The folder is built beside its destination under a temporary name and renamed into place when
/// complete, so a failure, a cancellation or a kill never leaves half a queue. A folder that
/// exists is replaced only if it is empty or exactly what an export writes (``checkDestination(_:replaceExisting:)``);
/// anything else is refused, so nothing of the user's is lost.
package enum QueueWriter {
    /// The name of the queue's description in its folder.
    package static let descriptionFileName = "queue.json"

    /// Writes `queue`, planned from `timeline`, into `folder`.
    ///
    /// Copied files are the source's bytes; rendered ones are `timeline`'s item on its own, encoded
    /// as `encoder` says; silences are 16-bit mono WAV at ``SessionQueue/silenceSampleRate``, one
    /// file per length.
    /// - Parameter progress: called after each file with the number written and the total.
    /// - Throws: ``SessionError``; nothing is left at `folder` on failure.
    package static func write(
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
            throw SessionError(
                .cannotWrite,
                "Cannot write \(folder): \(FileProblem.describe(error, path: folder))",
                underlyingError: error
            )
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
        let total = queue.items.count + queue.overlays.count + 1
        for (done, (file, origin, write)) in files(of: queue, timeline: timeline).enumerated() {
            if Task.isCancelled { throw SessionError.cancelled }
            let path = staging + "/" + file
            if written.insert(file).inserted {
                if case .copied(let source, let library) = origin {
                    try copy(source, inside: library, to: path, as: file)
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
                    // Beside copied clips (the built-in bell) the file is the sound at unit gain,
                    // its gain in queue.json; a re-encoded one carries the timeline's gain.
                    var alone = timeline.items[item.timelineIndex]
                    if queue.delivery == .originals, alone.gain > 0 { alone.scaleGain(by: 1 / alone.gain) }
                    try render(
                        alone,
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
                startFrame: .zero,
                frameCount: source.frameCount,
                content: .bell(ItemAudio(source: source, gain: 1), name: queued.overlay.name, cue: nil)
            )
            let write: (String, EncoderSettings) throws(SessionError) -> Void = { path, encoder throws(SessionError) in
                try render(sound, at: source.sampleRate, of: timeline, to: path, encoder: .wav)
            }
            return (queued.file, queued.origin, write)
        }
        let keepalive = queue.keepalive
        let writeKeepalive: (String, EncoderSettings) throws(SessionError) -> Void = { path, _ throws(SessionError) in
            try SilenceFile.write(
                frameCount: keepalive.frameCount,
                sampleRate: SessionQueue.silenceSampleRate,
                to: .path(path)
            )
        }
        return items + overlays + [(keepalive.file, .silence, writeKeepalive)]
    }

    /// Copies the bytes of `source` (a cache entry, or a sound) into the new file `path`: a queue
    /// holds regular files, never links, whatever the source is (a cache entry that is a link, or
    /// is not MP3, was refused when it was measured); a source that is not a regular file (a FIFO)
    /// is refused rather than waited on. A sound a name found in a library (`library`) must still
    /// lie inside its folder once open (``FileDescriptor/placeOutside(openedThrough:folder:)``).
    private static func copy(
        _ source: String,
        inside library: String?,
        to path: String,
        as file: String
    ) throws(SessionError) {
        func failure(_ reason: String, writing: Bool = false, cause: (any Error)? = nil) -> SessionError {
            // What went wrong decides the kind: a source that cannot be read, or a queue that cannot be written.
            SessionError(
                writing ? .cannotWrite : .unusableClips,
                "Cannot copy \(source) into the queue as \(file): \(reason)",
                underlyingError: cause
            )
        }
        // Errors reading name no folder; errors writing name the queue's (a full disk is its disk).
        let input: FileDescriptor
        do {
            input = try FileDescriptor.open(source, .readOnly, options: .nonBlocking)
        } catch {
            throw failure(error.reason(), cause: error)
        }
        let kind: FileKind
        do {
            kind = try input.kind()
        } catch {
            throw failure(error.reason(), cause: error)
        }
        guard kind == .regularFile else { throw failure("it is not a regular file") }
        if let library, let problem = input.placeOutside(openedThrough: source, folder: library) {
            throw failure(problem)
        }
        let folder = (path as NSString).deletingLastPathComponent
        let output: FileDescriptor
        do {
            output = try FileDescriptor.open(
                path,
                .writeOnly,
                options: [.create, .exclusiveCreate, .noFollow],
                permissions: 0o644
            )
        } catch {
            throw failure(error.reason(folder: folder), writing: true, cause: error)
        }
        do {
            try input.copy(to: output, blockSize: 1 << 16)
        } catch {
            switch error {
            case .reading(let error): throw failure(error.reason(), cause: error)
            case .handling(let error): throw failure(error.reason(folder: folder), writing: true, cause: error)
            }
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
        let alone = MixLanes(
            alone: item,
            sampleRate: rate,
            channelCount: timeline.channelCount,
            limiterCeiling: timeline.loudness?.ceiling,
            levelsSpeech: timeline.loudness?.speechLeveling ?? false
        )
        let (written, _) = try SessionRenderer.writeAudio(
            of: alone,
            encoder: encoder,
            metadata: AudioMetadata(),
            to: try OutputTarget.resolve(.path(path), replaceExisting: false)
        )
        try written.pending?.commit()
    }

    /// Refuses, before any work, a destination that is not a folder, or one that holds anything a
    /// queue export does not write.
    ///
    /// A folder is replaced only when it is empty, or when everything in it is exactly what an
    /// export writes: a `queue.json` that reads as a queue, and regular files it lists; no
    /// dot-entries, no subfolders, no links. With `replaceExisting` false any existing folder is refused.
    static func checkDestination(_ folder: String, replaceExisting: Bool) throws(SessionError) {
        let found: FileKind?
        do {
            found = try FileSystem.kindOfItem(at: folder)
        } catch {
            throw SessionError(
                .cannotWrite,
                "Cannot write the queue to \(folder): \(error.reason(folder: folder))",
                underlyingError: error
            )
        }
        switch found {
        case nil: return
        case .directory: break
        case .symbolicLink:
            throw SessionError(
                .cannotWrite,
                "Cannot write the queue to \(folder): it is a symbolic link; name a new or empty folder"
            )
        default:
            throw SessionError(.cannotWrite, "Cannot write the queue to \(folder): it is a file, not a folder")
        }
        guard replaceExisting else {
            throw SessionError(
                .outputExists,
                "\(folder) exists; not replacing it (\(SettingReference.noOverwrite.marker) was given)"
            )
        }
        _ = try exportedFiles(in: folder)
    }

    /// The names in `folder`, a folder that exists, if it is empty or exactly what an export writes.
    /// - Throws: ``SessionError`` naming the first entry that a queue export does not write.
    private static func exportedFiles(in folder: String) throws(SessionError) -> [String] {
        func refuse(_ reason: String) -> SessionError {
            SessionError(.cannotWrite, "Cannot write the queue to \(folder): \(reason); name a new or empty folder")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        } catch {
            throw SessionError(
                .cannotWrite,
                "Cannot write the queue to \(folder): \(FileProblem.describe(error, path: folder))",
                underlyingError: error
            )
        }
        guard !names.isEmpty else { return [] }
        func kind(_ name: String) -> FileKind? {
            try? FileSystem.kindOfItem(at: (folder as NSString).appendingPathComponent(name))
        }
        if let hidden = names.first(where: { $0.hasPrefix(".") }) {
            throw refuse("it holds \(hidden), which a queue does not")
        }
        for name in names {
            switch kind(name) {
            case .regularFile: continue
            case .symbolicLink: throw refuse("\(name) is a symbolic link, which a queue does not hold")
            case .directory: throw refuse("it holds the folder \(name), which a queue does not")
            case .other, nil: throw refuse("it holds \(name), which is not a regular file")
            }
        }
        let description = (folder as NSString).appendingPathComponent(descriptionFileName)
        guard names.contains(descriptionFileName),
            let data = try? AudioFileDecoder.contentsOfRegularFile(
                description,
                noun: "a queue",
                limit: SessionVerifier.maximumTimelineBytes
            ),
            let listed = try? JSONDecoder().decode(ExportedQueue.self, from: data), listed.kind == QueueFile.kind
        else {
            throw refuse("it holds \(names[0]) and no \(descriptionFileName) of a queue")
        }
        let files = Set(
            listed.items.map(\.file) + (listed.overlays ?? []).map(\.file) + [listed.keepalive?.file].compactMap { $0 }
        )
        if let foreign = names.first(where: { $0 != descriptionFileName && !files.contains($0) }) {
            throw refuse("it holds \(foreign), which its \(descriptionFileName) does not list")
        }
        return names
    }

    /// What the destination check reads of an existing `queue.json`: its kind and its files.
    private struct ExportedQueue: Decodable {
        struct File: Decodable { let file: String }
        let kind: String
        let items: [File]
        let overlays: [File]?
        let keepalive: File?
    }

    /// Moves the finished folder into place: onto nothing or an empty folder in one rename, else
    /// by moving the old queue aside first and removing it once the new one is in place.
    private static func commit(_ staging: AtomicFile, to folder: String) throws(SessionError) {
        do {
            try FileSystem.rename(staging.temporaryPath, to: folder)
            return
        } catch {
            guard error == .directoryNotEmpty || error == .fileExists else {
                throw SessionError(
                    .cannotWrite,
                    "Cannot write \(folder): \(error.reason(folder: folder))",
                    underlyingError: error
                )
            }
        }
        // Checked again just before: what is moved aside and removed is only an export's files.
        try checkDestination(folder, replaceExisting: true)
        let old = AtomicFile(destination: folder, removingStaleTemporaries: false)
        do {
            try FileSystem.rename(folder, to: old.temporaryPath)
        } catch {
            throw SessionError(
                .cannotWrite,
                "Cannot replace the queue in \(folder): \(error.reason(folder: folder))",
                underlyingError: error
            )
        }
        do {
            try FileSystem.rename(staging.temporaryPath, to: folder)
        } catch {
            try? FileSystem.rename(old.temporaryPath, to: folder)
            throw SessionError(
                .cannotWrite,
                "Cannot replace the queue in \(folder): \(error.reason(folder: folder))",
                underlyingError: error
            )
        }
        // The old export's own files one by one, then its folder: anything else that appeared in
        // it meanwhile stays (the folder then stays too, under its temporary name).
        if let names = try? exportedFiles(in: old.temporaryPath) {
            for name in names {
                try? FileSystem.removeFile((old.temporaryPath as NSString).appendingPathComponent(name))
            }
        }
        if (try? FileSystem.removeEmptyFolder(old.temporaryPath)) != nil { old.discard() } else { old.forget() }
    }
}
