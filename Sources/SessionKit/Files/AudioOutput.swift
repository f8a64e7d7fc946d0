import Foundation
internal import SessionAudio
internal import SessionTimeline

/// What ``AudioOutput/write(_:to:encoder:metadata:progress:)`` wrote.
struct WrittenAudio {
    /// How the audio was encoded, as a timeline records it.
    let encoding: AudioEncoding
    /// The temporary holding a file's audio, to be committed with the outputs written beside it,
    /// or discarded; `nil` for a stream, which is written straight through.
    let pending: AtomicFile?
}

/// The one way audio is written: session renders, queue files, silence files and the sound
/// library's sounds all go through ``write(_:to:encoder:metadata:progress:)``.
enum AudioOutput {
    /// How many frames move through memory at a time.
    static let blockFrames = 16_384

    /// Encodes `source` as `encoder` says, tagged with `metadata`, to `target`, block by block.
    ///
    /// A file is written beside its path under a temporary name, handed back to be committed, so
    /// that an error, a cancellation or a kill never leaves a partial file. Standard output, FIFOs
    /// and devices cannot be renamed into, so they are written straight through: a WAV with a
    /// header that is right from the first byte (the length is known), other formats (whose headers
    /// and tags are finished at the end) through a spool file that is copied when complete.
    ///
    /// - Parameters:
    ///   - spans: where an MP3 or AAC writer finds the spans of the last encoding of the same
    ///     session (and keeps its own), to copy those that did not change.
    ///   - progress: called after each block with the frames written so far.
    /// - Throws: ``SessionError``; nothing is left behind on failure.
    static func write(
        _ source: inout some FrameSource,
        to target: OutputTarget,
        encoder: EncoderSettings,
        metadata: AudioMetadata,
        reusing spans: SpanReuse? = nil,
        progress: (Frames) -> Void = { _ in }
    ) throws(SessionError) -> WrittenAudio {
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
        let spool =
            stream != nil && encoder.format != .wav
            ? AtomicFile(destination: NSTemporaryDirectory() + "/render-session-spool.\(encoder.format.fileExtension)")
            : nil
        func fail(_ error: SessionError) -> SessionError {
            temporary?.discard()
            spool?.discard()
            // The file being written is a hidden temporary beside the output: a message names
            // the path the user gave instead.
            guard let temporary else { return error }
            return error.naming(temporary.temporaryPath, as: temporary.destination)
        }

        let sink: any AudioFileSink
        do {
            if let file = temporary ?? spool {
                sink = try AudioFileWriter.create(
                    path: file.temporaryPath,
                    sampleRate: source.sampleRate,
                    channelCount: source.channelCount,
                    settings: encoder,
                    metadata: metadata,
                    frameCount: source.frameCount,
                    reusing: spans
                )
            } else {
                sink = try SoundFileWriter(
                    streamingTo: (stream ?? .standardOutput(name: name)).descriptor,
                    name: name,
                    sampleRate: source.sampleRate,
                    channelCount: source.channelCount,
                    format: encoder.sampleFormat,
                    frameCount: source.frameCount,
                    metadata: metadata
                )
            }
        } catch {
            throw fail(SessionError(.cannotWrite, wrapping: error))
        }
        do {
            try copy(&source, into: sink, progress: progress)
        } catch {
            throw fail(error)
        }
        let encoding: AudioEncoding
        do {
            // The sink refuses to close short of the frames it was opened for.
            encoding = try sink.close()
            if let spool, let stream {
                try stream.copy(fileAt: spool.temporaryPath)
                spool.discard()
            }
        } catch {
            throw fail(SessionError(.cannotWrite, wrapping: error))
        }
        return WrittenAudio(encoding: encoding, pending: temporary)
    }

    /// Hands every block of `source` to `sink`, checking for cancellation between blocks.
    private static func copy(
        _ source: inout some FrameSource,
        into sink: any AudioFileSink,
        progress: (Frames) -> Void
    ) throws(SessionError) {
        var buffer: [Float] = []
        while case let block = try source.next(into: &buffer, maximumFrames: blockFrames), block != .end {
            if Task.isCancelled { throw SessionError.cancelled }
            do {
                switch block {
                case .samples(let frames): try sink.write(buffer, frames: frames)
                case .silence(let frames): try sink.writeSilence(frames: frames)
                case .end: break
                }
            } catch {
                throw source.writeFailure(error)
            }
            progress(sink.framesWritten)
        }
        if Task.isCancelled { throw SessionError.cancelled }
    }
}
