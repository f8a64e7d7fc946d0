import Foundation
import SessionAudio
import SessionTimeline
import TestSupport
import Testing

/// Tests over ../shared/vectors: MP3 and WAV material from other projects (see its README).
/// Where the folder is absent, every test is skipped, with the reason.
@Suite("External test vectors", .requiresVectors)
struct VectorTests {
    /// The `.bit` streams of minimp3's set that have a `.pcm` reference, by name.
    static var minimp3Streams: [String] {
        guard let vectors = Repository.vectors else { return [] }
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: vectors.appendingPathComponent("minimp3").path)) ?? []
        return names.filter {
            $0.hasSuffix(".bit") && names.contains($0.replacingOccurrences(of: ".bit", with: ".pcm"))
        }.sorted()
    }

    /// Streams that are damaged or non-standard on purpose: they must fail cleanly or decode to
    /// something, never crash, but need not match their reference.
    static func isDamaged(_ name: String) -> Bool {
        // l3-he_mode switches between mono and dual channel part of the way: refused as a format change.
        name.hasPrefix("ILL") || name.hasPrefix("l3-nonstandard") || name == "l3-he_mode.bit"
    }

    /// Decodes a whole stream to 16-bit values, as `mpg123 -s` would round them.
    static func decode16(_ path: String) throws -> [Int16] {
        let decoder = try AudioFileDecoder(path: path)
        var values: [Int16] = []
        var block: [Float] = []
        while case let frames = try decoder.read(into: &block, maximumFrames: 4_096), frames > 0 {
            values += block[0..<(frames * decoder.channelCount.count)].map {
                Int16(max(-32_768, min(32_767, ($0 * 32_768).rounded())))
            }
        }
        return values
    }

    /// minimp3's rule: PSNR = 10·log10(32767² / MSE) over the shorter length.
    static func psnr(_ a: [Int16], _ b: [Int16]) -> Double {
        let count = min(a.count, b.count)
        guard count > 0 else { return 0 }
        var sum = 0.0
        for index in 0..<count {
            let difference = Double(a[index]) - Double(b[index])
            sum += difference * difference
        }
        let mse = sum / Double(count)
        return mse == 0 ? .infinity : 10 * log10(32_767.0 * 32_767.0 / mse)
    }

    @Test(
        "minimp3's conformance streams decode at ≥ 96 dB PSNR; damaged ones fail cleanly or decode",
        arguments: minimp3Streams
    )
    func minimp3(name: String) throws {
        let path = try Repository.vector("minimp3/" + name)
        let referenceData = try Data(
            contentsOf: URL(fileURLWithPath: path.replacingOccurrences(of: ".bit", with: ".pcm"))
        )
        let reference = referenceData.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let decoded: [Int16]
        do {
            decoded = try Self.decode16(path)
        } catch let error as AudioError {
            #expect(Self.isDamaged(name) || reference.isEmpty, "\(name) should decode: \(error)")
            return
        }
        if Self.isDamaged(name) || name == "l3-test46.bit" { return }  // test46: "decodes without error" only
        if reference.isEmpty {
            #expect(decoded.isEmpty, "\(name)'s reference is empty")
            return
        }
        if name == "l3-sin1k0db.bit" {
            // The reference starts 2,304 frames (4,608 stereo values) later.
            #expect(Self.psnr(Array(decoded.dropFirst(4_608)), reference) >= 96, "\(name) aligned")
            return
        }
        #expect(Self.psnr(decoded, reference) >= 96, "\(name): \(Self.psnr(decoded, reference)) dB")
    }

    @Test("A tag that lies about the length sizes nothing: lots-of-id3text.mp3 is reported as cut short")
    func lyingLength() throws {
        let path = try Repository.vector("mpg123/lots-of-id3text.mp3")
        // The tag's 12.7 M frames never size a buffer: the scan finds the one frame the file holds.
        #expect(
            throws: AudioError(
                .truncated,
                path: path,
                reason: "the file is cut short: its LAME/Xing tag promises 12721605 frames, the stream holds 1152"
            )
        ) {
            try AudioFileDecoder.measure(path: path)
        }
    }

    static func files(in folder: String) -> [String] {
        guard let vectors = Repository.vectors else { return [] }
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: vectors.appendingPathComponent(folder).path)) ?? []
        return names.filter { !$0.hasPrefix("LICENSE") && !$0.hasSuffix(".md") && $0 != "fuzz" }.sorted().map {
            folder + "/" + $0
        }
    }

    @Test(
        "Every go-mp3 and hound fuzz input fails cleanly",
        arguments: files(in: "go-mp3-fuzz") + files(in: "hound-wav/fuzz")
    )
    func fuzzInputs(file: String) throws {
        let path = try Repository.vector(file)
        #expect(throws: AudioError.self) {
            let measurement = try AudioFileDecoder.measure(path: path)
            // Should one ever measure, it must stream without trouble too.
            let stream = try ClipStream(
                decoder: AudioFileDecoder(path: path),
                sourceFrames: measurement.frameCount,
                outputRate: 22_050,
                outputChannels: 1,
                outputFrames: SampleRate(22_050).frames(
                    converting: measurement.frameCount,
                    from: measurement.sampleRate
                )
            )
            var buffer: [Float] = []
            while try stream.read(into: &buffer, maximumFrames: 4_096) > 0 {}
        }
    }

    @Test(
        "Every ordinary hound WAV decodes to its declared frames",
        arguments: files(in: "hound-wav").filter { $0.hasSuffix(".wav") }
    )
    func houndWAV(file: String) throws {
        let path = try Repository.vector(file)
        let measurement = try AudioFileDecoder.measure(path: path)
        #expect(measurement.frameCount > 0)
        let decoded = try Self.decode16(path)
        #expect(Int64(decoded.count) == measurement.frameCount.count * Int64(measurement.channelCount.count))
    }
}
