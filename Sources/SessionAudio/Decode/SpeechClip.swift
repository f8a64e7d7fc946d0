package import Foundation
internal import SessionTimeline

/// How a synthesized voice's speech is stored in the clip cache: 16-bit mono PCM encoded as MP3
/// at ``bitRate`` with LAME's gapless tag, so that decoding gives back exactly the frames spoken.
/// The embedded voice and Piper store their clips alike; a server's answer in AAC is decoded and
/// stored the same way (``mp3(transcoding:)``).
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

    /// The clip at `path`, which a speech server answered in AAC or ALAC (MP4, CAF or ADTS) or in
    /// MPEG audio layer 1 or 2 rather than MP3, as the cache stores clips: decoded in full
    /// (gapless where its container says) and encoded as MP3 at its own rate and channels, at
    /// ``bitRate`` per channel.
    /// - Throws: ``AudioError`` when the file is none of those, cannot be decoded in full, has
    ///   more than 2 channels, or holds no audio.
    package static func mp3(transcoding path: String) throws(AudioError) -> [UInt8] {
        let decoder = try AudioFileDecoder(path: path)
        guard decoder.readsThroughLibavformat || decoder.isMPEGLayer1Or2 else {
            throw AudioError(
                .unsupportedFormat,
                path: path,
                reason: "the file is \(decoder.formatName), not AAC, ALAC or MP2"
            )
        }
        let channels = decoder.channelCount.count
        guard channels <= 2 else {
            throw AudioError(
                .unsupportedFormat,
                path: path,
                reason: "a speech clip has 1 or 2 channels, this one \(channels)"
            )
        }
        var samples: [Int16] = []
        var block: [Float] = []
        var quantized: [Int16] = []
        while case let frames = try decoder.read(into: &block, maximumFrames: 16_384), frames > 0 {
            if quantized.count < frames * channels { quantized = [Int16](repeating: 0, count: frames * channels) }
            SampleConversion.quantize(block, count: frames * channels, into: &quantized)
            samples.append(contentsOf: quantized[..<(frames * channels)])
        }
        guard !samples.isEmpty else {
            throw AudioError(.noAudio, path: path, reason: "the file decodes to no audio frames")
        }
        return try MP3Encoder.encode(
            samples,
            sampleRate: decoder.sampleRate.hertz,
            channelCount: channels,
            bitRate: bitRate * channels
        )
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
