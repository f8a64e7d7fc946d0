import Foundation
import SessionAudio
import SessionTimeline
import TestSupport
import Testing

/// Reads a whole stream.
func readAll(_ stream: ClipStream, block: Int = 1_000) throws -> [Float] {
    var all: [Float] = []
    var buffer: [Float] = []
    while case let frames = try stream.read(into: &buffer, maximumFrames: block), frames > 0 {
        all.append(contentsOf: buffer[0..<(frames * 1)])
    }
    return all
}

/// A sine wave of `frames` frames; `phase` π/2 starts it at its peak.
func sine(frequency: Double, rate: Int, frames: Int, amplitude: Double = 0.5, phase: Double = 0) -> [Float] {
    (0..<frames).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / Double(rate) + phase)) }
}

/// How many times the signal crosses zero upwards.
func upwardZeroCrossings(_ samples: [Float]) -> Int {
    zip(samples, samples.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
}

@Suite("Clip streams")
struct ClipStreamTests {
    @Test(
        "Resampling yields exactly the planned frame count and keeps the pitch",
        arguments: [
            (22_050, 48_000), (48_000, 22_050), (16_000, 44_100), (44_100, 8_000),
        ]
    )
    func resampledLength(from source: Int, to target: Int) throws {
        let frames = source * 2 + 17
        let input = sine(frequency: 440, rate: source, frames: frames)
        let planned = Int64((frames * target + source / 2) / source)
        let stream = try ClipStream(
            samples: input,
            sampleRate: try #require(SampleRate(source)),
            channelCount: 1,
            outputRate: try #require(SampleRate(target)),
            outputChannels: 1,
            outputFrames: Frames(planned)
        )
        let output = try readAll(stream, block: 777)
        #expect(output.count == Int(planned))
        // About 880 upward crossings in two seconds of 440 Hz, whatever the rate.
        #expect(abs(upwardZeroCrossings(output) - upwardZeroCrossings(input)) <= 2)
        let rms = sqrt(
            output.dropFirst(1_000).dropLast(1_000).map { $0 * $0 }.reduce(0, +) / Float(output.count - 2_000)
        )
        #expect(abs(rms - 0.5 / 2.0.squareRoot().asFloat) < 0.01)
    }

    @Test(
        "Extreme ratios keep the exact length, reading the source in small pulls",
        arguments: [
            (1_000, 384_000), (384_000, 1_000),
        ]
    )
    func extremeRatio(from source: Int, to target: Int) throws {
        let frames = 3 * 16_384 + 5
        let planned = Int64((frames * target + source / 2) / source)
        let stream = try ClipStream(
            samples: [Float](repeating: 0, count: frames),
            sampleRate: try #require(SampleRate(source)),
            channelCount: 1,
            outputRate: try #require(SampleRate(target)),
            outputChannels: 1,
            outputFrames: Frames(planned)
        )
        var buffer: [Float] = []
        var total: Int64 = 0
        while case let read = try stream.read(into: &buffer, maximumFrames: 16_384), read > 0 {
            total += Int64(read)
        }
        #expect(total == planned)
        #expect(buffer.count <= 16_384, "the caller's buffer never grows past the block asked for")
    }

    @Test("At the same rate the samples pass through untouched, however they are read", arguments: [1, 999, 100_000])
    func passThrough(block: Int) throws {
        // Starts at zero and ends in silence: no fade.
        let input = sine(frequency: 300, rate: 8_000, frames: 4_000) + [Float](repeating: 0, count: 1_000)
        let stream = try ClipStream(
            samples: input,
            sampleRate: 8_000,
            channelCount: 1,
            outputRate: 8_000,
            outputChannels: 1,
            outputFrames: 5_000
        )
        #expect(try readAll(stream, block: block) == input)
        #expect(!stream.fadedIn && !stream.fadedOut)
    }

    @Test("A clip that starts or ends loud is faded; the middle is untouched")
    func fades() throws {
        let input = [Float](repeating: 0.5, count: 4_000)
        let stream = try ClipStream(
            samples: input,
            sampleRate: 8_000,
            channelCount: 1,
            outputRate: 8_000,
            outputChannels: 1,
            outputFrames: 4_000
        )
        let output = try readAll(stream, block: 333)
        #expect(stream.fadedIn && stream.fadedOut)
        let fadeFrames = 40  // 5 ms at 8 kHz
        #expect(output.count == 4_000)
        #expect(output[0] < 0.5 * 0.01 && output[3_999] < 0.5 * 0.01, "edges start and end near zero")
        #expect(zip(output[0..<fadeFrames], output[1...fadeFrames]).allSatisfy { $0 < $1 }, "the fade-in rises")
        #expect(output[fadeFrames..<(4_000 - fadeFrames)].allSatisfy { $0 == 0.5 }, "the middle is untouched")
        #expect(
            output[..<fadeFrames] == output[(4_000 - fadeFrames)...].reversed()[...],
            "the fade-out mirrors the fade-in"
        )
    }

    @Test("Planned lengths longer or shorter than the source are padded with zeros or cut")
    func padAndCut() throws {
        let input = [Float](repeating: 0.001, count: 100)
        let longer = try readAll(
            ClipStream(
                samples: input,
                sampleRate: 8_000,
                channelCount: 1,
                outputRate: 8_000,
                outputChannels: 1,
                outputFrames: 150
            )
        )
        #expect(longer == input + [Float](repeating: 0, count: 50))
        let shorter = try readAll(
            ClipStream(
                samples: input,
                sampleRate: 8_000,
                channelCount: 1,
                outputRate: 8_000,
                outputChannels: 1,
                outputFrames: 60
            )
        )
        #expect(shorter == [Float](repeating: 0.001, count: 60))
    }

    @Test("Channels: stereo averages to mono, mono copies to stereo")
    func channelConversion() throws {
        // Values below the fade threshold (2^-9), exact in binary.
        let (a, b, c): (Float, Float, Float) = (0x1p-10, 0x1p-11, 0x1p-12)
        let mono = try readAll(
            ClipStream(
                samples: [a, -b, b, b],
                sampleRate: 8_000,
                channelCount: 2,
                outputRate: 8_000,
                outputChannels: 1,
                outputFrames: 2
            )
        )
        #expect(mono == [c, b])
        let stream = try ClipStream(
            samples: [a, b],
            sampleRate: 8_000,
            channelCount: 1,
            outputRate: 8_000,
            outputChannels: 2,
            outputFrames: 2
        )
        var buffer: [Float] = []
        #expect(try stream.read(into: &buffer, maximumFrames: 10) == 2)
        #expect(Array(buffer[0..<4]) == [a, a, b, b])
    }

    @Test("A file that decodes shorter than measured is an error, not silence")
    func shorterThanMeasured() throws {
        let folder = try TemporaryFolder()
        try writeWAV([Float](repeating: 0, count: 1_000), rate: 8_000, channels: 1, to: folder.path("short.wav"))
        let stream = try ClipStream(
            decoder: AudioFileDecoder(path: folder.path("short.wav")),
            sourceFrames: 2_000,
            outputRate: 8_000,
            outputChannels: 1,
            outputFrames: 2_000
        )
        #expect {
            _ = try readAll(stream)
        } throws: { error in
            (error as? AudioError)?.description
                == "Cannot decode \(folder.path("short.wav")): the file decodes to 1000 frames, fewer than the 2000 measured before rendering"
        }
    }
}

