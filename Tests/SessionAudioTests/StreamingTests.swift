import Foundation
import SessionTimeline
import Synchronization
import TestSupport
import Testing

@testable import SessionAudio

/// Bytes read from the other end of a pipe or FIFO on a thread of their own, as a program
/// reading `render-session`'s standard output would, so that a writer may fill the pipe.
final class Drain: @unchecked Sendable {
    // @unchecked: `bytes` is written only by the reading thread, before it signals `finished`,
    // and read only by `wait()`, after it has waited for that signal.
    private var bytes: [UInt8] = []
    private let finished = DispatchSemaphore(value: 0)

    /// Starts reading, until end of file, the descriptor `open` returns on the reading thread
    /// (a FIFO's open blocks until a writer opens it), closing it at the end. `pause` runs after
    /// each read, to make a slow reader.
    init(open: @escaping @Sendable () -> Int32, pause: @escaping @Sendable () -> Void = {}) {
        Thread { [self] in
            let descriptor = open()
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    bytes += buffer[0..<count]
                    pause()
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            Glibc.close(descriptor)
            finished.signal()
        }.start()
    }

    /// Everything read, once the writing end has been closed.
    func wait() -> [UInt8] {
        finished.wait()
        return bytes
    }
}

/// A pipe: the write end for a ``SoundFileWriter`` stream, the read end drained by a ``Drain``.
func drainedPipe(pause: @escaping @Sendable () -> Void = {}) -> (writeEnd: Int32, drain: Drain) {
    var ends: [Int32] = [0, 0]
    precondition(pipe(&ends) == 0, "pipe: \(String(cString: strerror(errno)))")
    let readEnd = ends[0]
    return (ends[1], Drain(open: { readEnd }, pause: pause))
}

/// One chunk of a RIFF or RF64 file: its id, where its payload starts, and the payload's length
/// (for RF64's `data`, the `ds64` chunk's).
struct Chunk: Equatable, CustomStringConvertible {
    var id: String
    var offset: Int
    var size: Int
    var description: String { "\(id)@\(offset)+\(size)" }
}

/// The chunks after `RIFF`/`RF64`, size, `WAVE`.
func chunks(of bytes: [UInt8]) -> [Chunk] {
    func uint32(_ at: Int) -> Int { bytes[at..<(at + 4)].reversed().reduce(0) { $0 << 8 | Int($1) } }
    func uint64(_ at: Int) -> Int { bytes[at..<(at + 8)].reversed().reduce(0) { $0 << 8 | Int($1) } }
    var result: [Chunk] = []
    var offset = 12
    var rf64DataSize: Int?
    while offset + 8 <= bytes.count {
        let id = String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
        var size = uint32(offset + 4)
        if id == "ds64" { rf64DataSize = uint64(offset + 16) }
        if id == "data", size == 0xFFFF_FFFF, let rf64DataSize { size = rf64DataSize }
        result.append(Chunk(id: id, offset: offset + 8, size: size))
        offset += 8 + size + size % 2
    }
    return result
}

/// The `data` chunk's payload.
func dataChunk(of bytes: [UInt8]) -> ArraySlice<UInt8> {
    guard let data = chunks(of: bytes).first(where: { $0.id == "data" }), data.offset + data.size <= bytes.count else {
        return []
    }
    return bytes[data.offset..<(data.offset + data.size)]
}

/// Where two byte sequences first differ (the shorter one's length if one is a prefix of the
/// other), or `nil` when they are equal: a failure message that points at the byte, rather
/// than printing 100 kB.
func firstDifference<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Int? {
    var offset = 0
    for (x, y) in zip(a, b) {
        if x != y { return offset }
        offset += 1
    }
    return a.count == b.count ? nil : offset
}

/// The frames every comparison writes: a sine that overshoots full scale (so clamping is
/// exercised), then silence, then more sine, in blocks of uneven sizes.
struct Script {
    let channelCount: Int
    var signalFrames = 7_001
    var silenceFrames: Int64 = 3_000
    var frameCount: Int64 { Int64(signalFrames) + silenceFrames }

