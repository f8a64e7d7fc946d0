/// How samples are stored in a written file.
public enum SampleFormat: String, Sendable, CaseIterable, Codable {
    /// Signed 16-bit integers, the default: what every player reads.
    case pcm16 = "s16"
    /// Signed 24-bit integers.
    case pcm24 = "s24"
    /// 32-bit IEEE floats.
    case float32 = "f32"

    /// Bytes per sample in the file.
    package var bytesPerSample: Int {
        switch self {
        case .pcm16: 2
        case .pcm24: 3
        case .float32: 4
        }
    }
}