@Suite("The built-in bell")
struct BuiltinBellTests {
    @Test(
        "It lasts 12 s, peaks at −6 dBFS, starts and ends at silence, and is the same every time",
        arguments: [8_000, 22_050, 48_000]
    )
    func shape(rate: Int) throws {
        let sampleRate = try #require(SampleRate(rate))
        let bell = BuiltinBell.samples(sampleRate: sampleRate)
        #expect(bell.count == 12 * rate)
        #expect(Frames(Int64(bell.count)) == BuiltinBell.frameCount(sampleRate: sampleRate))
        #expect(abs(bell.map(abs).max()! - 0.5) < 1e-6)
        #expect(bell[0] == 0 && abs(bell[bell.count - 1]) < 1e-6)
        #expect(bell.prefix(rate / 1_000).allSatisfy { abs($0) < 0.05 }, "the first millisecond rises gently")
        let firstSecond = bell[0..<rate].map { $0 * $0 }.reduce(0, +)
        let lastSecond = bell[(11 * rate)...].map { $0 * $0 }.reduce(0, +)
        #expect(lastSecond < firstSecond / 100, "it decays by more than 20 dB")
        #expect(BuiltinBell.samples(sampleRate: sampleRate) == bell)
    }
}

@Suite("Writing")
struct WritingTests {
    @Test("Floats are rounded to 16-bit values that read back exactly")
    func sixteenBitRoundTrip() throws {
        let folder = try TemporaryFolder()
        let values: [Int16] = [0, 1, -1, 32_767, -32_768, 12_345, -23_456]
        let samples = values.map { Float($0) / 32_768 } + [1.5, -1.5, 0.000_01]
        try writeWAV(samples, rate: 8_000, channels: 1, to: folder.path("a.wav"))
        let decoded = try decodeAll(folder.path("a.wav")).samples.map { Int16($0 * 32_768) }
        #expect(decoded == values + [32_767, -32_768, 0], "exact values, clipped extremes, rounding")
        let size = try FileManager.default.attributesOfItem(atPath: folder.path("a.wav"))[.size] as? Int
        #expect(size == 44 + 2 * samples.count, "a plain 44-byte WAV header")
    }

