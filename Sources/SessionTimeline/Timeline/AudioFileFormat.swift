/// The kinds of file a session's audio can be written as.
///
/// Each is chosen by the output's extension or named outright; ``problem(sampleRate:channelCount:)``
/// says before any work whether a session fits, naming the values the format allows.
public enum AudioFileFormat: String, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// RIFF WAVE (RF64 past 4 GiB), 16-bit, 24-bit or float samples.
    case wav
    /// FLAC, lossless, 16 or 24 bits.
    case flac
    /// MPEG-1/2 Layer III, with a LAME tag that makes it gapless.
    case mp3
    /// Opus in Ogg, decoded at 48 kHz.
    case opus
    /// Vorbis in Ogg.
    case vorbis = "ogg"
    /// AAC-LC in MP4, with an edit list and `iTunSMPB` that make it gapless.
    case m4a
    /// The same as ``m4a`` with the audiobook brand (`M4B `), which players file as a book.
    case m4b

    /// The format a file name's extension names: `.wav`/`.wave`, `.flac`, `.mp3`, `.opus`,
    /// `.ogg`/`.oga`, `.m4a`/`.mp4`, `.m4b`.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "wav", "wave": self = .wav
        case "flac": self = .flac
        case "mp3": self = .mp3
        case "opus": self = .opus
        case "ogg", "oga": self = .vorbis
        case "m4a", "mp4": self = .m4a
        case "m4b": self = .m4b
        default: return nil
        }
    }

    /// The format an ``AudioEncoding/codec`` is written in: `pcm_s16le` → WAV, `vorbis` → Ogg Vorbis.
    package init?(codec: String) {
        switch codec {
        case "flac": self = .flac
        case "mp3": self = .mp3
        case "opus": self = .opus
        case "vorbis": self = .vorbis
        case "aac": self = .m4a
        case _ where codec.hasPrefix("pcm_"): self = .wav
        default: return nil
        }
    }

    /// Whether a file of this format and one of `other` share a container: Opus and Vorbis are
    /// both Ogg, which a file's name does not tell apart (`.ogg` may hold Opus).
    package func isSameContainer(as other: AudioFileFormat) -> Bool {
        self == other || (self.isOgg && other.isOgg) || (self.isMP4 && other.isMP4)
    }

    private var isOgg: Bool { self == .opus || self == .vorbis }
    private var isMP4: Bool { self == .m4a || self == .m4b }

    /// The format a path's extension names, if any.
    public init?(path: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        self.init(fileExtension: String(name[name.index(after: dot)...]))
    }

    /// `wav`, `flac`, `mp3`, `opus`, `ogg`, `m4a`, `m4b`: the value `--format` takes.
    public var description: String { rawValue }

    /// The extension a file in this format is given.
    public var fileExtension: String { rawValue }

    /// Whether decoding gives back other samples than were encoded.
    public var isLossy: Bool {
        switch self {
        case .wav, .flac: false
        case .mp3, .opus, .vorbis, .m4a, .m4b: true
        }
    }

    /// The container's name, as the timeline records it: `wav`, `flac`, `mp3`, `ogg`, `mp4`.
    package var containerName: String {
        switch self {
        case .wav: "wav"
        case .flac: "flac"
        case .mp3: "mp3"
        case .opus, .vorbis: "ogg"
        case .m4a, .m4b: "mp4"
        }
    }

    /// The sample rates the format can hold, or `nil` for any ``SampleRate`` supports.
    package var sampleRates: [Int]? {
        switch self {
        case .wav: nil
        case .flac: nil
        case .mp3: [8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000]
        // The rate every Opus decoder outputs: the timeline counts in it, so decoding gives back its frames.
        case .opus: [48_000]
        case .vorbis: nil
        // The sampling frequency index table of ISO 14496-3, which AAC-LC's header can name.
        case .m4a, .m4b:
            [8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000, 64_000, 88_200, 96_000]
        }
    }

    /// The rate a session is rendered at in this format when no rate is asked for, or `nil` to keep
    /// the clips' own rate.
    package var preferredSampleRate: SampleRate? {
        self == .opus ? 48_000 : nil
    }

    /// The most channels the format can hold.
    package var maximumChannelCount: Int {
        switch self {
        case .wav: ChannelCount.supported.upperBound
        case .flac: 8
        case .mp3, .opus, .m4a, .m4b: 2
        case .vorbis: 8
        }
    }

    /// Why a session at `sampleRate` (when known) with `channelCount` channels cannot be written
    /// in this format, naming the values it allows; `nil` when it can.
    package func problem(sampleRate: Int?, channelCount: Int) -> String? {
        if channelCount > maximumChannelCount {
            return "\(self) cannot hold \(channelCount) channels; it takes 1 to \(maximumChannelCount)"
        }
        guard let sampleRate else { return nil }
        if let rates = sampleRates, !rates.contains(sampleRate) {
            let list = rates.map(String.init).joined(separator: ", ")
            return "\(self) cannot hold \(sampleRate) Hz; it takes \(rates.count == 1 ? "" : "one of ")\(list) Hz"
        }
        if self == .flac, sampleRate > 655_350 {
            return "flac cannot hold \(sampleRate) Hz; it takes at most 655350 Hz"
        }
        if self == .vorbis, !(8_000...192_000).contains(sampleRate) {
            return "ogg (Vorbis) cannot hold \(sampleRate) Hz; it takes 8000 to 192000 Hz"
        }
        return nil
    }
}

