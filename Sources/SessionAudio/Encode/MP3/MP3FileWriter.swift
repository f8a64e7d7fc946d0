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
    package var framesWritten: Frames { splicer.framesWritten }

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

    /// Bytes of audio frames written after the tag frame, and their CRC-16.
    private var audioByteCount = 0
    private var musicCRC: UInt16 = 0
    /// Byte offsets (from the tag frame's start) of the frames at 0 %, 1 %, … 99 % of the file.
    private var seekOffsets: [Int] = []
    private var buffered: [UInt8] = []

    /// Encodes the spans of sound and puts the silent frames between them.
    private var splicer: SilenceSplicer<MP3SpanEncoder>!
    /// How many spans were encoded and how many frames were written as silence; tests read them.
    var encodedSpanCount: Int { splicer.encodedSpanCount }
    var silentFrameCount: Int64 { splicer.silentPacketCount }

    package init(
        path: String,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        settings: EncoderSettings,
        metadata: AudioMetadata,
        frameCount: Frames,
        reusing spans: SpanReuse? = nil
    ) throws(AudioError) {
        self.path = path
        self.channels = channelCount.count
        self.frameCount = frameCount.count
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
            throw AudioError(.cannotEncode, path: path, reason: error.reason, libraryCode: error.libraryCode)
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
            throw AudioError(.cannotEncode, path: path, reason: error.reason, libraryCode: error.libraryCode)
        }
        // (The first frame is the tag's, whose bit rate may be above a constant one's.)
        guard let first = MPEGFrameHeader(sample), let header = settings.bitrate.map(first.with(kilobits:)) ?? first
        else {
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
        // Zeros after a span's last sound that its encoder encodes: enough for the MDCT window and
        // the filterbank to have only zeros in them by its last two granules. A silence at least
        // the zeros, both delays and a frame long ends a span.
        let delays = encoderDelay + Self.decoderDelay
        let trailingZeros = 3 * frameSize + delays
        let grid = SilenceSplicer<MP3SpanEncoder>.Grid(
            frameSize: frameSize,
            trailingZeros: trailingZeros,
            joinGap: trailingZeros + delays + frameSize,
            keptDelay: delays,
            totalPackets: totalMP3Frames
        )
        buffered.reserveCapacity(Self.bufferSize + 8_192)
        buffered += id3
        // A placeholder for the tag frame, filled in by close().
        buffered += tag.frame
        splicer = SilenceSplicer(
            grid: grid,
            frameCount: frameCount,
            channels: channels,
            skipsSilence: settings.skipsSilence,
            path: path,
            threadName: "render-session MP3 encoder",
            reusing: spans
        ) { () throws(AudioError) in
            MP3SpanEncoder(
                try MP3Encoder(sampleRate: rate, channelCount: channels, rateControl: control, writesTag: false)
            )
        } emit: { [unowned self] (packet) throws(AudioError) in
            switch packet {
            case .encoded(let frame): try writeFrame(frame)
            case .silent: try writeFrame(silentFrame[...])
            }
        }
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// LAME's `-V` for speech when no quality or bit rate is given: see docs/formats.md.
    package static let defaultQuality = 6.0
    /// The samples libmpg123 and ffmpeg drop after LAME's delay: their synthesis filterbank's.
    static let decoderDelay: Int64 = 529
    private static let bufferSize = 1 << 16

    package func write(_ samples: [Float], frames: Int) throws(AudioError) {
        try splicer.write(samples, frames: frames)
    }

    package func writeSilence(frames: Frames) throws(AudioError) {
        try splicer.writeSilence(frames: frames)
    }

    /// Writes the splicer's next frame, noting its place for the seek table.
    private func writeFrame(_ frame: ArraySlice<UInt8>) throws(AudioError) {
        let nextMP3Frame = splicer.nextPacket
        while seekOffsets.count < 100, Int64(seekOffsets.count) * totalMP3Frames / 100 <= nextMP3Frame {
            seekOffsets.append(tag.frame.count + audioByteCount)
        }
        buffered += frame
        musicCRC = CRC16.update(musicCRC, frame)
        audioByteCount += frame.count
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
        try splicer.finish()
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

/// LAME as a ``SilenceSplicer``'s span encoder: its bytes cut into whole frames.
final class MP3SpanEncoder: SpanEncoder {
    private let encoder: MP3Encoder
    private var splitter = MPEGFrameSplitter()

    init(_ encoder: MP3Encoder) { self.encoder = encoder }

    func encode(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(AudioError) {
        try encoder.encode(samples, frames: frames)
    }

    func flush() throws(AudioError) { try encoder.flush() }

    func takePackets() throws(AudioError) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        let bytes = encoder.takeOutput()
        if !bytes.isEmpty {
            try splitter.append(bytes) { (frame, _) throws(AudioError) in frames.append(Array(frame)) }
        }
        return frames
    }
}
