import Foundation
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio
@testable import SessionKit

/// A sound's loudness and true peak are measured once and kept by the SHA-256 of its bytes.
@Suite("Sound measurements kept between runs")
struct SoundMeasurementsTests {
    /// A folder with `ding.wav` (the layered tests' gong), and an empty `measurements` folder path.
    static func sound() throws -> (folder: TemporaryFolder, path: String, measurements: String) {
        let folder = try LayeredRenderTests.gongLibrary()
        return (folder, folder.path("ding.wav"), folder.path("measurements"))
    }

    @Test("The first measure decodes and keeps a sidecar named by the bytes' SHA-256; the next reads it")
    func keptAndRead() async throws {
        let (folder, path, measurements) = try Self.sound()
        let first = try SoundMeasurements.measureWithLoudness(path: path, in: measurements)
        let truth = try AudioFileDecoder.measureLoudness(path: path, asSound: true)
        #expect(first.loudness == truth.loudness && first.truePeak == truth.truePeak)
        #expect(first.frameCount == Frames(22_050) && first.sampleRate == 44_100)

        let sha = try await LoudnessSidecarTests.sha256(path)
        let sidecarPath = measurements + "/\(sha).loudness.json"
        #expect(try FileManager.default.contentsOfDirectory(atPath: measurements) == ["\(sha).loudness.json"])
        let sidecar = try LoudnessSidecarTests.sidecar(sidecarPath)
        // As JSON writes and reads them: to 10⁻¹² (the sidecar carries 17 digits, Foundation's
        // reader may round the last).
        #expect(abs(try #require(sidecar["truePeak"] as? Double) - (truth.truePeak ?? 0)) < 1e-12)
        #expect(abs(try #require(sidecar["integratedLoudness"] as? Double) - (truth.loudness ?? 0)) < 1e-12)
        #expect(sidecar["frames"] as? Int == 22_050 && sidecar["sha256"] as? String == sha)

        // Values no decode gives: if they come back, the sidecar was read, not the file measured.
        try LoudnessSidecarTests.edit(sidecarPath, ["integratedLoudness": -42.5, "truePeak": -9.25])
        let second = try SoundMeasurements.measureWithLoudness(path: path, in: measurements)
        #expect(second.loudness == -42.5 && second.truePeak == -9.25)
        #expect(second.frameCount == first.frameCount && second.formatName == first.formatName)
        _ = folder
    }

    @Test("A sidecar that does not describe the file, or claims what the file's header denies, is measured again")
    func staleOrFalse() async throws {
        let (folder, path, measurements) = try Self.sound()
        let truth = try SoundMeasurements.measureWithLoudness(path: path, in: measurements)
        let sidecarPath = measurements + "/\(try await LoudnessSidecarTests.sha256(path)).loudness.json"
        let original = try Data(contentsOf: URL(fileURLWithPath: sidecarPath))
        let lies: [[String: Any]] = [
            ["integratedLoudness": -42.5, "bytes": 3],
            ["integratedLoudness": -42.5, "sampleRate": 48_000],
            ["integratedLoudness": -42.5, "channels": 2],
            ["integratedLoudness": 99],  // implausible
            ["truePeak": "loud"],
            ["version": 1],
        ]
        for lie in lies {
            try original.write(to: URL(fileURLWithPath: sidecarPath))
            try LoudnessSidecarTests.edit(sidecarPath, lie)
            let measured = try SoundMeasurements.measureWithLoudness(path: path, in: measurements)
            // Measured again: the very figures of the first decode.
            #expect(measured.loudness == truth.loudness && measured.truePeak == truth.truePeak, "\(lie)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: sidecarPath)) == original, "\(lie): rewritten")
        }
        // A clip's sidecar (no `truePeak` key) is not a sound's.
        try original.write(to: URL(fileURLWithPath: sidecarPath))
        var object = try LoudnessSidecarTests.sidecar(sidecarPath)
        object["truePeak"] = nil
        object["integratedLoudness"] = -42.5
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: sidecarPath))
        #expect(try SoundMeasurements.measureWithLoudness(path: path, in: measurements).loudness == truth.loudness)
        _ = folder
    }

    @Test("A folder that cannot be written costs only the saving: the sound is measured each time")
    func unwritableFolder() throws {
        let (folder, path, _) = try Self.sound()
        // A file where the folder would be.
        let blocked = folder.path("blocked")
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocked))
        let truth = try AudioFileDecoder.measureLoudness(path: path, asSound: true)
        let measured = try SoundMeasurements.measureWithLoudness(path: path, in: blocked + "/measurements")
        #expect(measured.loudness == truth.loudness && measured.truePeak == truth.truePeak)
    }
}
