public import Foundation
public import SessionTimeline
public import SessionAudio

/// Writes a timeline as one WAV file, streaming block by block: memory stays the same whatever
/// the session's length.
///
/// The file appears at its path only when complete: it is written beside it under a temporary
/// name and renamed into place on success, so an error or a kill never leaves a partial file.
public enum SessionRenderer {
    /// How many frames move through memory at a time.
    static let blockFrames = 16_384

    /// Renders `timeline` to `outputPath` (and its JSON to `timelinePath`, if given).
    ///
    /// - Parameter progress: called after each block with the frames written so far.
    /// - Throws: ``SessionError`` naming the clip, file and cause; nothing is left at either path.
    public static func render(
        _ timeline: Timeline,
        to outputPath: String,
        format: SampleFormat = .pcm16,
        timelinePath: String? = nil,
        progress: ((Frames) -> Void)? = nil
    ) throws(SessionError) {
        try checkWritableFolder(of: outputPath)
        if let timelinePath { try checkWritableFolder(of: timelinePath) }

        let output = AtomicFile(destination: outputPath)
        let timelineFile = timelinePath.map { AtomicFile(destination: $0) }
        do {
            try writeAudio(timeline, to: output.temporaryPath, format: format, progress: progress)
            if let timelineFile {
                try TimelineJSON.encode(timeline).write(to: URL(fileURLWithPath: timelineFile.temporaryPath))
            }
            try output.commit()
            try timelineFile?.commit()
        } catch let error as SessionError {
            output.discard()
            timelineFile?.discard()
            throw error
        } catch {
            output.discard()
            timelineFile?.discard()
            throw SessionError(.cannotWrite, "\(error)")
        }
    }

    private static func writeAudio(_ timeline: Timeline, to path: String, format: SampleFormat, progress: ((Frames) -> Void)?) throws(SessionError) {
        let writer: SoundFileWriter
        do {
            writer = try SoundFileWriter(path: path, sampleRate: timeline.sampleRate, channelCount: timeline.channels,
                                         format: format, frameCount: timeline.totalFrames.count, title: timeline.title)
        } catch {
            throw SessionError(.cannotWrite, "\(error)")
        }
        var buffer: [Float] = []
        var bell: [Float]?
        for item in timeline.items {
            do {
                switch item.kind {
                case .silence:
                    try writer.writeSilence(frames: item.frameCount.count)
                case .segment, .interjection, .bell:
                    guard let source = item.source else { preconditionFailure("a \(item.kind) item has a source") }
                    let stream: ClipStream
                    if let sourcePath = source.path {
                        stream = try ClipStream(decoder: AudioFileDecoder(path: sourcePath), sourceFrames: source.frameCount.count,
                                                outputRate: timeline.sampleRate, outputChannels: timeline.channels,
                                                outputFrames: item.frameCount.count)
                    } else {
                        let samples = bell ?? BuiltinBell.samples(sampleRate: source.sampleRate)
                        bell = samples
                        stream = try ClipStream(samples: samples, sampleRate: source.sampleRate, channelCount: 1,
                                                outputRate: timeline.sampleRate, outputChannels: timeline.channels,
                                                outputFrames: item.frameCount.count)
                    }
                    while case let frames = try stream.read(into: &buffer, maximumFrames: blockFrames), frames > 0 {
                        guard !Interruption.isRequested else { break }
                        try writer.write(buffer, frames: frames)
                        progress?(Frames(writer.framesWritten))
                    }
                }
            } catch {
                throw SessionError(error.code == .cannotWrite ? .cannotWrite : .unusableClips, describe(item, error))
            }
            if Interruption.isRequested { throw SessionError.interrupted }
            let end = (item.startFrame + item.frameCount).count
            guard writer.framesWritten == end else {
                throw SessionError(.cannotWrite, "Item \(item.index) (\(item.kind.rawValue)) ended at frame \(writer.framesWritten), not at its planned end \(end)")
            }
            progress?(Frames(writer.framesWritten))
        }
        do {
            try writer.close()
        } catch {
            throw SessionError(.cannotWrite, "\(error)")
        }
    }

    private static func describe(_ item: TimelineItem, _ error: AudioError) -> String {
        if let clip = item.clip {
            return "Clip for \(quoted(clip.text)) (key \(clip.key)): \(error)"
        }
        if item.kind == .bell { return "Bell: \(error)" }
        return "\(error)"
    }

    /// Fails before any work if the folder that will hold `path` is missing or not writable.
    static func checkWritableFolder(of path: String) throws(SessionError) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw SessionError(.cannotWrite, "Cannot write \(path): the folder \(folder) does not exist")
        }
        guard FileManager.default.isWritableFile(atPath: folder) else {
            throw SessionError(.cannotWrite, "Cannot write \(path): the folder \(folder) is not writable")
        }
        var pathIsDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &pathIsDirectory), pathIsDirectory.boolValue {
            throw SessionError(.cannotWrite, "Cannot write \(path): it is a directory")
        }
    }
}

/// The timeline's JSON form: pretty-printed, keys sorted (so the same timeline is always the same
/// bytes), slashes unescaped, a final newline.
public enum TimelineJSON {
    public static func encode(_ timeline: Timeline) -> Data {
        CanonicalJSON.encode(timeline)
    }
}

/// Writes files of silence, the seed app's `SilenceGenerator`.
public enum SilenceFile {
    /// Writes `frameCount` frames of 16-bit mono silence at `sampleRate` to `path`, atomically.
    public static func write(frameCount: Frames, sampleRate: Int, to path: String) throws(SessionError) {
        try SessionRenderer.checkWritableFolder(of: path)
        let file = AtomicFile(destination: path)
        do {
            let writer = try SoundFileWriter(path: file.temporaryPath, sampleRate: sampleRate, channelCount: 1,
                                             format: .pcm16, frameCount: frameCount.count)
            try writer.writeSilence(frames: frameCount.count)
            guard writer.framesWritten == frameCount.count else {
                file.discard()
                throw SessionError.interrupted
            }
            try writer.close()
            try file.commit()
        } catch let error as SessionError {
            throw error
        } catch {
            file.discard()
            throw SessionError(.cannotWrite, "\(error)")
        }
    }
}
