import Foundation
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio

/// Encodes `samples` (`signal`'s shape: its rate, channels and length) to `path` in `format`
/// through ``AudioFileWriter``, keeping and copying spans with `spans`; returns the file's bytes.
private func encode(
    _ samples: [Float],
    like signal: Bursts,
    format: AudioFileFormat,
    to path: String,
    reusing spans: SpanReuse?
) throws -> Data {
    let sink = try AudioFileWriter.create(
        path: path,
        sampleRate: SampleRate(signal.rate)!,
        channelCount: ChannelCount(signal.channels)!,
        settings: try EncoderSettings(format: format),
        metadata: AudioMetadata(),
        frameCount: Frames(Int64(signal.frameCount)),
        reusing: spans
    )
    let block = 4_096
    var start = 0
    while start < signal.frameCount {
        let frames = min(block, signal.frameCount - start)
        try sink.write(Array(samples[(start * signal.channels)..<((start + frames) * signal.channels)]), frames: frames)
        start += frames
    }
    _ = try sink.close()
    return try Data(contentsOf: URL(fileURLWithPath: path))
}

/// `samples` with the frames `frames` made quieter by `gain`: what a ceiling dip does.
private func lowered(_ samples: [Float], frames: Range<Int>, channels: Int, by gain: Float) -> [Float] {
    var samples = samples
    for index in (frames.lowerBound * channels)..<(frames.upperBound * channels) { samples[index] *= gain }
    return samples
}

@Suite("Encoding again copies the spans that did not change", .tags(.concurrent))
struct SpanReuseTests {
    /// Four spans of sound a second or more apart (each encoded alone), the third to be lowered.
    static func signal(rate: Int, channels: Int) -> Bursts {
        Bursts(
            rate: rate,
            channels: channels,
            frameCount: 8 * rate + 321,
            spans: [
                (rate / 10)..<rate, (2 * rate + 17)..<(3 * rate), (4 * rate + 5)..<(5 * rate),
                (6 * rate + 999)..<(7 * rate),
            ]
        )
    }

    @Test(
        "A few frames changed: only their span is encoded, and the file is byte for byte the whole encoding's",
        arguments: [(AudioFileFormat.mp3, 22_050, 1), (.m4a, 44_100, 2), (.mp3, 48_000, 2)]
    )
    func copiesUnchangedSpans(format: AudioFileFormat, rate: Int, channels: Int) throws {
        let folder = try TemporaryFolder()
        let signal = Self.signal(rate: rate, channels: channels)
        let spans = try SpanReuse(temporaryFolder: folder.url.path)
        let first = try encode(signal.samples, like: signal, format: format, to: folder.path("1"), reusing: spans)
        #expect(spans.reusedSpanCount == 0, "nothing to copy the first time")

        let changed = (4 * rate + rate / 3)..<(4 * rate + rate / 2)
        let quieter = lowered(signal.samples, frames: changed, channels: channels, by: 0.8)
        spans.prepareNextEncoding(changedFrames: [Int64(changed.lowerBound)..<Int64(changed.upperBound)])
        let again = try encode(quieter, like: signal, format: format, to: folder.path("2"), reusing: spans)
        #expect(spans.reusedSpanCount == 3, "every span but the one with the changed frames")
        let whole = try encode(quieter, like: signal, format: format, to: folder.path("3"), reusing: nil)
        #expect(again == whole, "copied spans are exactly what encoding them again makes")
        #expect(again != first, "the changed span was encoded again")

        // Nothing changed since: every span is copied, from both earlier encodings.
        spans.prepareNextEncoding(changedFrames: [])
        let third = try encode(quieter, like: signal, format: format, to: folder.path("4"), reusing: spans)
        #expect(spans.reusedSpanCount == 4)
        #expect(third == whole)
    }

    @Test("A span said unchanged that was not fails the encoding, naming it; forgotten, the spans are encoded again")
    func mismatch() throws {
        let folder = try TemporaryFolder()
        let signal = Self.signal(rate: 22_050, channels: 1)
        let spans = try SpanReuse(temporaryFolder: folder.url.path)
        _ = try encode(signal.samples, like: signal, format: .mp3, to: folder.path("1"), reusing: spans)
        let quieter = lowered(signal.samples, frames: 50_000..<51_000, channels: 1, by: 0.9)
        // Told that frames elsewhere changed: the span holding 50,000 … 51,000 is taken as unchanged.
        spans.prepareNextEncoding(changedFrames: [100_000..<100_100])
        #expect {
            try encode(quieter, like: signal, format: .mp3, to: folder.path("2"), reusing: spans)
        } throws: { error in
            guard let error = error as? AudioError else { return false }
            return error.code == .cannotEncode
                && error.reason.contains("the span at packet 76 was fed other samples than the encoding before")
        }
        #expect(spans.mismatch != nil)

        spans.forgetSpans()
        let again = try encode(quieter, like: signal, format: .mp3, to: folder.path("3"), reusing: spans)
        #expect(spans.reusedSpanCount == 0 && spans.mismatch == nil)
        #expect(again == (try encode(quieter, like: signal, format: .mp3, to: folder.path("4"), reusing: nil)))
    }

    @Test("Vorbis and Opus, which encode the whole stream, ignore kept spans")
    func wholeStreamFormats() throws {
        let folder = try TemporaryFolder()
        let signal = Self.signal(rate: 48_000, channels: 1)
        let spans = try SpanReuse(temporaryFolder: folder.url.path)
        for format in [AudioFileFormat.opus, .vorbis] {
            _ = try encode(signal.samples, like: signal, format: format, to: folder.path("a"), reusing: spans)
            spans.prepareNextEncoding(changedFrames: [])
            _ = try encode(signal.samples, like: signal, format: format, to: folder.path("b"), reusing: spans)
            #expect(spans.reusedSpanCount == 0, "\(format)")
        }
    }
}
