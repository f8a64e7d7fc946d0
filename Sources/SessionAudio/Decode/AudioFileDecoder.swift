package import Foundation
package import SessionTimeline

#if canImport(Glibc)
import Glibc
#endif

/// What a measurement found out about an audio file before decoding it for real.
package struct AudioMeasurement: Sendable, Equatable {
    /// The file's sample rate.
    package var sampleRate: SampleRate
    /// The file's channel count.
    package var channelCount: ChannelCount
    /// The exact number of frames the file decodes to.
    package var frameCount: Frames
    /// Whether encoder delay and padding from a LAME/Xing tag were removed.
    package var gapless: Bool
    /// What the file is: `MPEG audio` or libsndfile's name for the container.
    package var formatName: String
    /// The EBU R128 integrated loudness of the decoded audio in LUFS; `nil` if it was not measured
    /// (``AudioFileDecoder/measure(path:)``) or if nothing passed the gates (silence, under 400 ms).
    package var loudness: Double?
    /// The decoded audio's true peak in dBTP (``TruePeakMeter``), when it was measured.
    package var truePeak: Double?
    /// A speech clip's integrated loudness after the ``SpeechLeveler``, LUFS, when it was measured.
    package var leveledLoudness: Double?
    /// A sound's loudest 400 ms, LUFS (``LoudnessMeter/loudestMomentary``), when it was measured.
    package var loudestMomentary: Double?
    /// How long a sound's strike lasts, frames (``LoudnessMeter/strikeFrameCount``), when measured.
    package var strikeFrames: Frames?

    package init(
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        frameCount: Frames,
        gapless: Bool,
        formatName: String,
        loudness: Double? = nil
    ) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.frameCount = frameCount
        self.gapless = gapless
        self.formatName = formatName
        self.loudness = loudness
    }
}

