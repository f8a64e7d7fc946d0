import Foundation
package import SessionTimeline

#if canImport(Glibc)
import Glibc
#endif

/// Writes a gapless MP3 (ID3v2 tag with chapters, LAME/Xing tag, frames), encoding only the
/// spans that make sound and writing ready-made silent frames for the digital silence between.
///
/// The file's frames lie on one grid: frame `g` decodes to output frames `g × F ..< (g + 1) × F`,
/// and input frame `i` comes out at `i + D`, where `F` is the MPEG frame size and `D` LAME's
/// encoder delay plus the decoder's 529: exactly as if one LAME encoder had encoded the whole
/// session. A span of sound is encoded by a fresh encoder started on a frame boundary `s` at or
/// before the span, fed the zeros from `s` and `trailingZeros` zeros after the span, so its frame
/// `j` is the file's frame `s / F + j`. Joins are clean by construction:
/// - no bit reservoir crosses one: a fresh encoder's first frame has `main_data_begin` 0, and so
///   does every silent frame, which carries no Huffman data at all;
/// - the MDCT and filterbank overlap at each edge is inside the span's own frames: the encoder
///   starts from the same zero history the decoder has after silent frames, and its last frames
///   encode only zeros, so the frame after them decodes to zero as a silent frame does.
/// Spans closer than `joinGap` frames are encoded as one. Any span with a bed under it is sound,
/// so a layered session is encoded whole. With silence skipping off, the whole input is one span.
///
/// The LAME tag records the whole file's frame count, bytes, seek table, delay (LAME's 576) and
/// padding, so that libmpg123 and ffmpeg decode exactly `frameCount` frames.
package final class MP3FileWriter: AudioFileSink {
    package let path: String
    package var framesWritten: Frames { Frames(position) }
    /// Input frames taken so far, against the frames the file was opened for.
    private var promise: FramePromise
    private var position: Int64 { promise.written }

    private let channels: Int
    private let frameCount: Int64
    private let settings: EncoderSettings
    private let rateControl: MP3Encoder.RateControl
    private let sampleRate: Int
    /// Samples per channel in one MP3 frame.
    private let frameSize: Int64
    /// LAME's encoder delay (576).
    private let encoderDelay: Int64
    /// The MP3 frames after the tag frame: enough that the padding covers the decoder's delay.
    private let totalMP3Frames: Int64
    private var tag: LAMETag
    private let silentFrame: [UInt8]
    /// Where the tag frame starts: after the ID3v2 tag.
    private let tagFrameOffset: Int
    private let output: DescriptorOutput
    private var descriptor: Int32

    /// The next MP3 frame (after the tag frame) to write.
    private var nextMP3Frame: Int64 = 0
    /// Bytes of audio frames written after the tag frame, and their CRC-16.
    private var audioByteCount = 0
    private var musicCRC: UInt16 = 0
    /// Byte offsets (from the tag frame's start) of the frames at 0 %, 1 %, … 99 % of the file.
    private var seekOffsets: [Int] = []
    private var buffered: [UInt8] = []

    /// The threads that encode spans.
    private let workers: MP3SpanWorkers
    private var workersStopped = false
    /// The span being given sound, if any, and the input frames given to it.
    private var openSpan: (span: MP3SpanWorkers.Span, fed: Int64)?
    /// What is still to be written, in file order: silent frames up to a frame, or a span's frames
    /// (how many once the span has ended).
    private var steps: [Step] = []
    private enum Step {
        case silence(upTo: Int64)
        case span(MP3SpanWorkers.Span, frameCount: Int64?)
    }
    /// Zeros after the last sound of the open span, not yet given to its encoder.
    private var pendingZeros: Int64 = 0
    private var zeros: [Float] = []
    /// How many spans were encoded and how many frames were written as silence; tests read them.
    private(set) var encodedSpanCount = 0
    private(set) var silentFrameCount: Int64 = 0

    /// Zeros after a span's last sound that its encoder encodes: enough for the MDCT window and the
    /// filterbank to have only zeros in them by its last two granules.
    private var trailingZeros: Int64 { 3 * frameSize + encoderDelay + 529 }
    /// A silence at least this long ends a span: shorter ones are encoded with the sound around them.
    private var joinGap: Int64 { trailingZeros + encoderDelay + 529 + frameSize }
    /// Zero runs shorter than this inside one block are taken as part of the sound around them.
    private static let shortestSilence = 64

    package init(
        path: String,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        settings: EncoderSettings,
        metadata: AudioMetadata,
        frameCount: Frames
    ) throws(AudioError) {
        self.path = path
        self.channels = channelCount.count
        self.frameCount = frameCount.count
        self.promise = FramePromise(path: path, frameCount: frameCount.count, wording: .file)
        self.settings = settings
        self.sampleRate = sampleRate.hertz
        if let bitrate = settings.bitrate {
            rateControl = .constant(kilobits: bitrate)
        } else {
            rateControl = .variable(quality: settings.quality ?? Self.defaultQuality)
        }
        // A tiny encoder with the tag on gives the stream's tag frame, frame size, delay and header.
        let probe: MP3Encoder
        do {
            probe = try MP3Encoder(sampleRate: sampleRate.hertz, channelCount: channels, rateControl: rateControl)
        } catch {
            throw AudioError(.cannotEncode, path: path, reason: error.reason)
        }
        frameSize = Int64(probe.frameSize)
        encoderDelay = Int64(probe.encoderDelay)
        let silence = [Float](repeating: 0, count: probe.frameSize * channels)
        let sample: [UInt8]
        do {
            try silence.withUnsafeBufferPointer { (buffer) throws(AudioError) in
                try probe.encode(buffer, frames: probe.frameSize)
            }
            try probe.flush()
            sample = probe.takeOutput()
            tag = try LAMETag(template: try probe.tagFrame())
        } catch {
            throw AudioError(.cannotEncode, path: path, reason: error.reason)
        }
        guard let header = MPEGFrameHeader(sample) else {
            throw AudioError(.cannotEncode, path: path, reason: "LAME's first frame has no valid MPEG header")
        }
        silentFrame = SilentMPEGFrame.bytes(like: header, constantRate: settings.bitrate != nil)
        let decodedFrames = self.frameCount + encoderDelay + Self.decoderDelay
        totalMP3Frames = (decodedFrames + frameSize - 1) / frameSize

        let id3 = ID3v2Tag.bytes(metadata, sampleRate: sampleRate)
        tagFrameOffset = id3.count
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(errno)))
        }
        output = DescriptorOutput(descriptor: descriptor)
        let (rate, channels, control) = (sampleRate.hertz, channels, rateControl)
        workers = MP3SpanWorkers(
            count: max(1, min(2, ProcessInfo.processInfo.activeProcessorCount)),
            channels: channels
        ) { () throws(AudioError) in
            try MP3Encoder(sampleRate: rate, channelCount: channels, rateControl: control, writesTag: false)
        }
        buffered.reserveCapacity(Self.bufferSize + 8_192)
        buffered += id3
        // A placeholder for the tag frame, filled in by close().
        buffered += tag.frame
    }

    deinit {
        if !workersStopped { workers.stop() }
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// LAME's `-V` for speech when no quality or bit rate is given: see docs/formats.md.
    package static let defaultQuality = 6.0
    /// The samples libmpg123 and ffmpeg drop after LAME's delay: their synthesis filterbank's.
    static let decoderDelay: Int64 = 529
    private static let bufferSize = 1 << 16

    package func write(_ samples: [Float], frames: Int) throws(AudioError) {
        precondition(
            samples.count >= frames * channels,
            "write(_:frames:) was given fewer samples than frames × channels"
        )
        try promise.checkRoom(for: Int64(frames))
        try samples.withUnsafeBufferPointer { (buffer) throws(AudioError) in
            guard settings.skipsSilence else {
                try sound(UnsafeBufferPointer(rebasing: buffer[0..<(frames * channels)]))
                return
            }
            var index = 0
            while index < frames {
                let start = index
                while index < frames, isSilent(buffer, frame: index) { index += 1 }
                if index > start { try silence(Int64(index - start)) }
                guard index < frames else { break }
                // The sound runs to its last sounding frame before a silence long enough to count.
                let soundStart = index
                var last = index
                index += 1
                while index < frames, index - last <= Self.shortestSilence {
                    if !isSilent(buffer, frame: index) { last = index }
                    index += 1
                }
                index = last + 1
                try sound(UnsafeBufferPointer(rebasing: buffer[(soundStart * channels)..<(index * channels)]))
            }
        }
        try drain(waiting: false)
    }

    package func writeSilence(frames: Frames) throws(AudioError) {
        try promise.checkRoom(for: frames.count)
        if settings.skipsSilence {
            try silence(frames.count)
        } else {
            if zeros.isEmpty { zeros = [Float](repeating: 0, count: 16_384 * channels) }
            var remaining = frames.count
            while remaining > 0 {
                let chunk = Int(min(remaining, 16_384))
                try zeros.withUnsafeBufferPointer { (buffer) throws(AudioError) in
                    try sound(UnsafeBufferPointer(rebasing: buffer[0..<(chunk * channels)]))
                }
                remaining -= Int64(chunk)
            }
        }
        try drain(waiting: false)
    }

    private func isSilent(_ buffer: UnsafeBufferPointer<Float>, frame: Int) -> Bool {
        let base = frame * channels
        for channel in 0..<channels where buffer[base + channel] != 0 { return false }
        return true
    }

    /// Takes `frames` frames of digital silence.
    private func silence(_ frames: Int64) throws(AudioError) {
        promise.record(frames)
        guard openSpan != nil else { return }
        pendingZeros += frames
        if pendingZeros >= joinGap { try endSegment(feedingZeros: trailingZeros) }
    }

    /// Takes interleaved frames that make sound (or may: silence inside a span).
    private func sound(_ samples: UnsafeBufferPointer<Float>) throws(AudioError) {
        let frames = Int64(samples.count / channels)
        if openSpan == nil {
            // Start on the frame boundary at or before the sound, after the frames already planned.
            let start = max(position / frameSize * frameSize, plannedMP3Frames * frameSize)
            guard start <= position else {
                throw AudioError(
                    .cannotEncode,
                    path: path,
                    reason:
                        "sound at frame \(position) falls inside MP3 frames already planned (up to \(plannedMP3Frames))"
                )
            }
            steps.append(.silence(upTo: start / frameSize))
            let span = workers.startSpan(at: start / frameSize)
            steps.append(.span(span, frameCount: nil))
            openSpan = (span, 0)
            encodedSpanCount += 1
            pendingZeros = position - start
        }
        feedZeros(pendingZeros)
        pendingZeros = 0
        if let (span, fed) = openSpan {
            workers.encode(samples, in: span)
            openSpan = (span, fed + frames)
        }
        promise.record(frames)
    }

    private func feedZeros(_ count: Int64) {
        guard let (span, fed) = openSpan, count > 0 else { return }
        workers.encodeZeros(count, in: span)
        openSpan = (span, fed + count)
    }

    /// The frames the spans planned so far end at: where the next span may start.
    private var plannedMP3Frames: Int64 = 0

    /// Gives the open span's encoder `count` of the pending zeros and has it flushed; of its
    /// frames, those up to the one that holds its last input frame plus the delays are written,
    /// the rest encode only zeros.
    private func endSegment(feedingZeros count: Int64) throws(AudioError) {
        feedZeros(min(count, pendingZeros))
        pendingZeros = 0
        guard let (span, fed) = openSpan else { return }
        let frameCount = (fed + encoderDelay + Self.decoderDelay + frameSize - 1) / frameSize
        workers.finish(span)
        if case .span(let last, nil)? = steps.last, last === span {
            steps[steps.count - 1] = .span(span, frameCount: frameCount)
        }
        plannedMP3Frames = span.firstMP3Frame + frameCount
        openSpan = nil
    }

    /// Writes what can be written, in order: silent frames, and the frames spans have made; with
    /// `waiting`, waits for ended spans to finish.
    private func drain(waiting: Bool) throws(AudioError) {
        while let step = steps.first {
            switch step {
            case .silence(let frame):
                try writeSilentFrames(upTo: frame)
            case .span(let span, let frameCount):
                let end = frameCount.map { span.firstMP3Frame + $0 } ?? Int64.max
                var finished = false
                repeat {
                    let taken = try workers.take(from: span, waiting: waiting && frameCount != nil)
                    for frame in taken.frames where nextMP3Frame < end { try writeFrame(frame[...]) }
                    finished = taken.finished
                } while waiting && frameCount != nil && !finished
                guard finished, let frameCount else { return }
                guard nextMP3Frame == end else {
                    throw AudioError(
                        .cannotEncode,
                        path: path,
                        reason:
                            "LAME gave \(nextMP3Frame - span.firstMP3Frame) frames for a span that needs \(frameCount)"
                    )
                }
            }
            steps.removeFirst()
        }
    }

    private func writeSilentFrames(upTo frame: Int64) throws(AudioError) {
        while nextMP3Frame < frame {
            try writeFrame(silentFrame[...])
            silentFrameCount += 1
        }
    }

    private func writeFrame(_ frame: ArraySlice<UInt8>) throws(AudioError) {
        guard nextMP3Frame < totalMP3Frames else {
            throw AudioError(
                .cannotEncode,
                path: path,
                reason: "more than the \(totalMP3Frames) MP3 frames the file needs"
            )
        }
        while seekOffsets.count < 100, Int64(seekOffsets.count) * totalMP3Frames / 100 <= nextMP3Frame {
            seekOffsets.append(tag.frame.count + audioByteCount)
        }
        buffered += frame
        musicCRC = CRC16.update(musicCRC, frame)
        audioByteCount += frame.count
        nextMP3Frame += 1
        if buffered.count >= Self.bufferSize { try flushBuffer() }
    }

    private func flushBuffer() throws(AudioError) {
        guard output.write(buffered) else {
            throw AudioError(.cannotWrite, path: path, reason: output.failure ?? "the write failed")
        }
        buffered.removeAll(keepingCapacity: true)
    }

    /// Encodes what is left, writes the last silent frames and the tag, and closes the file.
    @discardableResult
    package func close() throws(AudioError) -> AudioEncoding {
        guard descriptor >= 0 else { return encoding }
        try promise.checkKept()
        if openSpan != nil { try endSegment(feedingZeros: pendingZeros) }
        steps.append(.silence(upTo: totalMP3Frames))
        try drain(waiting: true)
        workers.stop()
        workersStopped = true
        try flushBuffer()
        let byteCount = tag.frame.count + audioByteCount
        let toc = seekOffsets.map { UInt8(min(255, $0 * 256 / max(byteCount, 1))) }
        tag.fill(
            frameCount: Int(totalMP3Frames),
            byteCount: byteCount,
            toc: toc + [UInt8](repeating: 255, count: 100 - toc.count),
            delay: Int(encoderDelay),
            padding: Int(padding),
            musicCRC: musicCRC
        )
        let written = tag.frame.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(tagFrameOffset)) }
        guard written == tag.frame.count else {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(errno)))
        }
        let result = Glibc.close(descriptor)
        descriptor = -1
        guard result == 0 else {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(errno)))
        }
        return encoding
    }

    /// The frames after the session's last that LAME's tag says to drop (the decoder's 529 included).
    private var padding: Int64 { totalMP3Frames * frameSize - frameCount - encoderDelay }

    /// How the file is encoded, as the timeline records it.
    package var encoding: AudioEncoding {
        AudioEncoding(
            container: "mp3",
            codec: "mp3",
            bitrate: settings.bitrate,
            quality: settings.bitrate == nil ? (settings.quality ?? Self.defaultQuality) : nil,
            encoderDelay: Frames(encoderDelay + Self.decoderDelay),
            padding: Frames(padding - Self.decoderDelay)
        )
    }
}
