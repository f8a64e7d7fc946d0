internal import CSndFile
public import SessionTimeline

/// What ``SoundFileWriter`` has libsndfile write: the container, and the codec setting it takes.
enum SoundFileKind: Equatable {
    /// RIFF/WAVE or RF64, uncompressed.
    case wav(WAVContainer)
    /// FLAC at a compression level 0 (fastest) … 8 (smallest).
    case flac(level: Int)
    /// Vorbis in Ogg at an oggenc-style quality 0 … 10.
    case vorbis(quality: Double)

    /// flac(1)'s own default, and libsndfile's: the size gained past it costs several times the time.
    static let defaultFLACLevel = 5

    /// oggenc's `-q 3` (libvorbis's nominal 112 kb/s for 44.1 kHz stereo, less for mono and for
    /// lower rates). Speech alone would be clear lower down, but a session also holds gongs, bells
    /// and their long, quiet, reverberant tails, where Vorbis's low qualities are known to smear the
    /// highs and leave pre-echo; 3 is the lowest step generally held to be free of that, and the
    /// file stays a fraction of FLAC's. (Chosen by that reasoning, not by a listening test.)
    static let defaultVorbisQuality = 3.0

    /// The kind `settings` asks for; `frameCount` frames decide RIFF or RF64 for a WAV.
    init(_ settings: EncoderSettings, channelCount: ChannelCount, frameCount: Frames) {
        switch settings.format {
        case .flac:
            self = .flac(level: Int((settings.quality ?? Double(Self.defaultFLACLevel)).rounded()))
        case .vorbis:
            self = .vorbis(quality: settings.quality ?? Self.defaultVorbisQuality)
        case .wav, .mp3, .opus:
            let bytes = frameCount.count * Int64(channelCount.count * settings.sampleFormat.bytesPerSample)
            self = .wav(WAVContainer(dataByteCount: bytes))
        }
    }

    /// Whether frames go to libsndfile as floats whatever the sample format: Vorbis encodes floats,
    /// so rounding them to 16 bits first would only add noise.
    var takesFloats: Bool {
        if case .vorbis = self { true } else { false }
    }

    /// How people name the format in messages.
    var name: String {
        switch self {
        case .wav(.riff): "WAV"
        case .wav(.rf64): "RF64 WAV"
        case .flac: "FLAC"
        case .vorbis: "Ogg Vorbis"
        }
    }

    /// libsndfile's `SF_FORMAT_…` code for this kind holding `format` samples.
    func formatCode(_ format: SampleFormat) -> Int32 {
        let encoding =
            switch format {
            case .pcm16: SF_FORMAT_PCM_16
            case .pcm24: SF_FORMAT_PCM_24
            case .float32: SF_FORMAT_FLOAT
            }
        return switch self {
        case .wav(.riff): Int32(SF_FORMAT_WAV | encoding)
        case .wav(.rf64): Int32(SF_FORMAT_RF64 | encoding)
        case .flac: Int32(SF_FORMAT_FLAC | encoding)
        case .vorbis: Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
        }
    }

    /// Sets the codec's level or quality on a file opened for writing, before its first frame.
    /// Returns false when libsndfile refuses.
    ///
    /// libsndfile takes both as a fraction 0 … 1: FLAC's level is `round(fraction × 8)`, so level
    /// `n` is sent as `n / 8`; Vorbis's `SFC_SET_VBR_ENCODING_QUALITY` becomes libvorbis's
    /// `vorbis_encode_init_vbr` base quality, which is oggenc's `-q` divided by 10.
    /// The corresponding libsndfile calls are `sf_command` with `SFC_SET_COMPRESSION_LEVEL` and
    /// `SFC_SET_VBR_ENCODING_QUALITY`.
    func configure(_ file: OpaquePointer) -> Bool {
        switch self {
        case .wav:
            return true
        case .flac(let level):
            var fraction = Double(level) / 8
            return sf_command(file, Int32(SFC_SET_COMPRESSION_LEVEL), &fraction, Int32(MemoryLayout<Double>.size))
                == SF_TRUE
        case .vorbis(let quality):
            var fraction = quality / 10
            return sf_command(file, Int32(SFC_SET_VBR_ENCODING_QUALITY), &fraction, Int32(MemoryLayout<Double>.size))
                == SF_TRUE
        }
    }

    /// How a file of this kind holding `format` samples is encoded, as the timeline records it.
    func encoding(_ format: SampleFormat) -> AudioEncoding {
        switch self {
        case .wav:
            let codec =
                switch format {
                case .pcm16: "pcm_s16le"
                case .pcm24: "pcm_s24le"
                case .float32: "pcm_f32le"
                }
            return AudioEncoding(container: "wav", codec: codec)
        case .flac(let level):
            return AudioEncoding(container: "flac", codec: "flac", quality: Double(level))
        case .vorbis(let quality):
            return AudioEncoding(container: "ogg", codec: "vorbis", quality: quality)
        }
    }
}
