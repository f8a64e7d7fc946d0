package import Foundation
internal import SessionAudio
package import SessionTimeline

/// Writes a timeline as one WAV file, streaming block by block: memory stays the same whatever
/// the session's length.
///
/// A file appears at its path only when complete: it is written beside it under a temporary
/// name and renamed into place on success, so an error, a cancellation or a kill never leaves a
/// partial file. Standard output, FIFOs and devices cannot be renamed into, so they are written
/// straight through, with a header that is right from the first byte (the length is known).
enum SessionRenderer {
    /// How many frames move through memory at a time.
    static let blockFrames = 16_384

    /// Renders `timeline` encoded as `encoder` says, tagged with `metadata`, to `audio` (if any) and
    /// its JSON to `timelineJSON` (if any).
    ///
    /// - Parameter progress: called after each block with the frames written so far.
    /// - Returns: the timeline with how the audio was encoded and, when loudness is on, its
    ///   measured loudness.
    /// - Throws: ``SessionError`` naming the clip, file and cause; no partial file is left.
    @discardableResult
    static func render(
        _ timeline: Timeline,
        encoder: EncoderSettings,
        metadata: AudioMetadata,
        audio: OutputTarget?,
        timelineJSON: OutputTarget?,
        progress: (Frames) -> Void
    ) throws(SessionError) -> Timeline {
        var pending: [AtomicFile] = []
        var timeline = timeline
        do {
            if let audio {
                let (file, measurement, encoding) = try writeAudio(
                    timeline,
                    encoder: encoder,
                    metadata: metadata,
                    to: audio,
                    progress: progress
                )
                if let file { pending.append(file) }
                timeline.encoding = encoding
                if let measurement {
                    // Digital silence measures −∞: JSON has no such number, so it is recorded as unknown.
                    timeline.loudness?.integrated = measurement.integrated.flatMap { $0.isFinite ? $0 : nil }
                    timeline.loudness?.truePeak = measurement.truePeak.isFinite ? measurement.truePeak : nil
                }
            }
            if let timelineJSON, let file = try write(TimelineJSON.encode(timeline), to: timelineJSON) {
                pending.append(file)
            }
            for file in pending { try file.commit() }
        } catch {
            for file in pending { file.discard() }
            throw error
        }
        return timeline
    }

    /// Writes `data` to `target`; returns the temporary still to be committed, if any.
    static func write(_ data: Data, to target: OutputTarget) throws(SessionError) -> AtomicFile? {
        let name = target.destination.description
        switch target.kind {
        case .replace(let path):
            return try AtomicFile.staged(data, for: path, named: name)
        case .standardOutput:
            try streamed { () throws(AudioError) in
                try DescriptorStream.standardOutput(name: name).write([UInt8](data))
            }
        case .stream(let path):
            try streamed { () throws(AudioError) in
                let stream = try DescriptorStream(opening: path, name: name)
                defer { stream.close() }
                try stream.write([UInt8](data))
            }
        }
        return nil
    }

    /// Runs `body`, turning its failure into a ``SessionError``.
    private static func streamed(_ body: () throws(AudioError) -> Void) throws(SessionError) {
        do {
            try body()
        } catch {
            throw SessionError(.cannotWrite, wrapping: error)
        }
    }

    private static func writeAudio(
        _ timeline: Timeline,
        encoder: EncoderSettings,
        metadata: AudioMetadata,
        to target: OutputTarget,
        progress: (Frames) -> Void
    ) throws(SessionError) -> (AtomicFile?, (integrated: Double?, truePeak: Double)?, AudioEncoding) {
        let name = target.destination.description
        var temporary: AtomicFile?
        var stream: DescriptorStream?
        switch target.kind {
        case .replace(let path): temporary = AtomicFile(destination: path)
        case .standardOutput: stream = .standardOutput(name: name)
        case .stream(let path):
            do {
                stream = try DescriptorStream(opening: path, name: name)
            } catch {
                throw SessionError(.cannotWrite, wrapping: error)
            }
        }
        defer { stream?.close() }
        // Only a WAV's header can be right before its samples are: other formats going to a
        // stream are written to a spool file first (their headers and tags are finished at the
        // end), then copied.
        let spool =
            stream != nil && encoder.format != .wav
            ? AtomicFile(destination: NSTemporaryDirectory() + "/render-session-spool.\(encoder.format.fileExtension)")
            : nil
        func fail(_ error: SessionError) -> SessionError {
            temporary?.discard()
            spool?.discard()
            return error
        }

        let writer: any AudioFileSink
        do {
            if let file = temporary ?? spool {
                writer = try AudioFileWriter.create(
                    path: file.temporaryPath,
                    sampleRate: timeline.sampleRate,
                    channelCount: timeline.channelCount,
                    settings: encoder,
                    metadata: metadata,
                    frameCount: timeline.totalFrames
                )
            } else {
                writer = try SoundFileWriter(
                    streamingTo: (stream ?? .standardOutput(name: name)).descriptor,
                    name: name,
                    sampleRate: timeline.sampleRate,
                    channelCount: timeline.channelCount,
                    format: encoder.sampleFormat,
                    frameCount: timeline.totalFrames,
                    title: metadata.title,
                    chapters: metadata.chapters
                )
            }
        } catch {
            throw fail(SessionError(.cannotWrite, wrapping: error))
        }
        var measurement: (integrated: Double?, truePeak: Double)?
        do {
            if isNarrationOnly(timeline) {
                try writeItems(of: timeline, with: writer, progress: progress)
            } else {
                measurement = try writeMix(of: timeline, with: writer, progress: progress)
            }
        } catch {
            throw fail(error)
        }
        let encoding: AudioEncoding
        do {
            encoding = try writer.close()
            if let spool, let stream {
                try stream.copy(fileAt: spool.temporaryPath)
                spool.discard()
            }
        } catch {
            throw fail(SessionError(.cannotWrite, wrapping: error))
        }
        return (temporary, measurement, encoding)
    }