    func samples(frames: Range<Int>) -> [Float] {
        (frames.lowerBound * channelCount..<frames.upperBound * channelCount).map {
            Float(1.1 * sin(Double($0) * 0.0137))
        }
    }

    func play(into writer: SoundFileWriter) throws {
        try writer.write(samples(frames: 0..<1_000), frames: 1_000)
        try writer.writeSilence(frames: Frames(silenceFrames))
        var start = 1_000
        while start < signalFrames {
            let end = min(start + 777, signalFrames)
            try writer.write(samples(frames: start..<end), frames: end - start)
            start = end
        }
    }
}

@Suite("Streaming a WAV to a descriptor that cannot seek", .tags(.concurrent))
struct StreamingTests {
    /// Writes `script` to a file at `path` with the file initializer; returns the file's bytes.
    func fileBytes(
        _ script: Script,
        format: SampleFormat,
        container: WAVContainer? = nil,
        title: String? = nil,
        path: String
    ) throws -> [UInt8] {
        let writer =
            if let container {
                try SoundFileWriter(
                    path: path,
                    sampleRate: 44_100,
                    channelCount: script.channelCount,
                    format: format,
                    container: container,
                    title: title
                )
            } else {
                try SoundFileWriter(
                    path: path,
                    sampleRate: 44_100,
                    channelCount: ChannelCount(script.channelCount)!,
                    format: format,
                    frameCount: Frames(script.frameCount),
                    title: title
                )
            }
        try script.play(into: writer)
        try writer.close()
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Streams `script` through a pipe; returns what the reading end got.
    func streamedBytes(
        _ script: Script,
        format: SampleFormat,
        container: WAVContainer? = nil,
        title: String? = nil
    ) throws -> [UInt8] {
        let (writeEnd, drain) = drainedPipe()
        do {
            // Closing the write end, however this ends, is what lets the reading thread finish.
            defer { Glibc.close(writeEnd) }
            let writer =
                if let container {
                    try SoundFileWriter(
                        streamingTo: writeEnd,
                        name: "standard output",
                        sampleRate: 44_100,
                        channelCount: script.channelCount,
                        format: format,
                        frameCount: script.frameCount,
                        container: container,
                        metadata: AudioMetadata(title: title)
                    )
                } else {
                    try SoundFileWriter(
                        streamingTo: writeEnd,
                        name: "standard output",
                        sampleRate: 44_100,
                        channelCount: ChannelCount(script.channelCount)!,
                        format: format,
                        frameCount: Frames(script.frameCount),
                        metadata: AudioMetadata(title: title)
                    )
                }
            try script.play(into: writer)
            #expect(writer.framesWritten == Frames(script.frameCount))
            try writer.close()
        }
        return drain.wait()
    }

    /// Checks that libsndfile reads `bytes`, saved as `path`, with the script's format and length,
    /// and the same samples as the file `reference`.
    func expectReadable(_ bytes: [UInt8], as path: String, script: Script, reference: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let reader = try SoundFileReader(descriptor: open(path, O_RDONLY | O_CLOEXEC), path: path)
        #expect(reader.sampleRate == 44_100 && reader.channelCount == script.channelCount)
        #expect(reader.declaredFrameCount == script.frameCount, "the header's frame count")
        #expect(reader.dataShortfall == nil)
        let decoded = try decodeAll(path)
        #expect(decoded.rate == 44_100 && decoded.channels == script.channelCount)
        #expect(Int64(decoded.samples.count / script.channelCount) == script.frameCount, "frames decoded")
        #expect(decoded.samples == (try decodeAll(reference)).samples, "the same samples as the file")
    }

    @Test(
        "A WAV streamed through a pipe is byte for byte the file libsndfile writes",
        arguments: SampleFormat.allCases,
        [1, 2, 3]
    )
    func streamEqualsFile(format: SampleFormat, channels: Int) throws {
        let folder = try TemporaryFolder()
        let script = Script(channelCount: channels)
        let file = try fileBytes(script, format: format, path: folder.path("file.wav"))
        let streamed = try streamedBytes(script, format: format)
        #expect(dataChunk(of: file).count == Int(script.frameCount) * channels * format.bytesPerSample)
        #expect(firstDifference(dataChunk(of: streamed), dataChunk(of: file)) == nil, "data chunks: first difference")
        #expect(chunks(of: streamed) == chunks(of: file), "the same chunks in the same places")
        #expect(firstDifference(streamed, file) == nil, "whole files: first difference")
        #expect(streamed.count == file.count)
        try expectReadable(
            streamed,
            as: folder.path("streamed.wav"),
            script: script,
            reference: folder.path("file.wav")
        )
    }

    @Test(
        "The title tag, and the PAD chunk a short one leaves in a float file, are as libsndfile writes them",
        arguments: SampleFormat.allCases,
        ["A", "Ahh", "Breathe", "Breathe.", "Breathe in.", "The Space Between", "Évora ☃, a walk"]
    )
    func titles(format: SampleFormat, title: String) throws {
        let folder = try TemporaryFolder()
        for channels in [1, 2, 3] {
            let script = Script(channelCount: channels)
            let file = try fileBytes(script, format: format, title: title, path: folder.path("file.wav"))
            let streamed = try streamedBytes(script, format: format, title: title)
            #expect(chunks(of: streamed) == chunks(of: file), "\(channels) channels")
            #expect(firstDifference(streamed, file) == nil, "\(channels) channels: first difference")
            #expect(chunks(of: streamed).contains { $0.id == "LIST" })
        }
    }

    @Test(
        "A WAV file of known length, written from its own header, is byte for byte libsndfile's: title, album, artist, chapters",
        arguments: SampleFormat.allCases
    )
    func headerWrittenFiles(format: SampleFormat) throws {
        let folder = try TemporaryFolder()
        let chapters = [
            AudioChapter(title: "opening", startFrame: .zero, endFrame: Frames(4_000)),
            AudioChapter(title: "Évora ☃", startFrame: Frames(4_000), endFrame: Frames(10_001)),
        ]
        let tags: [AudioMetadata] = [
            AudioMetadata(),
            AudioMetadata(title: "Breathe in.", album: "Morning", artist: "Ava", chapters: chapters),
            AudioMetadata(album: "Evening", chapters: chapters),
            AudioMetadata(title: "T", artist: "Ravi"),
        ]
        for (index, metadata) in tags.enumerated() {
            for channels in [1, 2] {
                let script = Script(channelCount: channels)
                let library = folder.path("library-\(index)-\(channels).wav")
                let reference = try SoundFileWriter(
                    path: library,
                    sampleRate: 44_100,
                    channelCount: channels,
                    format: format,
                    kind: .wav(.riff),
                    metadata: metadata
                )
                try script.play(into: reference)
                try reference.close()
                let ours = folder.path("ours-\(index)-\(channels).wav")
                let writer = try SoundFileWriter(
                    path: ours,
                    sampleRate: SampleRate(44_100),
                    channelCount: ChannelCount(channels)!,
                    settings: try EncoderSettings(format: .wav, sampleFormat: format),
                    metadata: metadata,
                    frameCount: Frames(script.frameCount)
                )
                try script.play(into: writer)
                try writer.close()
                let expected = [UInt8](try Data(contentsOf: URL(fileURLWithPath: library)))
                let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ours)))
                #expect(chunks(of: written) == chunks(of: expected), "tags \(index), \(channels) channels")
                #expect(firstDifference(written, expected) == nil, "tags \(index), \(channels) channels")
            }
        }
    }

    @Test(
        "Where the PAD chunk goes in a 3-channel float file with a title",
        arguments: [
            (
                "A",
                [
                    Chunk(id: "fmt ", offset: 20, size: 16), Chunk(id: "fact", offset: 44, size: 4),
                    Chunk(id: "LIST", offset: 56, size: 14),
                    Chunk(id: "PAD ", offset: 78, size: 10), Chunk(id: "data", offset: 96, size: 120_012),
                ]
            ),
            (
                "Breathe in.",
                [
                    Chunk(id: "fmt ", offset: 20, size: 16), Chunk(id: "fact", offset: 44, size: 4),
                    Chunk(id: "LIST", offset: 56, size: 24),
                    Chunk(id: "data", offset: 88, size: 120_012),
                ]
            ),
        ]
    )
    func padChunk(title: String, expected: [Chunk]) throws {
        #expect(chunks(of: try streamedBytes(Script(channelCount: 3), format: .float32, title: title)) == expected)
    }

    @Test(
        "An RF64 stream is the RF64 file, but for the PEAK chunk a float stream cannot know in advance",
        arguments: SampleFormat.allCases,
        [1, 2, 3]
    )
    func rf64(format: SampleFormat, channels: Int) throws {
        let folder = try TemporaryFolder()
        let script = Script(channelCount: channels)
        for title in [nil, "The Space Between"] {
            let file = try fileBytes(
                script,
                format: format,
                container: .rf64,
                title: title,
                path: folder.path("file.wav")
            )
            let streamed = try streamedBytes(script, format: format, container: .rf64, title: title)
            #expect(Array(streamed.prefix(4)) == Array("RF64".utf8))
            #expect(
                firstDifference(dataChunk(of: streamed), dataChunk(of: file)) == nil,
                "data chunks: first difference"
            )
            let fileChunks = chunks(of: file)
            if format == .float32 {
                // libsndfile writes a PEAK chunk into an RF64 float file even though SoundFileWriter asks
                // it not to; the stream holds a PAD chunk of the same size in its place.
                let peak = try #require(fileChunks.first { $0.id == "PEAK" })
                #expect(peak.size == 8 + 8 * channels)
                #expect(
                    chunks(of: streamed)
                        == fileChunks.map { $0.id == "PEAK" ? Chunk(id: "PAD ", offset: $0.offset, size: $0.size) : $0 }
                )
                #expect(streamed[peak.offset..<(peak.offset + peak.size)].allSatisfy { $0 == 0 })
                let outside = { (bytes: [UInt8]) in
                    Array(bytes[..<(peak.offset - 8)] + bytes[(peak.offset + peak.size)...])
                }
                #expect(
                    firstDifference(outside(streamed), outside(file)) == nil,
                    "all but the PEAK chunk: first difference"
                )
            } else {
                #expect(chunks(of: streamed) == fileChunks)
                #expect(firstDifference(streamed, file) == nil, "whole files: first difference")
            }
            try expectReadable(
                streamed,
                as: folder.path("streamed.wav"),
                script: script,
                reference: folder.path("file.wav")
            )
        }
    }

    @Test(
        "A stream whose data would pass 4 GiB starts with an RF64 header, a smaller one with RIFF",
        arguments: [
            (Int64(1_100_000_000), "RF64"), (Int64(1_000_000_000), "RIFF"),
        ]
    )
    func bigStreamHeader(frames: Int64, magic: String) throws {
        // 16-bit stereo, 4 bytes a frame. Only the header and the promise are checked.
        let (writeEnd, drain) = drainedPipe()
        do {
            defer { Glibc.close(writeEnd) }
            let writer = try SoundFileWriter(
                streamingTo: writeEnd,
                name: "standard output",
                sampleRate: 48_000,
                channelCount: 2,
                format: .pcm16,
                frameCount: Frames(frames)
            )
            try writer.writeSilence(frames: 10)
            #expect(
                throws: AudioError(
                    .cannotWrite,
                    path: "standard output",
                    reason: "the stream ended after 10 of the \(frames) frames its header promised"
                )
            ) {
                try writer.close()
            }
        }
        let bytes = drain.wait()
        func uint64(_ at: Int) -> Int64 { bytes[at..<(at + 8)].reversed().reduce(0) { $0 << 8 | Int64($1) } }
        func uint32(_ at: Int) -> Int64 { bytes[at..<(at + 4)].reversed().reduce(0) { $0 << 8 | Int64($1) } }
        #expect(String(decoding: bytes.prefix(4), as: UTF8.self) == magic)
        if magic == "RF64" {
            #expect(bytes.count == 104 + 40)
            #expect(uint32(4) == 0xFFFF_FFFF && uint32(100) == 0xFFFF_FFFF)
            #expect(uint64(20) == 104 + frames * 4 - 8, "ds64: RIFF size")
            #expect(uint64(28) == frames * 4, "ds64: data size")
            #expect(uint64(36) == frames, "ds64: frame count")
            #expect(uint32(44) == 0, "ds64: table length")
        } else {
            #expect(bytes.count == 44 + 40)
            #expect(uint32(4) == 36 + frames * 4 && uint32(40) == frames * 4)
        }
    }

    @Test("A FIFO is written straight through, like a pipe")
    func fifo() throws {
        let folder = try TemporaryFolder()
        let script = Script(channelCount: 2)
        let file = try fileBytes(script, format: .pcm24, title: "FIFO", path: folder.path("file.wav"))
        let fifoPath = folder.path("out.wav")
        #expect(mkfifo(fifoPath, 0o600) == 0)
        let drain = Drain(open: { open(fifoPath, O_RDONLY) })
        let descriptor = open(fifoPath, O_WRONLY)
        try #require(descriptor >= 0)
        do {
            defer { Glibc.close(descriptor) }
            let writer = try SoundFileWriter(
                streamingTo: descriptor,
                name: fifoPath,
                sampleRate: 44_100,
                channelCount: 2,
                format: .pcm24,
                frameCount: Frames(script.frameCount),
                metadata: AudioMetadata(title: "FIFO")
            )
            try script.play(into: writer)
            try writer.close()
        }
        #expect(firstDifference(drain.wait(), file) == nil, "first difference")
    }

    @Test("A pipe whose reader has gone is a cannotWrite error, not death by SIGPIPE")
    func closedPipe() throws {
        // SIGPIPE keeps its default action here: the writer itself must not let it end the process.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        Glibc.close(ends[0])
        defer { Glibc.close(ends[1]) }
        #expect(
            throws: AudioError(
                .cannotWrite,
                path: "standard output",
                reason: "cannot write the WAV header: Broken pipe"
            )
        ) {
            _ = try SoundFileWriter(
                streamingTo: ends[1],
                name: "standard output",
                sampleRate: 8_000,
                channelCount: 1,
                format: .pcm16,
                frameCount: 100
            )
        }
        #expect(!sigpipeIsPending(), "no SIGPIPE left pending")
    }

    @Test(
        "A reader that goes away mid-stream is a cannotWrite error on the next write",
        arguments: SampleFormat.allCases
    )
    func readerGoesAway(format: SampleFormat) throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { Glibc.close(ends[1]) }
        let readEnd = ends[0]
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 10_000)
            _ = read(readEnd, &buffer, buffer.count)
            Glibc.close(readEnd)
        }
        reader.start()
        let frames: Int64 = 10_000_000
        let writer = try SoundFileWriter(
            streamingTo: ends[1],
            name: "standard output",
            sampleRate: 48_000,
            channelCount: 2,
            format: format,
            frameCount: Frames(frames)
        )
        let block = [Float](repeating: 0.25, count: 2 * 4_096)
        var failure: AudioError?
        do throws(AudioError) {
            while writer.framesWritten < Frames(frames) { try writer.write(block, frames: 4_096) }
        } catch {
            failure = error
        }
        let error = try #require(failure, "a write failed")
        #expect(error.code == .cannotWrite)
        #expect(error.reason.wholeMatch(of: #/wrote \d+ of 4096 frames: Broken pipe/#) != nil, "\(error.reason)")
        #expect(writer.framesWritten < Frames(frames))
        #expect(!sigpipeIsPending(), "no SIGPIPE left pending")
        #expect(
            throws: AudioError(
                .cannotWrite,
                path: "standard output",
                reason: "the stream ended after \(writer.framesWritten) of the \(frames) frames its header promised"
            )
        ) {
            try writer.close()
        }
    }

    @Test("A full device is a cannotWrite error that says so")
    func fullDevice() throws {
        let descriptor = open("/dev/full", O_WRONLY)
        try #require(descriptor >= 0, "/dev/full exists")
        defer { Glibc.close(descriptor) }
        #expect(
            throws: AudioError(
                .cannotWrite,
                path: "/dev/full",
                reason: "cannot write the WAV header: No space left on device"
            )
        ) {
            _ = try SoundFileWriter(
                streamingTo: descriptor,
                name: "/dev/full",
                sampleRate: 8_000,
                channelCount: 1,
                format: .pcm16,
                frameCount: 100
            )
        }
    }

    @Test("A character device takes a whole stream")
    func characterDevice() throws {
        let descriptor = open("/dev/null", O_WRONLY)
        try #require(descriptor >= 0, "/dev/null exists")
        defer { Glibc.close(descriptor) }
        let script = Script(channelCount: 2)
        let writer = try SoundFileWriter(
            streamingTo: descriptor,
            name: "/dev/null",
            sampleRate: 44_100,
            channelCount: 2,
            format: .float32,
            frameCount: Frames(script.frameCount)
        )
        try script.play(into: writer)
        try writer.close()
        #expect(writer.framesWritten == Frames(script.frameCount))
    }

    @Test("Closing after fewer frames than promised is an error, and no pad byte follows")
    func fewerFrames() throws {
        let (writeEnd, drain) = drainedPipe()
        do {
            defer { Glibc.close(writeEnd) }
            let writer = try SoundFileWriter(
                streamingTo: writeEnd,
                name: "s.wav",
                sampleRate: 8_000,
                channelCount: 1,
                format: .pcm24,
                frameCount: 101
            )
            try writer.write([Float](repeating: 0.5, count: 60), frames: 60)
            #expect(
                throws: AudioError(
                    .cannotWrite,
                    path: "s.wav",
                    reason: "the stream ended after 60 of the 101 frames its header promised"
                )
            ) {
                try writer.close()
            }
            try writer.close()  // a second close does nothing
        }
        #expect(drain.wait().count == 44 + 60 * 3)
    }

    @Test("Writing more frames than promised is an error, and writes nothing")
    func moreFrames() throws {
        let (writeEnd, drain) = drainedPipe()
        do {
            defer { Glibc.close(writeEnd) }
            let writer = try SoundFileWriter(
                streamingTo: writeEnd,
                name: "s.wav",
                sampleRate: 8_000,
                channelCount: 2,
                format: .pcm16,
                frameCount: 100
            )
            try writer.writeSilence(frames: 90)
            #expect(
                throws: AudioError(
                    .cannotWrite,
                    path: "s.wav",
                    reason: "11 more frames after 90 would pass the 100 frames the header promised"
                )
            ) {
                try writer.write([Float](repeating: 0, count: 22), frames: 11)
            }
            #expect(
                throws: AudioError(
                    .cannotWrite,
                    path: "s.wav",
                    reason: "11 more frames after 90 would pass the 100 frames the header promised"
                )
            ) {
                try writer.writeSilence(frames: 11)
            }
            #expect(writer.framesWritten == 90)
            try writer.writeSilence(frames: 10)
            try writer.close()
        }
        #expect(drain.wait().count == 44 + 100 * 4)
    }

}