/// How a session's audio is encoded: the format and the codec's settings, checked when made.
///
/// `bitrate` asks for a constant bit rate, `quality` for a variable one; with neither, each lossy
/// format uses the variable quality documented in docs/formats.md as right for speech. A value
/// holds only settings the format takes, so the writers need not check them again; what depends on
/// the session's rate and channel count is ``problem(sampleRate:channelCount:)``, asked once when
/// both are known.
package struct EncoderSettings: Sendable, Equatable, Encodable {
    /// The file format.
    package let format: AudioFileFormat
    /// How samples are stored, for WAV (16, 24 or float) and FLAC (16 or 24).
    package let sampleFormat: SampleFormat
    /// A constant bit rate in kb/s (MP3, Opus; Vorbis: the nominal rate; AAC: the average its
    /// rate control holds).
    package let bitrate: Int?
    /// A variable-rate quality: MP3 `-V` 0 (best) … 9, Vorbis `-q` −1 … 10, Opus the target kb/s,
    /// AAC FFmpeg's `-q:a` 0.1 … 2, FLAC the compression level 0 … 8.
    package let quality: Double?
    /// Whether an MP3 or an AAC file encodes only the spans that make sound and writes ready-made
    /// silent packets for the rest. It decodes to the same length either way; off only to compare.
    package let skipsSilence: Bool

    /// The settings, if the format takes them.
    /// - Throws: ``Problem`` naming the rule broken and the values allowed.
    package init(
        format: AudioFileFormat = .wav,
        sampleFormat: SampleFormat = .pcm16,
        bitrate: Int? = nil,
        quality: Double? = nil,
        skipsSilence: Bool = true
    ) throws(Problem) {
        self.init(
            unchecked: format,
            sampleFormat: sampleFormat,
            bitrate: bitrate,
            quality: quality,
            skipsSilence: skipsSilence
        )
        if let rule = Self.rule(brokenBy: self) { throw Problem(rule) }
    }

    private init(
        unchecked format: AudioFileFormat,
        sampleFormat: SampleFormat,
        bitrate: Int?,
        quality: Double?,
        skipsSilence: Bool
    ) {
        self.format = format
        self.sampleFormat = sampleFormat
        self.bitrate = bitrate
        self.quality = quality
        self.skipsSilence = skipsSilence
    }

    /// 16-bit WAV, the default.
    package static let wav = EncoderSettings(
        unchecked: .wav,
        sampleFormat: .pcm16,
        bitrate: nil,
        quality: nil,
        skipsSilence: true
    )

    /// 24-bit FLAC at the default compression level: the sound library's own sounds.
    package static let flac24 = EncoderSettings(
        unchecked: .flac,
        sampleFormat: .pcm24,
        bitrate: nil,
        quality: nil,
        skipsSilence: true
    )

    /// Settings a writer cannot use, as a phrase with the other settings it mentions marked
    /// (``SettingReference``): `flac holds 16- or 24-bit samples (s16, s24), not f32`.
    package struct Problem: Error, Equatable, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }

    /// How far under the true-peak ceiling the limiter aims for this encoding at `sampleRate`, in
    /// dB: room for the peaks the codec adds and for the resampling a 48 kHz player does, so that
    /// the ceiling holds on what a decoder outputs, as ffmpeg's `ebur128` meter reads it.
    ///
    /// Measured (`scripts/loudness-table`, docs/formats.md) on the 10-minute fixture in Piper's
    /// voice over the rain bed with gongs, the limiter aiming at the ceiling: the decoded true peak
    /// came out 0.4 dB over it for MP3 at `-V 6` and none at constant rates, 1.4 dB for Opus at
    /// 24 kb/s (1.1 at a constant 24, 0.6 at 64), 0.7 dB for Vorbis at `-q 3`, and up to 0.3 dB
    /// for PCM at 22,050 Hz under heavy limiting (the resampling to 48 kHz; 0.1 dB of room keeps
    /// the program-anchored fixture, limited by 21 dB, at −1.0). The room is about that: more
    /// would cost the voice loudness in the limiter on every render, while the render measures a
    /// lossy file as decoded and encodes it again, with more room, on the rare transient that
    /// still goes over.
    package func truePeakHeadroom(sampleRate: SampleRate) -> Double {
        switch format {
        case .wav, .flac:
            sampleRate.hertz == 48_000 ? 0 : 0.1
        case .mp3:
            bitrate == nil ? 0.5 : 0.3
        case .opus:
            switch bitrate ?? Int((quality ?? 24).rounded()) {
            case ..<40: 1.5
            case ..<80: 0.8
            default: 0.6
            }
        case .vorbis, .m4a, .m4b:
            0.8
        }
    }

    /// The bit rates `--bitrate` takes for the format, in kb/s.
    package var bitrateRange: ClosedRange<Int>? { Self.bitrateRange(of: format) }

    private static func bitrateRange(of format: AudioFileFormat) -> ClosedRange<Int>? {
        switch format {
        case .wav, .flac: nil
        case .mp3: 8...320
        case .opus: 6...256
        case .vorbis: 32...500
        case .m4a, .m4b: 8...576
        }
    }

    /// The qualities `--quality` takes for the format.
    package var qualityRange: ClosedRange<Double> {
        switch format {
        case .wav: 0...0
        case .flac: 0...8
        case .mp3: 0...9
        case .opus: 6...256
        case .vorbis: -1...10
        case .m4a, .m4b: 0.1...2
        }
    }

    /// Why `settings` cannot be used whatever the session, naming the values allowed; `nil` when they can.
    private static func rule(brokenBy settings: EncoderSettings) -> String? {
        let format = settings.format
        if settings.bitrate != nil, settings.quality != nil {
            return
                "give \(SettingReference.bitrate.marker) (constant) or \(SettingReference.quality.marker) (variable), not both"
        }
        if let bitrate = settings.bitrate {
            guard let range = settings.bitrateRange else { return "\(format) has no bit rate to set" }
            if !range.contains(bitrate) {
                return "\(format) takes a bit rate of \(range.lowerBound) to \(range.upperBound) kb/s, not \(bitrate)"
            }
        }
        if let quality = settings.quality {
            if format == .wav { return "wav has no quality to set" }
            let range = settings.qualityRange
            if !range.contains(quality) {
                return
                    "\(format) takes a quality of \(number(range.lowerBound)) to \(number(range.upperBound)), not \(number(quality))"
            }
        }
        if format == .flac, settings.sampleFormat == .float32 {
            return "flac holds 16- or 24-bit samples (s16, s24), not f32"
        }
        if format.isLossy, settings.sampleFormat != .pcm16 {
            return "\(format) takes no sample format; s24 and f32 are for wav and flac"
        }
        return nil
    }

    /// Why these settings cannot write a session at `sampleRate` (when known) with `channelCount`
    /// channels, naming the values allowed: the format's
    /// ``AudioFileFormat/problem(sampleRate:channelCount:)``, then an MP3 bit rate the session's
    /// rate does not have (``mp3Bitrates(sampleRate:)``); `nil` when they can.
    package func problem(sampleRate: Int?, channelCount: Int) -> String? {
        if let problem = format.problem(sampleRate: sampleRate, channelCount: channelCount) {
            return problem
        }
        if format == .m4a || format == .m4b, let sampleRate {
            let most = Self.aacMostBitrate(sampleRate: sampleRate, channelCount: channelCount)
            if let bitrate, bitrate > most {
                let channels = channelCount == 1 ? "mono" : "stereo"
                return
                    "\(format) at \(sampleRate) Hz \(channels) takes a bit rate of at most \(most) kb/s, not \(bitrate)"
            }
            return nil
        }
        guard format == .mp3, let bitrate, let sampleRate else { return nil }
        let allowed = Self.mp3Bitrates(sampleRate: sampleRate)
        guard !allowed.contains(bitrate) else { return nil }
        let list = allowed.dropLast().map(String.init).joined(separator: ", ") + " or \(allowed.last ?? 0)"
        return "mp3 at \(sampleRate) Hz takes a bit rate of \(list) kb/s (its MPEG version's), not \(bitrate)"
    }

    /// The constant bit rates in kb/s an MP3 at `sampleRate` can be written at: the Layer III bit
    /// rates of the rate's MPEG version (MPEG-1 at 32, 44.1 and 48 kHz: 32 to 320; MPEG-2 at 16,
    /// 22.05 and 24 kHz: 8 to 160; MPEG-2.5 below: 8 to 64, as LAME has it). Each is written with
    /// exact timing, the gapless tag in a frame that holds it (``mp3FrameHoldsTag(kilobits:sampleRate:channelCount:)``).
    /// Empty for a rate MP3 does not have.
    package static func mp3Bitrates(sampleRate: Int) -> [Int] {
        switch sampleRate {
        case 32_000, 44_100, 48_000: [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        case 16_000, 22_050, 24_000: [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        case 8_000, 11_025, 12_000: [8, 16, 24, 32, 40, 48, 56, 64]
        default: []
        }
    }

    /// Whether an MP3 frame at `kilobits` holds LAME's gapless tag: the header, the side
    /// information and the 156-byte Xing/LAME tag. A frame is `⌊144,000 × kb/s ÷ rate⌋` bytes
    /// (MPEG-1), `⌊72,000 × kb/s ÷ rate⌋` (MPEG-2 and 2.5). In a constant-rate stream LAME writes
    /// the tag at the stream's rate and leaves it out of a smaller frame (32 kb/s at 22,050 Hz is
    /// 104 bytes), and without it no decoder knows the encoder delay and padding to drop; the
    /// encoder then writes the tag frame at a rate that holds it (``MP3Encoder``).
    package static func mp3FrameHoldsTag(kilobits: Int, sampleRate: Int, channelCount: Int) -> Bool {
        let isMPEG1 = sampleRate >= 32_000
        let sideInformation = isMPEG1 ? (channelCount == 1 ? 17 : 32) : (channelCount == 1 ? 9 : 17)
        return (isMPEG1 ? 144_000 : 72_000) * kilobits / sampleRate >= 4 + sideInformation + 156
    }

    /// The highest bit rate in kb/s AAC-LC holds at `sampleRate` with `channelCount` channels:
    /// 6,144 bits per channel in each 1,024-frame packet (ISO 14496-3's decoder buffer), which
    /// FFmpeg's encoder clamps to.
    package static func aacMostBitrate(sampleRate: Int, channelCount: Int) -> Int {
        6_144 * channelCount * sampleRate / 1_024 / 1_000
    }

    /// `7`, `-1`, `2.5`: a number as a person writes it.
    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// What a file says about itself besides its audio: tags and chapters.
package struct AudioMetadata: Sendable, Equatable {
    /// The title tag.
    package var title: String?
    /// The album tag.
    package var album: String?
    /// The artist tag.
    package var artist: String?
    /// Chapters in time order, tiling the file.
    package var chapters: [AudioChapter]

    package init(title: String? = nil, album: String? = nil, artist: String? = nil, chapters: [AudioChapter] = []) {
        self.title = title
        self.album = album
        self.artist = artist
        self.chapters = chapters
    }
}

/// A named stretch of a file, in frames at the file's own rate.
public struct AudioChapter: Sendable, Equatable {
    /// What a player shows.
    public var title: String
    /// The chapter's first frame.
    public var startFrame: Frames
    /// The frame after its last.
    public var endFrame: Frames

    package init(title: String, startFrame: Frames, endFrame: Frames) {
        self.title = title
        self.startFrame = startFrame
        self.endFrame = endFrame
    }
}

/// How a written file was encoded, as the timeline records it for the app that plays it.
public struct AudioEncoding: Sendable, Equatable, Codable {
    /// `wav`, `flac`, `mp3` or `ogg`.
    public var container: String
    /// `pcm_s16le`, `pcm_s24le`, `pcm_f32le`, `flac`, `mp3`, `opus` or `vorbis`.
    public var codec: String
    /// The constant bit rate in kb/s, when one was asked for.
    public var bitrate: Int?
    /// The variable-rate quality, when no bit rate was asked for (lossy formats and FLAC).
    public var quality: Double?
    /// Frames at the file's rate that the encoder put before the first frame of the session and
    /// that a gapless decoder drops: the LAME tag's delay plus the decoder's 529, Opus's pre-skip.
    public var encoderDelay: Frames
    /// Frames after the session's last that a gapless decoder drops.
    public var padding: Frames

    package init(
        container: String,
        codec: String,
        bitrate: Int? = nil,
        quality: Double? = nil,
        encoderDelay: Frames = .zero,
        padding: Frames = .zero
    ) {
        self.container = container
        self.codec = codec
        self.bitrate = bitrate
        self.quality = quality
        self.encoderDelay = encoderDelay
        self.padding = padding
    }
}
