import Foundation
import SessionKit
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A library's `sounds.json` from others (issue 22, items 9, 17, 18): read only from a regular
/// file of at most 16 MiB, with the scripts' JSON rules.
@Suite("Hostile sounds.json: a FIFO, a huge file, duplicate keys, a byte-order mark")
struct HostileSoundsJSONTests {
    static func library(_ body: (String) throws -> Void) throws -> Result<SoundLibrary, SessionError> {
        let folder = try TemporaryFolder()
        try body(folder.path("sounds.json"))
        do {
            return .success(try SoundLibrary(folder: folder.url.path))
        } catch {
            return .failure(error)
        }
    }

    @Test("A FIFO planted as sounds.json is refused at once, never waited on")
    func fifo() throws {
        var path = ""
        let result = try Self.library { index in
            path = index
            #expect(mkfifo(index, 0o644) == 0)
        }
        guard case .failure(let error) = result else {
            Issue.record("a FIFO was read as sounds.json")
            return
        }
        #expect(error.lines == ["\(path): cannot read the file: it is a FIFO, not a regular file"])
    }

    @Test("A sounds.json over 16 MiB is refused without being parsed")
    func huge() throws {
        var path = ""
        let result = try Self.library { index in
            path = index
            let data =
                Data("[{\"id\": \"a\", \"file\": \"".utf8) + Data(repeating: 0x61, count: 16 << 20) + Data("\"}]".utf8)
            try data.write(to: URL(fileURLWithPath: index))
        }
        guard case .failure(let error) = result else {
            Issue.record("a 16 MiB sounds.json was accepted")
            return
        }
        #expect(error.lines == ["\(path): cannot read the file: it is larger than 16 MiB, the most it may be"])
    }

    @Test("A key twice in an entry is an error at its line and place; a byte-order mark is skipped")
    func duplicateKeysAndByteOrderMark() throws {
        let duplicated = #"[{"id": "gong", "file": "gong.wav", "file": "../../etc/passwd"}]"#
        #expect(
            throws: SessionError(
                .invalidSoundLibrary,
                #"sounds.json: line 1, column 37: the key "file" appears twice in [0]; only one of them can count"#
            )
        ) { try SoundLibrary.entries(json: Data(duplicated.utf8), name: "sounds.json") }
        let marked = Data([0xEF, 0xBB, 0xBF]) + Data(#"[{"id": "gong", "file": "gong.wav"}]"#.utf8)
        #expect(try SoundLibrary.entries(json: marked, name: "sounds.json").map(\.id) == ["gong"])
    }
}
