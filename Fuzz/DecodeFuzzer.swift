// libFuzzer target for clip decoding (SessionAudio: AudioFileDecoder, MPEGDecoder over libmpg123,
// SoundFileReader over libsndfile, MediaFileDecoder over libavformat and libavcodec for MP4, CAF
// and ADTS AAC, ClipStream with ChannelMixer and Resampler over libsoxr). scripts/fuzz adds MP4,
// CAF and ADTS seeds made by ffmpeg to the run's corpus.
//
// Compiled into the SessionAudio module itself (see scripts/fuzz), so internal API is visible.
// The API takes paths, so each input is written to one file in /dev/shm (memory), then, as a
// render does with a clip from the cache:
// 1. `AudioFileDecoder.verifyMPEG(path:)`, the check a downloaded clip passes before it is cached;
// 2. `AudioFileDecoder.measure(path:)`; if it succeeds,
// 3. a `ClipStream` from a fresh `AudioFileDecoder(path:)` at 22,050 Hz mono, with
//    outputFrames = (frames × 22,050 + rate / 2) / rate (SampleRate.frames(converting:from:)),
//    read to its end in blocks of 16,384 frames.
//
// Every thrown AudioError is an expected outcome. Findings are crashes, sanitizer reports,
// timeouts, out-of-memory, and these broken promises
// (checked with `expect`, which stops with its message even in -O builds):
// - a measurement has a rate in SampleRate.supported, which Timeline.plan requires, and a
//   positive frame count (rate and channel count are typed, so in range by construction);
// - a stream that does not throw delivers exactly outputFrames frames.
// (Samples are not checked for NaN or infinity: a float WAV may hold them, and the writer's
// quantization turns them into 0 or full scale without trapping.)
//
// Earlier findings, now refused by AudioFileDecoder (regression tests in DecodingTests):
// decode-9cf0652d.bin (a WAV at 1,000,000 Hz, which Timeline.plan trapped on) and
// decode-f29aa5a3.bin (a WAV at 1 Hz, which took over 100 s and 800 MB to stream).
import Foundation
import SessionTimeline

private let outputRate: SampleRate = 22_050
private let blockFrames = 16_384
private let inputPath: String = {
    let directory = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    return "\(directory)/render-session-fuzz-decode-\(getpid()).bin"
}()
/// FUZZ_VERBOSE=1 prints what became of each input (for `scripts/fuzz repro decode FILE`).
private let verbose = getenv("FUZZ_VERBOSE").map { String(cString: $0) } == "1"

private func note(_ message: @autoclosure () -> String) {
    guard verbose else { return }
    let line = Array("decode: \(message())\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard FileManager.default.createFile(atPath: inputPath, contents: Data(bytes: data, count: size)) else {
        fatalError("cannot write \(inputPath)")
    }
    defer { unlink(inputPath) }
    do {
        let verified = try AudioFileDecoder.verifyMPEG(path: inputPath)
        note("verifyMPEG: \(verified)")
    } catch {
        note("verifyMPEG: \(error)")
    }

    let measurement: AudioMeasurement
    do {
        measurement = try AudioFileDecoder.measure(path: inputPath)
    } catch {
        note("measure: \(error)")
        return 0
    }
    note("measure: \(measurement)")
    expect(
        SampleRate.supported.contains(measurement.sampleRate.hertz) && measurement.frameCount > .zero,
        "implausible measurement \(measurement)"
    )
    let (_, overflow) = measurement.frameCount.count.multipliedReportingOverflow(by: Int64(outputRate.hertz))
    expect(!overflow, "frame count \(measurement.frameCount) too large to convert")  // as SampleRate does
    let outputFrames = outputRate.frames(converting: measurement.frameCount, from: measurement.sampleRate)

    var buffer: [Float] = []
    var delivered = Frames.zero
    do {
        let stream = try ClipStream(
            decoder: AudioFileDecoder(path: inputPath),
            sourceFrames: measurement.frameCount,
            outputRate: outputRate,
            outputChannels: 1,
            outputFrames: outputFrames
        )
        while case let frames = try stream.read(into: &buffer, maximumFrames: blockFrames), frames > 0 {
            expect(frames <= blockFrames && buffer.count >= frames)
            delivered += Frames(Int64(frames))
        }
    } catch {
        note("stream: \(error) after \(delivered) frames")
        return 0
    }
    note("stream: \(delivered) of \(outputFrames) frames")
    expect(delivered == outputFrames, "the stream delivered \(delivered) frames, not the \(outputFrames) promised")
    return 0
}
