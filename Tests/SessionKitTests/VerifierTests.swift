import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// The `lame` command, if installed: the independent MP3 encoder the verifier is tried against.
let lamePath: String? = ["/usr/bin/lame", "/usr/local/bin/lame"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}

/// `SessionVerifier` against files corrupted on purpose: each corruption gives one exact complaint.
@Suite("Verifying rendered files", .serialized)
struct VerifierTests {
    /// The edge-cases fixture rendered to `x.wav` and planned, in `folder`. Its item 3 is the
    /// segment `tie` (clip 086967d1…) at frame 231,525, after a silence from frame 178,320.
    /// Without its ``Timeline/audioFile`` stamp: the tests judge doctored copies of the file by
    /// it, which the stamp would refuse as other files before any check ran.
    static func render(in folder: TemporaryFolder) async throws -> Timeline {
        let pipeline = RenderTests.pipeline(audio: folder.path("x.wav"))
        var timeline = try await pipeline.run(ScriptFile.load(Repository.script("edge-cases").path)).timeline
        #expect(timeline.audioFile != nil)
        timeline.audioFile = nil
        return timeline
    }

    /// Writes 16-bit `values` as a mono WAV file at `rate`.
    static func write(_ values: [Int16], rate: SampleRate, to path: String) throws {
        let writer = try SoundFileWriter(path: path, sampleRate: rate, channelCount: .mono, format: .pcm16)
        try writer.write(values.map { Float($0) / 32_768 }, frames: values.count)
        _ = try writer.close()
    }

    /// `values` with item `index`'s frames moved by `shift` frames, mixed over what is there.
    static func moving(_ index: Int, by shift: Int, in values: [Int16], timeline: Timeline) -> [Int16] {
        let item = timeline.items[index]
        let (start, count) = (Int(item.startFrame.count), Int(item.frameCount.count))
        var moved = values
        let clip = values[start..<(start + count)]
        for frame in start..<(start + count) { moved[frame] = 0 }
        for (offset, value) in clip.enumerated() {
            let target = start + shift + offset
            moved[target] = Int16(clamping: Int(moved[target]) + Int(value))
        }
        return moved
    }

    @Test("A render verifies clean: its length, rate and silences are the timeline's")
    func cleanRender() async throws {
        let folder = try TemporaryFolder()
        let timeline = try await Self.render(in: folder)
        let report = try SessionVerifier.verify(file: folder.path("x.wav"), timeline: timeline)
        #expect(report.problems == [])
        #expect(report.decodedFrames == timeline.totalFrames && report.expectedFrames == timeline.totalFrames)
        #expect(report.format == .wav && !report.isLossy && report.checkedTimeline)
        #expect(report.summary == "verified \(folder.path("x.wav")): 0 problems, 790,767 frames at 22050 Hz")
    }

