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
        "timeline prints a render's timeline JSON without exactly what a render measures: encoding, the file's stamp, loudness's measurements, phases' speech loudness",
        arguments: [[String](), ["--loudness", "off"]]
    )
    func sidecarLessRenderFields(extra: [String]) async throws {
        let folder = try TemporaryFolder()
        let arguments =
            ["Fixtures/scripts/ten-minute-session.json", "--cache", "Fixtures/cache", "--seed", "7", "--offline"]
            + extra
        // The MP3's timeline: the format sets the codec's room under the ceiling, and with it the
        // sounds' gains.
        let printed = try await renderSession(["timeline"] + arguments + ["--format", "mp3"])
        #expect(printed.status == 0, "\(printed.standardError)")
        let render = try await renderSession(
            ["render"] + arguments + ["-o", folder.path("s.mp3"), "--timeline", folder.path("s.json")]
        )
        #expect(render.status == 0, "\(render.standardError)")
        var written = try Self.json(Data(contentsOf: URL(fileURLWithPath: folder.path("s.json"))))
        let timeline = try Self.json(Data(printed.standardOutputBytes))

        #expect(timeline["encoding"] == nil)
        #expect(written.removeValue(forKey: "encoding") != nil, "a render records how it encoded the file")
        #expect(written.removeValue(forKey: "audioFile") != nil, "and the file's size and SHA-256")
        if extra.isEmpty {
            let measured = try #require(written["loudness"] as? [String: Any])
            let planned = try #require(timeline["loudness"] as? [String: Any])
            let measurements = ["speech", "program", "range", "maxShortTerm", "truePeak", "limiter", "leveler"]
            for key in measurements {
                #expect(measured[key] != nil && !(measured[key] is NSNull), "a render measures \(key)")
                #expect(planned[key] is NSNull, "timeline measures nothing: \(key)")
            }
            // MP3 at -V 6 leaves 0.5 dB at least; the plan's probe of the codec may ask for more,
            // and so may a decoded file over the ceiling all the same.
            let room = try #require(measured["codecHeadroomDb"] as? Double)
            let plannedRoom = try #require(planned["codecHeadroomDb"] as? Double)
            #expect(room >= 0.5 && room >= plannedRoom, "\(room) dB, planned \(plannedRoom)")
            var rest = measured
            for key in measurements { rest[key] = NSNull() }
            rest["codecHeadroomDb"] = plannedRoom
            // How many times the file was encoded: a render's alone (issue 42, item 5).
            #expect((1...3).contains(rest.removeValue(forKey: "encodings") as? Int ?? 0), "\(measured)")
            written["loudness"] = rest
            let phases = try #require(written["phases"] as? [[String: Any]])
            #expect(phases.allSatisfy { $0["speechLoudness"] is Double })
            written["phases"] = phases.map { $0.filter { $0.key != "speechLoudness" } }
        } else {
            #expect(written["loudness"] is NSNull && timeline["loudness"] is NSNull)
        }
        #expect(NSDictionary(dictionary: written).isEqual(to: timeline), "nothing else differs")
        #expect(Set(written.keys) == Set(timeline.keys))
    }
}