/// Streams written while signals arrive. Serialized: the tests count deliveries of one signal.
@Suite("Streaming while signals arrive", .serialized, .tags(.concurrent))
struct StreamingSignalTests {
    @Test("Writes that signals interrupt are finished, not lost")
    func interruptedWrites() throws {
        let folder = try TemporaryFolder()
        let script = Script(channelCount: 2, signalFrames: 200_000)
        let file = try StreamingTests().fileBytes(script, format: .float32, path: folder.path("file.wav"))
        let (writeEnd, drain) = drainedPipe(pause: { usleep(1_000) })
        let signals = try withSIGUSR1Barrage {
            defer { Glibc.close(writeEnd) }
            let writer = try SoundFileWriter(
                streamingTo: writeEnd,
                name: "standard output",
                sampleRate: 44_100,
                channelCount: 2,
                format: .float32,
                frameCount: Frames(script.frameCount)
            )
            try script.play(into: writer)
            try writer.close()
        }
        #expect(firstDifference(drain.wait(), file) == nil, "first difference")
        #expect(signals > 0, "signals arrived while writing")
    }

    @Test("A write that a signal interrupts before it has written anything (EINTR) is retried")
    func eintrIsRetried() throws {
        // One 4 MiB write into a pipe that a slow reader keeps full: after the first short write,
        // each retry starts on a full pipe, so a signal that arrives while it waits makes it EINTR.
        let bytes = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 12) }
        let (writeEnd, drain) = drainedPipe(pause: { usleep(2_000) })
        let output = DescriptorOutput(descriptor: writeEnd)
        var succeeded = false
        let signals = withSIGUSR1Barrage {
            defer { Glibc.close(writeEnd) }
            succeeded = bytes.withUnsafeBytes { output.write($0) }
        }
        #expect(succeeded && output.errorNumber == 0)
        #expect(output.byteCount == Int64(bytes.count))
        #expect(firstDifference(drain.wait(), bytes) == nil, "first difference")
        #expect(signals > 0, "signals arrived while writing")
        #expect(output.interruptionCount > 0, "writes returned EINTR and were retried")
    }
}