    @Test("A WAV whose data chunk lies inside a declared LIST is a structure problem, though libsndfile decodes it")
    func dataInsideList() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("x.wav")
        try Self.write([Int16](repeating: 100, count: 8_000), rate: SampleRate(8_000), to: path)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let data = try #require((12..<bytes.count - 4).first { bytes[$0..<($0 + 4)].elementsEqual("data".utf8) })
        // What libsndfile 1.2.0 leaves when its header overflows: a LIST declared over what follows.
        let declared = UInt32(4 + bytes.count - data)
        bytes.insert(
            contentsOf: Array("LIST".utf8) + withUnsafeBytes(of: declared.littleEndian, Array.init)
                + Array("adtl".utf8),
            at: data
        )
        let riff = UInt32(bytes.count - 8)
        bytes.replaceSubrange(4..<8, with: withUnsafeBytes(of: riff.littleEndian, Array.init))
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let report = try SessionVerifier.verify(file: path, timeline: nil)
        #expect(report.decodedFrames == Frames(8_000), "libsndfile still decodes it")
        #expect(report.problems.map(\.kind) == [.structure])
        #expect(report.problems.first?.message == "is not a well-formed WAV: no data chunk at the top level")
    }

    @Test("A clip moved 0.3 s later or earlier is named, with how far it moved")
    func shiftedClip() async throws {
        let folder = try TemporaryFolder()
        let timeline = try await Self.render(in: folder)
        let values = try readPCM16(folder.path("x.wav")).values
        let shift = 6_615  // 0.3 s at 22,050 Hz

        try Self.write(
            Self.moving(3, by: shift, in: values, timeline: timeline),
            rate: 22_050,
            to: folder.path("late.wav")
        )
        let late = try SessionVerifier.verify(file: folder.path("late.wav"), timeline: timeline)
        #expect(late.problems.map(\.kind) == [.misplacedSound])
        let lateProblem = try #require(late.problems.first)
        #expect(lateProblem.itemIndex == 3 && lateProblem.itemName == "tie")
        #expect(lateProblem.clipKey?.hasPrefix("086967d1") == true)
        let lateBy = try #require(lateProblem.offsetFrames)
        #expect(abs(lateBy - Int64(shift)) <= 44, "within 2 ms of the shift: \(lateBy)")
        #expect(
            lateProblem.message.hasPrefix("item 3 (segment \"tie\", clip 086967d1…) starts about "),
            "\(lateProblem.message)"
        )
        #expect(lateProblem.message.contains(" late: its sound begins at frame "), "\(lateProblem.message)")

        try Self.write(
            Self.moving(3, by: -shift, in: values, timeline: timeline),
            rate: 22_050,
            to: folder.path("early.wav")
        )
        let early = try SessionVerifier.verify(file: folder.path("early.wav"), timeline: timeline)
        let earlyProblem = try #require(early.problems.first)
        #expect(early.problems.count == 1 && earlyProblem.kind == .misplacedSound && earlyProblem.itemIndex == 3)
        let earlyBy = try #require(earlyProblem.offsetFrames)
        #expect(abs(earlyBy + Int64(shift)) <= 44, "within 2 ms of the shift: \(earlyBy)")
        #expect(earlyProblem.message.contains(" early: its sound begins at frame "), "\(earlyProblem.message)")
        #expect(
            earlyProblem.message.contains("in the silence before its start at frame 231,525 (10.500 s)"),
            "\(earlyProblem.message)"
        )
    }

    @Test("A timeline read from a file finds its clips by name in the cache given, and nothing outside it")
    func sourcesByName() async throws {
        let folder = try TemporaryFolder()
        let timeline = try await Self.render(in: folder)
        let values = try readPCM16(folder.path("x.wav")).values
        try Self.write(
            Self.moving(3, by: 6_615, in: values, timeline: timeline),
            rate: 22_050,
            to: folder.path("late.wav")
        )
        // As a file holds it: the clip by its name in the cache, no machine's path.
        let written = try JSONDecoder().decode(Timeline.self, from: JSONEncoder().encode(timeline))
        let source = try #require(written.items[3].source?.path)
        #expect(!source.contains("/") && source.hasSuffix(".mp3"))
        func verify(clips: String) throws -> String? {
            try SessionVerifier.verify(
                file: folder.path("late.wav"),
                timeline: written,
                sources: SourceFolders(clips: clips, sounds: folder.path("no-sounds"))
            ).problems.first?.message
        }
        // Found in the cache: how late, to the frame (the clip's own lead-in read from its file).
        let found = try verify(clips: Repository.cache.path)
        #expect(found?.contains(" starts about ") == true && found?.contains(", its clip's at frame ") == true)
        // Not there (another cache): only that it may start late.
        try FileManager.default.createDirectory(atPath: folder.path("empty"), withIntermediateDirectories: false)
        #expect(try verify(clips: folder.path("empty"))?.contains(" may start late: ") == true)
    }

    @Test("A sample in a silence, a clipped run, an emptied clip: one complaint each, worded exactly")
    func corruptions() async throws {
        let folder = try TemporaryFolder()
        let timeline = try await Self.render(in: folder)
        let values = try readPCM16(folder.path("x.wav")).values

        var blip = values
        blip[200_000] = 5
        try Self.write(blip, rate: 22_050, to: folder.path("blip.wav"))
        #expect(
            try SessionVerifier.verify(file: folder.path("blip.wav"), timeline: timeline).problems.map(\.message) == [
                "the silence from frame 178,320 (8.087 s) to frame 231,525 (10.500 s) sounds from frame 200,000 (9.070 s) to frame 200,001 (9.070 s), peaking at -76.3 dBFS, where a lossless file's silence is digital zero"
            ]
        )

        var clipped = values
        for frame in 300_000..<300_010 { clipped[frame] = 32_767 }
        try Self.write(clipped, rate: 22_050, to: folder.path("clipped.wav"))
        let clipping = try SessionVerifier.verify(file: folder.path("clipped.wav"), timeline: timeline).problems
        #expect(clipping.map(\.kind) == [.clipping] && clipping.first?.frame == Frames(300_000))
        #expect(
            clipping.first?.message
                == "clips: 10 samples at full scale, the first at frame 300,000 (13.605 s), in item 4 (interjection \"Tied.\", clip 80016ee9…); the peak is 0.0 dBFS"
        )

        var emptied = values
        let last = timeline.items[7]
        for frame in Int(last.startFrame.count)..<Int((last.startFrame + last.frameCount).count) { emptied[frame] = 0 }
        try Self.write(emptied, rate: 22_050, to: folder.path("emptied.wav"))
        #expect(
            try SessionVerifier.verify(file: folder.path("emptied.wav"), timeline: timeline).problems.map(\.message)
                == [
                    "item 7 (segment \"past-the-end\", clip 4f0e958e…) at frame 418,950 (19.000 s) is silent: its loudest 20 ms reach -inf dBFS RMS, below -50 dBFS"
                ]
        )

        let cut = Array(values.prefix(500_000))
        try Self.write(cut, rate: 22_050, to: folder.path("cut.wav"))
        #expect(
            try SessionVerifier.verify(file: folder.path("cut.wav"), timeline: timeline).problems.map(\.message) == [
                "decodes to 500,000 frames, 290,767 frames (13.187 s) fewer than the timeline's 790,767"
            ],
            "items past the end are not judged: the length says it"
        )
    }

    @Test(
        "lame's MP3 of a render verifies clean; cut short or with a wrong LAME padding, its length is wrong",
        .enabled(if: lamePath != nil, "lame is not installed")
    )
    func lameMP3() async throws {
        let folder = try TemporaryFolder()
        // The session's plan (a timeline with no encoding, as `timeline` prints it) judges any
        // file of the session; the WAV render's own record would be refused for an MP3.
        var timeline = try await Self.render(in: folder)
        await #expect(throws: SessionError.self) {
            try await Self.writeLame(folder)
            _ = try SessionVerifier.verify(file: folder.path("x.mp3"), timeline: timeline)
        }
        timeline.encoding = nil

        let clean = try SessionVerifier.verify(file: folder.path("x.mp3"), timeline: timeline)
        #expect(clean.problems == [], "mpg123 drops lame's delay and padding, so the length is exact")
        #expect(clean.format == .mp3 && clean.isLossy && clean.decodedFrames == timeline.totalFrames)

        let bytes = try Data(contentsOf: folder.url.appendingPathComponent("x.mp3"))
        try bytes.prefix(bytes.count * 7 / 10).write(to: folder.url.appendingPathComponent("cut.mp3"))
        let cut = try SessionVerifier.verify(file: folder.path("cut.mp3"), timeline: timeline).problems
        // Short against the timeline, and refused by the decoder too: the LAME tag promises more.
        #expect(cut.map(\.kind) == [.length, .undecodable])
        #expect(
            cut.first?.message.hasPrefix("decodes to ") == true
                && cut.first?.message.contains(" fewer than the timeline's 790,767") == true
        )
        #expect(cut.last?.message.contains("the file is cut short") == true, "\(cut.map(\.message))")

        // The LAME tag's 12-bit delay and 12-bit padding are 21 bytes after "LAME" in the first frame.
        var patched = [UInt8](bytes)
        let lameTag = try #require(patched.indices.first { patched[$0..<($0 + 4)].elementsEqual("LAME".utf8) })
        let at = lameTag + 21
        let padding = Int(patched[at + 1] & 0x0F) << 8 | Int(patched[at + 2])
        let more = padding + 1_000
        patched[at + 1] = (patched[at + 1] & 0xF0) | UInt8(more >> 8)
        patched[at + 2] = UInt8(more & 0xFF)
        try Data(patched).write(to: folder.url.appendingPathComponent("padding.mp3"))
        #expect(
            try SessionVerifier.verify(file: folder.path("padding.mp3"), timeline: timeline).problems.map(\.message)
                == [
                    "decodes to 789,767 frames, 1,000 frames (45 ms) fewer than the timeline's 790,767"
                ]
        )
    }

    @Test(
        "A file's sidecar timeline is beside it, its name with .timeline.json added",
        arguments: [
            ("out/x.mp3", "out/x.mp3.timeline.json"), ("x.wav", "x.wav.timeline.json"),
            ("a.b/c", "a.b/c.timeline.json"),
            ("dir/.hidden", "dir/.hidden.timeline.json"),
        ]
    )
    func sidecar(file: String, expected: String) {
        #expect(SessionVerifier.sidecarTimelinePath(for: file) == expected)
    }

    /// lame's 64 kb/s MP3 of `x.wav` in `folder`, as `x.mp3`.
    static func writeLame(_ folder: TemporaryFolder) async throws {
        let lame = try await ChildProcess.run(
            try #require(lamePath),
            ["--quiet", "-b", "64", folder.path("x.wav"), folder.path("x.mp3")]
        )
        #expect(lame.termination == .exited(0), "\(lame.standardErrorText)")
    }
}
