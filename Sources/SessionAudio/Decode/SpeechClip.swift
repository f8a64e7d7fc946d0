package import Foundation

/// How a synthesized voice's speech is stored in the clip cache: 16-bit mono PCM encoded as MP3
/// at ``bitRate`` with LAME's gapless tag, so that decoding gives back exactly the frames spoken.
/// The embedded voice and Piper store their clips alike.
package enum SpeechClip {
    /// The MP3 bit rate: at 22.05 kHz mono, the lowest at which LAME still writes the gapless tag.
    package static let bitRate = 64

    /// `samples` (16-bit mono at `sampleRate`) as the cache stores them.
    /// - Parameter voice: the voice's name, for the error when it spoke nothing.
    package static func mp3(_ samples: [Int16], sampleRate: Int, voice: String) throws(AudioError) -> [UInt8] {
        guard !samples.isEmpty else {
            throw AudioError(.cannotSynthesize, path: nil, reason: "\(voice) produced no audio for this text")
        }
        return try MP3Encoder.encode(samples, sampleRate: sampleRate, channelCount: 1, bitRate: bitRate)
    }

    /// 16-bit samples from their little-endian bytes (two a sample; an odd last byte is ignored).
    package static func samples(littleEndian bytes: Data) -> [Int16] {
        var samples = [Int16](repeating: 0, count: bytes.count / 2)
        bytes.withUnsafeBytes { raw in
            for index in samples.indices {
                samples[index] = Int16(littleEndian: raw.loadUnaligned(fromByteOffset: index * 2, as: Int16.self))
            }
        }
        return samples
    }
}