/// Runs `body` while another thread sends this thread SIGUSR1 every 50 µs; returns how many
/// arrived. The handler has no `SA_RESTART`, so a blocked `write` returns early: a short count,
/// or `EINTR` if it had written nothing. The handler stays installed afterwards, so that a late
/// SIGUSR1 cannot end the test process.
func withSIGUSR1Barrage(_ body: () throws -> Void) rethrows -> Int {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in interruptions.add(1, ordering: .relaxed) }
    action.sa_flags = 0
    sigemptyset(&action.sa_mask)
    precondition(sigaction(SIGUSR1, &action, nil) == 0)
    // Swift Testing runs tests on libdispatch workers, which block SIGUSR1: let it through here.
    // Every SIGUSR1 sent is delivered before the mask is restored, since the sender has stopped
    // by then and an unblocked signal is delivered on the way out of the kernel.
    var usr1 = sigset_t()
    sigemptyset(&usr1)
    sigaddset(&usr1, SIGUSR1)
    var previousMask = sigset_t()
    precondition(pthread_sigmask(SIG_UNBLOCK, &usr1, &previousMask) == 0)
    defer { pthread_sigmask(SIG_SETMASK, &previousMask, nil) }

    let target = pthread_self()
    let sender = SignalSender()
    let before = interruptions.load(ordering: .relaxed)
    Thread {
        while !sender.stop.load(ordering: .relaxed) {
            pthread_kill(target, SIGUSR1)
            usleep(50)
        }
        sender.stopped.signal()
    }.start()
    defer {
        sender.stop.store(true, ordering: .relaxed)
        sender.stopped.wait()
    }
    try body()
    return interruptions.load(ordering: .relaxed) - before
}

/// Tells the thread that sends SIGUSR1 in ``withSIGUSR1Barrage(_:)`` to stop, and says when it has.
private final class SignalSender: Sendable {
    let stop = Atomic<Bool>(false)
    let stopped = DispatchSemaphore(value: 0)
}

/// SIGUSR1 deliveries seen by ``withSIGUSR1Barrage(_:)``.
private let interruptions = Atomic<Int>(0)

/// Whether a SIGPIPE waits on this thread or the process.
private func sigpipeIsPending() -> Bool {
    var pending = sigset_t()
    sigpending(&pending)
    return sigismember(&pending, SIGPIPE) == 1
}
