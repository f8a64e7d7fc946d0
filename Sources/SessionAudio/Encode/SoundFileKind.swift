internal import CSndFile
internal import SessionTimeline

/// What ``SoundFileWriter`` has libsndfile write: the container, and the codec setting it takes.
enum SoundFileKind: Equatable {
    /// RIFF/WAVE or RF64, uncompressed.
    case wav(WAVContainer)
    /// FLAC at a compression level 0 (fastest) … 8 (smallest).
    case flac(level: Int)

    /// flac(1)'s own default, and libsndfile's: the size gained past it costs several times the time.
    static let defaultFLACLevel = 5

    /// The kind `settings` asks for; `frameCount` frames decide RIFF or RF64 for a WAV (and for the
    /// formats libsndfile does not write here, which ``SoundFileWriter`` refuses before asking).
    init(_ settings: EncoderSettings, channelCount: ChannelCount, frameCount: Frames) {
        switch settings.format {
        case .flac:
            self = .flac(level: Int((settings.quality ?? Double(Self.defaultFLACLevel)).rounded()))
        case .wav, .mp3, .opus, .vorbis, .m4a, .m4b:
            let bytes = frameCount.count * Int64(channelCount.count * settings.sampleFormat.bytesPerSample)
            self = .wav(WAVContainer(dataByteCount: bytes))
        }
    }

    /// How people name the format in messages.
    var name: String {
        switch self {
        case .wav(.riff): "WAV"
        case .wav(.rf64): "RF64 WAV"
        case .flac: "FLAC"
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
        }
    }

    /// Sets the codec's level on a file opened for writing, before its first frame.
    /// Returns false when libsndfile refuses.
    ///
    /// libsndfile takes it as a fraction 0 … 1: FLAC's level is `round(fraction × 8)`, so level
    /// `n` is sent as `n / 8`.
    /// The corresponding libsndfile call is `sf_command` with `SFC_SET_COMPRESSION_LEVEL`.
    func configure(_ file: OpaquePointer) -> Bool {
        switch self {
        case .wav:
            return true
        case .flac(let level):
            var fraction = Double(level) / 8
            return sf_command(file, Int32(SFC_SET_COMPRESSION_LEVEL), &fraction, Int32(MemoryLayout<Double>.size))
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
        }
    }
}
