import Foundation
import TestSupport
import Testing

/// What the README says of `timeline`: a render's timeline JSON less what only a render knows.
@Suite("timeline and a render's timeline JSON", .serialized)
struct TimelineSidecarTests {
    static func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test(
        "timeline prints a render's timeline JSON without exactly these fields: encoding, loudness.integrated, loudness.truePeak",
        arguments: [[String](), ["--loudness", "off"]]
    )
    func sidecarLessRenderFields(extra: [String]) throws {
        let folder = try TemporaryFolder()
        let arguments =
            ["Fixtures/scripts/ten-minute-session.json", "--cache", "Fixtures/cache", "--seed", "7", "--offline"]
            + extra
        let printed = try renderSession(["timeline"] + arguments)
        #expect(printed.status == 0, "\(printed.standardError)")
        let render = try renderSession(
            ["render"] + arguments + ["-o", folder.path("s.mp3"), "--timeline", folder.path("s.json")]
        )
        #expect(render.status == 0, "\(render.standardError)")
        var written = try Self.json(Data(contentsOf: URL(fileURLWithPath: folder.path("s.json"))))
        let timeline = try Self.json(Data(printed.standardOutputBytes))

        #expect(timeline["encoding"] == nil)
        #expect(written.removeValue(forKey: "encoding") != nil, "a render records how it encoded the file")
        if extra.isEmpty {
            let measured = try #require(written["loudness"] as? [String: Any])
            let planned = try #require(timeline["loudness"] as? [String: Any])
            #expect(measured["integrated"] is Double && measured["truePeak"] is Double)
            #expect(planned["integrated"] is NSNull && planned["truePeak"] is NSNull, "timeline measures nothing")
            var rest = measured
            rest["integrated"] = NSNull()
            rest["truePeak"] = NSNull()
            written["loudness"] = rest
        } else {
            #expect(written["loudness"] is NSNull && timeline["loudness"] is NSNull)
        }
        #expect(NSDictionary(dictionary: written).isEqual(to: timeline), "nothing else differs")
        #expect(Set(written.keys) == Set(timeline.keys))
    }
}
