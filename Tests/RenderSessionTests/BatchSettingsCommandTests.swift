import Foundation
import TestSupport
import Testing

/// A batch's up-to-date check hashes every setting that shapes the output (issue 23): the settings
/// are one value, so none can be left out of the hash by hand.
@Suite("A batch's up-to-date hash covers every setting")
struct BatchSettingsCommandTests {
    @Test("A region file run again with --per-region 2 is rendered again, then up to date")
    func perRegion() async throws {
        let folder = try TemporaryFolder()
        try Data(
            #"[{"id": "back", "region": "back", "displayName": "Back", "stretches": [{"id": "b1", "name": "B1", "description": "b one", "bilateral": false}, {"id": "b2", "name": "B2", "description": "b two", "bilateral": false}]}]"#
                .utf8
        ).write(to: folder.url.appendingPathComponent("stretches.json"))
        func batch(_ extra: [String]) async throws -> String {
            let result = try await renderSession(
                ["batch", folder.path("stretches.json"), "-o", folder.path("out"), "--cache", folder.path("cache")]
                    + extra
            )
            #expect(result.status == 0, "\(result.standardError)")
            return result.standardError.split(separator: "\n").last.map(String.init) ?? ""
        }
        #expect(try await batch([]).contains(": 1 rendered, 0 up to date, 0 failed, in "))
        #expect(try await batch(["--per-region", "2"]).contains(": 1 rendered, 0 up to date, 0 failed, in "))
        #expect(try await batch(["--per-region", "2"]).contains(": 0 rendered, 1 up to date, 0 failed, in "))
        let timeline = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: folder.url.appendingPathComponent("out/stretches.wav.timeline.json"))
            ) as? [String: Any]
        )
        let items = try #require(timeline["items"] as? [[String: Any]])
        #expect(items.count > 2, "both stretches of the region are in the output")
    }

    @Test(
        "A library message names a setting; the command names its flag, in text and in JSON",
        arguments: ["render", "batch"]
    )
    func flagsInMessages(command: String) async throws {
        let folder = try TemporaryFolder()
        try Data(
            #"[{"id": "back", "region": "back", "displayName": "Back", "stretches": [{"id": "b1", "name": "B1", "description": "b one", "bilateral": false}]}]"#
                .utf8
        ).write(to: folder.url.appendingPathComponent("stretches.json"))
        let result = try await renderSession([
            command, folder.path("stretches.json"), "-o", folder.path(command == "batch" ? "out" : "out.wav"),
            "--cache", folder.path("cache"), "--regions", "nope",
        ])
        #expect(result.status == 65)
        #expect(
            result.standardError
                == "error: stretches: --regions: \"nope\" is not a region of the file; it has back\n"
        )
    }

    @Test("voices --json names the proxy's flags, as the table does")
    func voicesJSON() async throws {
        let result = try await renderSession(["voices", "--json"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains(#""needs --provider proxy --tts-url (the backend chooses the voice)""#))
        #expect(!result.standardOutput.contains("{{setting:"))
    }
}
