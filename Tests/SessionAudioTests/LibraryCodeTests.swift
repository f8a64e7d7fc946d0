import Foundation
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio

/// An `AudioError` made from a C library's failure carries the library and its code as data
/// (issue 38), besides the words in its reason, which stay as they were.
@Suite("C libraries' codes in AudioError")
struct LibraryCodeTests {
    /// A real failure of one C library, and what its error must carry.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let library: AudioError.Library
        /// The code, when the library's code for this input is fixed by the library itself.
        let value: Int32?
        /// Whether the reason shows the code as `(code N)`, which must then be the code carried.
        let reasonShowsCode: Bool
        /// Makes the failure happen in `folder`.
        let fail: @Sendable (TemporaryFolder) throws -> Void
        var testDescription: String { name }
    }

    /// `bytes` written to `name` in `folder`; returns its path.
    static func file(_ name: String, _ bytes: [UInt8], in folder: TemporaryFolder) throws -> String {
        let path = folder.path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
    static func littleEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

    static let cases: [Case] = [
        Case(
            name: "libmpg123: random bytes hold no MPEG frame",
            library: .libmpg123,
            value: nil,
            reasonShowsCode: false
        ) {
            _ in
            _ = try AudioFileDecoder.measure(
                path: Repository.fixtures.appendingPathComponent("bad/random-bytes.mp3").path
            )
        },
        Case(
            name: "libsndfile: a WAV whose fmt chunk is zeros",
            library: .libsndfile,
            value: nil,
            reasonShowsCode: false
        ) {
            folder in
            let bytes =
                Array("RIFF".utf8) + littleEndian(36) + Array("WAVEfmt ".utf8) + littleEndian(16)
                + [UInt8](repeating: 0, count: 16) + Array("data".utf8) + littleEndian(0)
            _ = try AudioFileDecoder.measure(path: try file("zeros.wav", bytes, in: folder))
        },
        Case(name: "libavformat: an MP4 with no moov box", library: .libavformat, value: nil, reasonShowsCode: true) {
            folder in
            let bytes =
                bigEndian(24) + Array("ftypM4A ".utf8) + bigEndian(0) + Array("M4A isom".utf8) + bigEndian(16)
                + Array("mdat".utf8) + [UInt8](repeating: 0x5A, count: 8)
            _ = try AudioFileDecoder.measure(path: try file("no-moov.m4a", bytes, in: folder))
        },
        Case(name: "libavcodec: ADTS frames of junk", library: .libavcodec, value: nil, reasonShowsCode: true) {
            folder in
            let header: [UInt8] = [0xFF, 0xF1, 0x50, 0x80, 0x10, 0x1F, 0xFC]
            let bytes = header + [UInt8](repeating: 0x77, count: 121) + header + [UInt8](repeating: 0x33, count: 121)
            _ = try AudioFileDecoder.measure(path: try file("junk.aac", bytes, in: folder))
        },
        Case(name: "libopus: an encoder for no channels", library: .libopus, value: -1, reasonShowsCode: true) {
            folder in
            _ = try OpusEncoder(path: folder.path("o.opus"), channelCount: 0)
        },
        Case(name: "libvorbis: 500 kb/s of 8 kHz mono", library: .libvorbis, value: -130, reasonShowsCode: true) {
            folder in
            _ = try VorbisFileWriter(
                path: folder.path("v.ogg"),
                sampleRate: SampleRate(8_000),
                channelCount: .mono,
                settings: try EncoderSettings(format: .vorbis, bitrate: 500),
                metadata: AudioMetadata(),
                frameCount: Frames(100)
            )
        },
        Case(
            name: "libFLAC: chapters added to a file that is not FLAC",
            library: .libFLAC,
            value: 3,
            reasonShowsCode: false
        ) {
            folder in
            let path = try file("not.flac", Array("RIFF".utf8) + [UInt8](repeating: 0x41, count: 100), in: folder)
            try FLACComments.append([("CHAPTER001", "00:00:00.000")], to: path)
        },
    ]

    @Test("A real failure of each C library carries that library and its code", arguments: cases)
    func carriesCode(_ row: Case) throws {
        let folder = try TemporaryFolder()
        let error = try #require(throws: AudioError.self) { try row.fail(folder) }
        let code = try #require(error.libraryCode, "\(error) carries no library code")
        #expect(code.library == row.library, "\(error)")
        #expect(code.value != 0, "\(error)")
        if let value = row.value { #expect(code.value == value, "\(error)") }
        if row.reasonShowsCode {
            #expect(error.reason.hasSuffix("(code \(code.value))"), "the words and the data agree: \(error)")
        }
    }

    @Test("A failure found here, not by a C library, carries no library code")
    func ownChecksCarryNone() throws {
        let path = Repository.fixtures.appendingPathComponent("bad/cut-to-a-third.mp3").path
        let error = try #require(throws: AudioError.self) { try AudioFileDecoder.measure(path: path) }
        #expect(error.code == .truncated)
        #expect(error.libraryCode == nil)
    }
}
