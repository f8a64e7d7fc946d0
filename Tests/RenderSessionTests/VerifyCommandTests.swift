import Foundation
import SessionAudio
import TestSupport
import Testing

/// `render-session verify`: what it prints and how it exits.
@Suite("The verify command", .serialized)
struct VerifyCommandTests {
    /// Renders the edge-cases fixture to `x.wav` with its timeline `x.timeline.json` in `folder`.
    static func render(in folder: TemporaryFolder) async throws {
        let result = try await renderSession([
            "render", "Fixtures/scripts/edge-cases.json", "-o", folder.path("x.wav"), "--timeline",
            folder.path("x.timeline.json"), "--cache", "Fixtures/cache", "--offline", "--seed", "7",
        ])
        #expect(result.status == 0, "\(result.standardError)")
    }

    @Test("A clean render exits 0 and prints nothing; a clipped copy prints its line and exits 1; --json has the shape")
    func cleanAndClipped() async throws {
        let folder = try TemporaryFolder()
        try await Self.render(in: folder)
        let clean = try await renderSession([
            "verify", folder.path("x.wav"), "--timeline", folder.path("x.timeline.json"),
        ])
        #expect(clean.status == 0)
        #expect(clean.standardOutput == "")
        #expect(
            clean.standardError.wholeMatch(
                of:
                    #/verified .*x\.wav: 0 problems, 790,767 frames at 22050 Hz, speech -1[67]\.[0-9] LUFS, program -1[67]\.[0-9] LUFS, -1\.[0-9] dBTP at 48 kHz\n/#
            ) != nil,
            "\(clean.standardError)"
        )

        // Frames 300,000 to 300,009 at full scale, inside item 4: 16-bit mono samples after the `data` chunk's header.
        var bytes = [UInt8](try Data(contentsOf: folder.url.appendingPathComponent("x.wav")))
        // (The `data` chunk, not the cue points' `data` references before it: the one whose size is the samples'.)
        let size: [UInt8] = [0xDE, 0x21, 0x18, 0x00]  // 790,767 × 2 bytes, little-endian
        let data =
            try #require(
                bytes.indices.first {
                    bytes[$0..<($0 + 4)].elementsEqual("data".utf8) && Array(bytes[($0 + 4)..<($0 + 8)]) == size
                }
            ) + 8
        for frame in 300_000..<300_010 { (bytes[data + 2 * frame], bytes[data + 1 + 2 * frame]) = (0xFF, 0x7F) }
        try Data(bytes).write(to: folder.url.appendingPathComponent("clipped.wav"))
        try removeAudioFileStamp(fromTimelineAt: folder.path("x.timeline.json"))
        let clipped = try await renderSession([
            "verify", folder.path("clipped.wav"), "--timeline", folder.path("x.timeline.json"),
        ])
        #expect(clipped.status == 1)
        // Full-scale samples clip, and put the true peak over the timeline's ceiling.
        let lines = clipped.standardOutput.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "\(folder.path("clipped.wav")): clips: 10 samples at full scale, the first at frame 300,000 (13.605 s), in item 4 (interjection \"Tied.\", clip 80016ee9…); the peak is 0.0 dBFS"
        )
        #expect(
            lines.count == 2
                && lines[1].hasPrefix("\(folder.path("clipped.wav")): the true peak as played at 48 kHz is ")
                && lines[1].hasSuffix(" dBTP, over the ceiling of -1.0 dBTP"),
            "\(lines)"
        )
        #expect(
            clipped.standardError.hasPrefix(
                "verified \(folder.path("clipped.wav")): 2 problems, 790,767 frames at 22050 Hz, speech "
            )
        )

        let json = try await renderSession([
            "verify", folder.path("clipped.wav"), "--timeline", folder.path("x.timeline.json"), "--json",
        ])
        #expect(json.status == 1)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.standardOutputBytes)) as? [String: Any]
        )
        #expect(
            Set(object.keys) == [
                "file", "format", "formatName", "lossy", "sampleRate", "channels", "decodedFrames", "expectedFrames",
                "peakDbfs", "timelineChecked", "problems", "ok", "loudness",
            ]
        )
        #expect(object["ok"] as? Bool == false && object["format"] as? String == "wav")
        #expect(object["decodedFrames"] as? Int == 790_767 && object["expectedFrames"] as? Int == 790_767)
        let problems = try #require(object["problems"] as? [[String: Any]])
        #expect(problems.map { $0["code"] as? String } == ["clipping", "loudness"])
        #expect(problems.first?["code"] as? String == "clipping" && problems.first?["frame"] as? Int == 300_000)
        #expect(problems.first?["item"] as? Int == 4 && (problems.first?["key"] as? String)?.count == 64)
    }

    @Test("Without a timeline or sidecar it is an error; with --no-timeline a clean file exits 0")
    func noTimeline() async throws {
        let folder = try TemporaryFolder()
        try await Self.render(in: folder)
        try FileManager.default.moveItem(atPath: folder.path("x.wav"), toPath: folder.path("alone.wav"))
        let alone = try await renderSession(["verify", folder.path("alone.wav")])
        #expect(alone.status == 65)
        #expect(alone.standardOutput == "")
        #expect(
            alone.standardError
                == "error: Cannot verify \(folder.path("alone.wav")): it has no timeline (\(folder.path("alone.wav.timeline.json")) does not exist); name it with --timeline, or check only that it decodes and does not clip with --no-timeline\n"
        )
        let unchecked = try await renderSession(["verify", folder.path("alone.wav"), "--no-timeline"])
        #expect(unchecked.status == 0)
        #expect(unchecked.standardOutput == "")
        #expect(
            unchecked.standardError == "verified \(folder.path("alone.wav")): 0 problems, 790,767 frames at 22050 Hz\n"
        )

        let missing = try await renderSession([
            "verify", folder.path("none.wav"), "--timeline", folder.path("x.timeline.json"),
        ])
        #expect(missing.status == 65, "a file that cannot be read is not a problem found")
        #expect(missing.standardError == "error: Cannot verify \(folder.path("none.wav")): no such file\n")
    }
}