/// Decodes an audio file to 32-bit float frames, whatever its format, detected by content:
/// MPEG audio through libmpg123 (gapless), AAC and ALAC in MP4, AAC in CAF and ADTS AAC through
/// libavformat and libavcodec (``MediaFileDecoder``, gapless where the container says so),
/// everything else through libsndfile (Ogg Opus too, unless a caller measuring its own file asks
/// for libavcodec's decoder).
package final class AudioFileDecoder {
    private enum Backend {
        case mpeg(MPEGDecoder)
        case soundFile(SoundFileReader)
        case media(MediaFileDecoder)
    }

    private let backend: Backend
    /// The file being decoded.
    package let path: String
    /// The file's sample rate.
    package let sampleRate: SampleRate
    /// The file's channel count.
    package let channelCount: ChannelCount
    /// Whether encoder delay and padding are being removed: a LAME/Xing tag's, an MP4 edit
    /// list's or iTunSMPB's, a CAF packet table's.
    package let gapless: Bool
    /// What the file is: `MPEG audio`, `MP4`, `CAF` (AAC), `ADTS AAC`, or libsndfile's name for the container.
    package let formatName: String

    /// The ``formatName`` of MP3, MPEG audio layer 3 (layers 1 and 2 are named with their layer).
    package static let mp3FormatName = "MPEG audio"

    /// Opens `path`, choosing the decoder by the file's first bytes, never by its name.
    ///
    /// This is the one place audio files are opened for reading (sounds, clips, cache entries):
    /// the file is opened once, checked to be a regular file on that descriptor, and decoded from
    /// it, so a FIFO or a device (`/dev/stdin`) is an error at once, never a wait.
    ///
    /// With `opusThroughLibavcodec`, an Ogg Opus file is decoded by libavcodec's own Opus decoder
    /// rather than libsndfile's libopus: for measuring a file this program wrote. Debian 12's
    /// libopus 1.3.1 runs its CPU detection (`cpuid`) several times per packet, which in a virtual
    /// machine traps to the hypervisor each time: a 10-minute file decoded in 1.95 s through it
    /// and in 0.66 s through libavcodec, whose decoder ffmpeg's meter uses too.
    ///
    /// `inside` is the folder a name found the file in (a sound library's): the file opened must
    /// lie inside it, checked on the open file (``FileSystem/placeOutside(of:openedThrough:folder:)``),
    /// so a file swapped for a link leading out after the lookup is refused, never read.
    package init(path: String, inside folder: String? = nil, opusThroughLibavcodec: Bool = false) throws(AudioError) {
        let descriptor = try Self.openRegularFile(path, inside: folder)
        defer { close(descriptor) }
        let prefix = try Self.firstBytes(of: descriptor, path: path)
        let rate: Int
        let channels: Int
        let bytes = { Self.bytes(of: descriptor, at: $0, count: $1) }
        let opus: MediaContainer? = opusThroughLibavcodec && MediaContainer.startsAsOggOpus(bytes) ? .oggOpus : nil
        if let container = opus ?? MediaContainer(prefix: prefix, bytes: bytes) {
            let decoder = try MediaFileDecoder(
                descriptor: try Self.duplicate(descriptor, path: path),
                path: path,
                container: container
            )
            backend = .media(decoder)
            (rate, channels) = (decoder.sampleRate, decoder.channelCount)
            gapless = decoder.gapless
            formatName = container.formatName
        } else if Self.isSoundFileContainer(prefix) {
            let reader = try SoundFileReader(descriptor: try Self.duplicate(descriptor, path: path), path: path)
            backend = .soundFile(reader)
            (rate, channels) = (reader.sampleRate, reader.channelCount)
            gapless = false
            formatName = reader.formatName
        } else {
            let decoder = try MPEGDecoder(descriptor: try Self.duplicate(descriptor, path: path), path: path)
            backend = .mpeg(decoder)
            (rate, channels) = (decoder.sampleRate, decoder.channelCount)
            gapless = decoder.gapless
            formatName =
                decoder.layer == 3 ? Self.mp3FormatName : "MPEG audio layer \(decoder.layer) (MP\(decoder.layer))"
        }
        self.path = path
        (sampleRate, channelCount) = try Self.checkedFormat(rate: rate, channels: channels, path: path)
    }

    /// `rate` and `channels` as typed values, or the error that names what is out of range.
    static func checkedFormat(
        rate: Int,
        channels: Int,
        path: String
    ) throws(AudioError) -> (SampleRate, ChannelCount) {
        guard let channelCount = ChannelCount(channels) else {
            throw AudioError(
                .unsupportedFormat,
                path: path,
                reason:
                    "the file reports \(channels) channels, outside \(ChannelCount.supported.lowerBound)…\(ChannelCount.supported.upperBound)"
            )
        }
        guard let sampleRate = SampleRate(rate) else {
            throw AudioError(
                .unsupportedFormat,
                path: path,
                reason:
                    "its sample rate of \(rate) Hz is outside the supported \(SampleRate.supported.lowerBound)…\(SampleRate.supported.upperBound) Hz"
            )
        }
        return (sampleRate, channelCount)
    }

    /// Whether the file is AAC or ALAC (MP4, CAF, ADTS), read through libavformat and libavcodec.
    package var readsThroughLibavformat: Bool {
        if case .media = backend { return true }
        return false
    }

    /// Whether the file at `path` starts as AAC or ALAC in MP4 or CAF, or as ADTS AAC, judged by
    /// its first bytes alone (a cut or damaged one too); `false` when it cannot be read.
    package static func startsAsAAC(path: String) -> Bool {
        guard let descriptor = try? openRegularFile(path) else { return false }
        defer { close(descriptor) }
        guard let prefix = try? firstBytes(of: descriptor, path: path) else { return false }
        return MediaContainer(prefix: prefix, bytes: { bytes(of: descriptor, at: $0, count: $1) }) != nil
    }

    /// Whether `path` is MPEG audio of layer 1 or 2 (MP1, MP2), which libmpg123 decodes but a
    /// player given a `.mp3` file may not: a speech server's MP2 answer is stored as MP3.
    package static func isMPEGLayer1Or2(path: String) -> Bool {
        (try? AudioFileDecoder(path: path))?.isMPEGLayer1Or2 ?? false
    }

    /// The layer (1, 2 or 3) of MPEG audio; `nil` for every other format.
    package var mpegLayer: Int? {
        if case .mpeg(let mpeg) = backend { mpeg.layer } else { nil }
    }

    /// Whether this is MPEG audio of layer 1 or 2 (``isMPEGLayer1Or2(path:)``).
    package var isMPEGLayer1Or2: Bool {
        mpegLayer == 1 || mpegLayer == 2
    }

    /// Decodes up to `maximumFrames` frames into `samples`, interleaved from index 0, growing it if needed.
    /// Returns the number of frames decoded; 0 only at the end.
    package func read(into samples: inout [Float], maximumFrames: Int) throws(AudioError) -> Int {
        switch backend {
        case .mpeg(let decoder): try decoder.read(into: &samples, maximumFrames: maximumFrames)
        case .soundFile(let reader): try reader.read(into: &samples, maximumFrames: maximumFrames)
        case .media(let decoder): try decoder.read(into: &samples, maximumFrames: maximumFrames)
        }
    }

    /// Measures `path` exactly: its format, and its length as decoded; ``AudioMeasurement/loudness``
    /// stays `nil`.
    ///
    /// For MPEG audio the length comes from a scan of every frame header (nothing is decoded);
    /// for other formats the file is read through, since a header's length is only a claim (an
    /// MP4 or CAF stream short of its declared length is an error at its end).
    /// Zero frames is an error: libmpg123 reports success for empty and non-audio files.
    package static func measure(path: String, inside folder: String? = nil) throws(AudioError) -> AudioMeasurement {
        let decoder = try AudioFileDecoder(path: path, inside: folder)
        let frameCount: Frames
        switch decoder.backend {
        case .mpeg(let mpeg):
            frameCount = Frames(try mpeg.scannedFrameCount())
        case .soundFile, .media:
            frameCount = try decoder.decodeToEnd(metering: nil)
            try decoder.checkComplete(frameCount: frameCount)
        }
        return try decoder.measurement(frameCount: frameCount)
    }

    /// Measures `path`'s format, with the length a full decode of exactly these bytes found before
    /// (a sidecar's, whose SHA-256 the caller checked): the file is opened, nothing is decoded.
    package static func measure(
        path: String,
        inside folder: String? = nil,
        decodedFrameCount: Frames
    ) throws(AudioError) -> AudioMeasurement {
        try AudioFileDecoder(path: path, inside: folder).measurement(frameCount: decodedFrameCount)
    }

    /// Decodes `path` in full, as a render would (gapless for MPEG audio), and measures its format,
    /// its length as decoded and its integrated loudness (``LoudnessMeter``); `asSound`, its true
    /// peak, its loudest 400 ms and its strike's length too (a sound's: its gain levels by the
    /// second and keeps the first under the limiter; speech waits for the third).
    /// With `levelsSpeech`, a speech clip's: it is decoded a second time through the
    /// ``SpeechLeveler`` and measured again (``AudioMeasurement/leveledLoudness``).
    package static func measureLoudness(
        path: String,
        inside folder: String? = nil,
        asSound: Bool = false,
        levelsSpeech: Bool = false
    ) throws(AudioError)
        -> AudioMeasurement
    {
        let decoder = try AudioFileDecoder(path: path, inside: folder)
        let meter = try LoudnessMeter(
            sampleRate: decoder.sampleRate,
            channelCount: decoder.channelCount,
            momentary: asSound
        )
        let peakMeter = asSound ? TruePeakMeter(channelCount: decoder.channelCount) : nil
        let frameCount = try decoder.decodeToEnd(metering: meter, peakMeter: peakMeter)
        try decoder.checkComplete(frameCount: frameCount)
        var measurement = try decoder.measurement(frameCount: frameCount)
        measurement.loudness = meter.integratedLoudness
        measurement.loudestMomentary = meter.loudestMomentary
        measurement.strikeFrames = meter.strikeFrameCount.map { Frames($0) }
        measurement.truePeak = peakMeter.flatMap { $0.truePeak > 0 ? $0.truePeakDecibels : nil }
        if levelsSpeech {
            measurement.leveledLoudness = try leveledLoudness(path: path, inside: folder, reference: measurement)
        }
        return measurement
    }

    /// The integrated loudness of `path` through the ``SpeechLeveler`` set from its measured
    /// loudness; `nil` when it has none. The leveled stream must be as long as the measured one.
    private static func leveledLoudness(
        path: String,
        inside folder: String?,
        reference: AudioMeasurement
    ) throws(AudioError) -> Double? {
        guard let loudness = reference.loudness else { return nil }
        let decoder = try AudioFileDecoder(path: path, inside: folder)
        let leveler = SpeechLeveler(decoder, reference: loudness)
        let meter = try LoudnessMeter(sampleRate: decoder.sampleRate, channelCount: decoder.channelCount)
        var frameCount: Int64 = 0
        var buffer: [Float] = []
        while case let frames = try leveler.read(into: &buffer, maximumFrames: 16_384), frames > 0 {
            frameCount += Int64(frames)
            buffer.withUnsafeBufferPointer { meter.add($0, frames: frames) }
        }
        guard frameCount == reference.frameCount.count else {
            throw AudioError(
                .cannotDecode,
                path: path,
                reason:
                    "the file decodes to \(frameCount) frames the second time, not \(reference.frameCount); was it replaced?"
            )
        }
        return meter.integratedLoudness
    }

    /// Throws if a libsndfile file held less audio than its header declares; nothing for MPEG audio.
    private func checkComplete(frameCount: Frames) throws(AudioError) {
        if case .soundFile(let reader) = backend {
            if let shortfall = reader.dataShortfall {
                throw AudioError(
                    .truncated,
                    path: path,
                    reason:
                        "the file is cut short: its header declares \(shortfall.declared) bytes of audio, it holds \(shortfall.actual)"
                )
            }
            if reader.declaredFrameCount > frameCount.count {
                throw AudioError(
                    .truncated,
                    path: path,
                    reason:
                        "the file is cut short: its header declares \(reader.declaredFrameCount) frames, it holds \(frameCount)"
                )
            }
        }
    }

    /// Decodes `path` to its end and measures what came out, its loudness too (in the same pass),
    /// and its loudness through the ``SpeechLeveler`` (a second pass): the check a clip passes
    /// before it is stored in the cache. Fails unless the file is MPEG audio
    /// with at least one frame.
    package static func verifyMPEG(path: String) throws(AudioError) -> AudioMeasurement {
        let decoder = try AudioFileDecoder(path: path)
        guard decoder.mpegLayer == 3 else {
            throw AudioError(
                .unsupportedFormat,
                path: path,
                reason: "the file is \(decoder.formatName), not MP3 (MPEG audio layer 3)"
            )
        }
        let meter = try LoudnessMeter(sampleRate: decoder.sampleRate, channelCount: decoder.channelCount)
        var measurement = try decoder.measurement(frameCount: decoder.decodeToEnd(metering: meter))
        measurement.loudness = meter.integratedLoudness
        measurement.leveledLoudness = try leveledLoudness(path: path, inside: nil, reference: measurement)
        return measurement
    }

    /// Reads the rest of the file, feeding it to `meter` if there is one; returns how many frames it held.
    private func decodeToEnd(
        metering meter: LoudnessMeter?,
        peakMeter: TruePeakMeter? = nil
    ) throws(AudioError)
        -> Frames
    {
        var frameCount = Frames.zero
        var buffer: [Float] = []
        while case let frames = try read(into: &buffer, maximumFrames: 16_384), frames > 0 {
            frameCount += Frames(Int64(frames))
            if let meter { buffer.withUnsafeBufferPointer { meter.add($0, frames: frames) } }
            peakMeter?.add(buffer, frames: frames)
        }
        return frameCount
    }

    /// This file's measurement with `frameCount` frames; zero frames is an error, since
    /// libmpg123 reports success for empty and non-audio files.
    private func measurement(frameCount: Frames) throws(AudioError) -> AudioMeasurement {
        guard frameCount > .zero else {
            throw AudioError(.noAudio, path: path, reason: "the file decodes to no audio frames")
        }
        return AudioMeasurement(
            sampleRate: sampleRate,
            channelCount: channelCount,
            frameCount: frameCount,
            gapless: gapless,
            formatName: formatName
        )
    }

    /// Opens `path` for reading and checks, on the open descriptor (no window between a check and
    /// the open), that it is a regular file, so that the error says what is really wrong
    /// (libsndfile says "does not exist" for much else). `O_NONBLOCK` makes opening a FIFO return
    /// at once rather than wait for a writer. The corresponding system calls are `open` and `fstat`.
    /// `noun` says what the file should have been, for a folder: "an audio file". With `inside`,
    /// the file opened must lie inside that folder (``FileSystem/placeOutside(of:openedThrough:folder:)``).
    static func openRegularFile(
        _ path: String,
        noun: String = "an audio file",
        inside folder: String? = nil
    ) throws(AudioError) -> Int32 {
        let descriptor = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason =
                switch errno {
                case ENOENT, ENOTDIR: "no such file"
                case EACCES, EPERM: "the file is not readable (permission denied)"
                case let code: String(cString: strerror(code))
                }
            throw AudioError(.cannotOpen, path: path, reason: reason)
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw AudioError(.cannotOpen, path: path, reason: reason)
        }
        let kind: String? =
            switch status.st_mode & S_IFMT {
            case S_IFREG: nil
            case S_IFDIR: "it is a directory, not \(noun)"
            case S_IFIFO: "it is a FIFO, not a regular file"
            case S_IFCHR: "it is a character device, not a regular file"
            case S_IFBLK: "it is a block device, not a regular file"
            case S_IFSOCK: "it is a socket, not a regular file"
            default: "it is not a regular file"
            }
        if let problem = kind
            ?? folder.flatMap({ FileSystem.placeOutside(of: descriptor, openedThrough: path, folder: $0) })
        {
            close(descriptor)
            throw AudioError(.cannotOpen, path: path, reason: problem)
        }
        return descriptor
    }

    /// The bytes of the regular file at `path` (a library's `sounds.json`), at most `limit` of
    /// them: a FIFO or device is refused at once rather than read from, and a larger file is
    /// refused without being read to its end. The corresponding system calls are `open`, `fstat`
    /// and `read`.
    package static func contentsOfRegularFile(
        _ path: String,
        noun: String,
        limit: Int
    ) throws(AudioError) -> Data {
        let descriptor = try openRegularFile(path, noun: noun)
        defer { close(descriptor) }
        var data = Data()
        var block = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = block.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw AudioError(.cannotOpen, path: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 { return data }
            data.append(contentsOf: block[..<count])
            guard data.count <= limit else {
                throw AudioError(
                    .cannotOpen,
                    path: path,
                    reason: "it is larger than \(limit >> 20) MiB, the most it may be"
                )
            }
        }
    }

    /// A descriptor of its own for a decoder, which closes it.
    private static func duplicate(_ descriptor: Int32, path: String) throws(AudioError) -> Int32 {
        let copy = dup(descriptor)
        guard copy >= 0 else { throw AudioError(.cannotOpen, path: path, reason: String(cString: strerror(errno))) }
        _ = fcntl(copy, F_SETFD, FD_CLOEXEC)
        return copy
    }

    /// Up to `count` bytes of the file open at `descriptor`, from `offset`; fewer at its end, none on error.
    private static func bytes(of descriptor: Int32, at offset: Int64, count: Int) -> [UInt8] {
        guard offset >= 0, count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        return read > 0 ? Array(bytes.prefix(read)) : []
    }

    /// The first bytes of the file open at `descriptor`: enough for every container's signature
    /// (CAF's format ID is at byte 28).
    private static func firstBytes(of descriptor: Int32, path: String) throws(AudioError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else {
            throw AudioError(.cannotOpen, path: path, reason: String(cString: strerror(errno)))
        }
        guard count > 0 else { throw AudioError(.noAudio, path: path, reason: "the file is empty") }
        return Array(bytes[..<count])
    }

    /// Whether `prefix` starts like a container libsndfile reads (RIFF/RF64 WAV, AIFF, FLAC, Ogg, CAF, …).
    static func isSoundFileContainer(_ prefix: [UInt8]) -> Bool {
        let magics: [[UInt8]] = [
            "RIFF", "RIFX", "RF64", "BW64", "FORM", "fLaC", "OggS", "caff", ".snd", "wvpk", "riff",
        ]
        .map { Array($0.utf8) }
        return magics.contains { prefix.starts(with: $0) }
    }
}