    @Test("Every sample format writes what it should", arguments: SampleFormat.allCases)
    func formats(format: SampleFormat) throws {
        let folder = try TemporaryFolder()
        let samples = sine(frequency: 100, rate: 8_000, frames: 800, amplitude: 0.25)
        try writeWAV(samples, rate: 8_000, channels: 2, format: format, to: folder.path("f.wav"))
        let decoded = try decodeAll(folder.path("f.wav"))
        #expect(decoded.rate == 8_000 && decoded.channels == 2 && decoded.samples.count == 800)
        let tolerance: Float = format == .float32 ? 0 : format == .pcm24 ? 1 / 8_388_608 : 1 / 32_768
        #expect(zip(decoded.samples, samples).allSatisfy { abs($0 - $1) <= tolerance })
    }

    @Test("The title tag is written")
    func titleTag() throws {
        let folder = try TemporaryFolder()
        let writer = try SoundFileWriter(
            path: folder.path("t.wav"),
            sampleRate: 8_000,
            channelCount: 1,
            format: .pcm16,
            title: "The Space Between"
        )
        try writer.writeSilence(frames: 10)
        try writer.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: folder.path("t.wav")))
        #expect(bytes.firstRange(of: Data("INAM".utf8)) != nil)
        #expect(bytes.firstRange(of: Data("The Space Between".utf8)) != nil)
    }

    @Test(
        "A file whose data would pass 4 GiB is RF64, a smaller one RIFF",
        arguments: [
            (Int64(1_100_000_000), "RF64"), (Int64(1_000_000_000), "RIFF"),
        ]
    )
    func container(frames: Int64, magic: String) throws {
        // 16-bit stereo: 4 bytes a frame, so 1.1 G frames are 4.4 GB. Only the header's choice is
        // checked; writing the gigabytes themselves would prove nothing more about libsndfile.
        let folder = try TemporaryFolder()
        let writer = try SoundFileWriter(
            path: folder.path("big.wav"),
            sampleRate: 48_000,
            channelCount: 2,
            format: .pcm16,
            frameCount: Frames(frames)
        )
        try writer.writeSilence(frames: 10)
        try writer.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: folder.path("big.wav")))
        #expect(String(decoding: bytes.prefix(4), as: UTF8.self) == magic)
    }

    @Test("A file in a missing folder cannot be created, and says why")
    func unwritable() {
        #expect {
            _ = try SoundFileWriter(
                path: "/nonexistent/folder/x.wav",
                sampleRate: 8_000,
                channelCount: 1,
                format: .pcm16
            )
        } throws: { error in
            let error = error as? AudioError
            return error?.code == .cannotWrite
                && error?.description == "Cannot write /nonexistent/folder/x.wav: No such file or directory"
        }
    }
}

extension Double {
    var asFloat: Float { Float(self) }
}