    /// Whether `timeline` is the narration lane alone at unit gains: then items are copied one by
    /// one and silence is written without mixing, the fastest way and the same samples as before layers.
    static func isNarrationOnly(_ timeline: Timeline) -> Bool {
        timeline.overlays.isEmpty && timeline.loudness == nil && timeline.items.allSatisfy { $0.gain == 1 }
    }

    /// Writes the mix of `timeline`'s lanes; returns what the output measured, with loudness on.
    private static func writeMix(
        of timeline: Timeline,
        with writer: any AudioFileSink,
        progress: (Frames) -> Void
    ) throws(SessionError) -> (integrated: Double?, truePeak: Double)? {
        let mixer = try SessionMixer(timeline)
        var buffer: [Float] = []
        while case let frames = try mixer.read(into: &buffer, maximumFrames: blockFrames), frames > 0 {
            if Task.isCancelled { throw SessionError.cancelled }
            do {
                try writer.write(buffer, frames: frames)
            } catch {
                throw SessionError(.cannotWrite, wrapping: error)
            }
            progress(writer.framesWritten)
        }
        guard writer.framesWritten == timeline.totalFrames else {
            throw SessionError(
                .cannotWrite,
                "The mix ended at frame \(writer.framesWritten), not at the timeline's end \(timeline.totalFrames)"
            )
        }
        return mixer.measurement
    }

    private static func writeItems(
        of timeline: Timeline,
        with writer: any AudioFileSink,
        progress: (Frames) -> Void
    ) throws(SessionError) {
        var buffer: [Float] = []
        var builtinBell: [Float]?
        for item in timeline.items {
            do {
                if let audio = item.audio {
                    let stream = try NarrationLane.stream(
                        of: audio,
                        frameCount: item.frameCount,
                        in: timeline,
                        builtinBell: &builtinBell
                    )
                    while case let frames = try stream.read(into: &buffer, maximumFrames: blockFrames), frames > 0 {
                        if Task.isCancelled { break }
                        try writer.write(buffer, frames: frames)
                        progress(writer.framesWritten)
                    }
                } else {
                    try writer.writeSilence(frames: item.frameCount)
                }
            } catch {
                throw SessionError(error.code == .cannotWrite ? .cannotWrite : .unusableClips, describe(item, error))
            }
            if Task.isCancelled { throw SessionError.cancelled }
            let end = item.startFrame + item.frameCount
            guard writer.framesWritten == end else {
                throw SessionError(
                    .cannotWrite,
                    "Item \(item.index) (\(item.kind.rawValue)) ended at frame \(writer.framesWritten), not at its planned end \(end)"
                )
            }
            progress(writer.framesWritten)
        }
    }

    static func describe(_ item: TimelineItem, _ error: AudioError) -> String {
        if let clip = item.clip {
            return "Clip for \(quoted(clip.text)) (key \(clip.key)): \(error)"
        }
        if item.kind == .bell { return "Bell: \(error)" }
        return "\(error)"
    }
}

/// The timeline's JSON form: pretty-printed, keys sorted (so the same timeline is always the same
/// bytes), slashes unescaped, a final newline.
package enum TimelineJSON {
    package static func encode(_ timeline: Timeline) -> Data {
        CanonicalJSON.encode(timeline)
    }
}

/// Writes files of silence, the seed app's `SilenceGenerator`.
package enum SilenceFile {
    /// Writes `frameCount` frames of mono silence at `sampleRate` to `destination`, encoded as
    /// `encoder` says (16-bit WAV by default).
    /// - Throws: ``SessionError``; nothing is left at a path on failure.
    package static func write(
        frameCount: Frames,
        sampleRate: SampleRate,
        to destination: OutputDestination,
        encoder: EncoderSettings = EncoderSettings(),
        replaceExisting: Bool = true
    ) throws(SessionError) {
        if let problem = encoder.problem(sampleRate: sampleRate.hertz, channelCount: 1) {
            throw SessionError(.invalidSetting, "Cannot write \(destination): \(problem)")
        }
        let target = try OutputTarget.resolve(destination, replaceExisting: replaceExisting)
        let silence = Timeline(
            scriptId: "silence",
            title: "",
            seed: 0,
            sampleRate: sampleRate,
            channelCount: .mono,
            items: [TimelineItem(index: 0, startFrame: .zero, frameCount: frameCount, content: .silence)]
        )
        try SessionRenderer.render(
            silence,
            encoder: encoder,
            metadata: AudioMetadata(),
            audio: target,
            timelineJSON: nil
        ) { _ in }
    }
}
