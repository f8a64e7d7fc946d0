import Foundation
import SessionTimeline
import Testing

/// Scripts that come from others (issue 22): every trick is one problem at its place.
@Suite("Hostile scripts: duplicate keys, byte-order marks, control characters, expanding texts")
struct HostileScriptTests {
    static func problems(_ text: String) -> [String] {
        do {
            _ = try Script(json: Data(text.utf8))
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    static let valid = String(decoding: ScriptValidationTests.json(), as: UTF8.self)

    @Test(
        "A key twice in one object is an error at its line and JSON path, never last-wins",
        arguments: [
            (
                #"{"id": "a", "id": "b"}"#,
                #"line 1, column 13: the key "id" appears twice in the top-level object; only one of them can count"#
            ),
            (
                #"{"segments": [{"text": "a"}, {"text": "b", "text": "c"}]}"#,
                #"line 1, column 44: the key "text" appears twice in segments[1]; only one of them can count"#
            ),
            (
                #"{"sound": {"ambience": {"name": "rain", "name": "fire"}}}"#,
                #"line 1, column 41: the key "name" appears twice in sound.ambience; only one of them can count"#
            ),
        ]
    )
    func duplicateKeys(text: String, expected: String) {
        #expect(Self.problems(text) == [expected])
    }

    @Test("A UTF-8 byte-order mark before the script is skipped")
    func byteOrderMark() throws {
        let script = try Script(json: Data([0xEF, 0xBB, 0xBF]) + ScriptValidationTests.json())
        #expect(script.id == "med-01" && script.guided.segments.count == 2)
        // Only at the start: elsewhere it is text that is not JSON.
        #expect(
            Self.problems(#"{"id": "a",\#u{FEFF} "b": 1}"#) == [
                "line 1, column 12: expected a key in double quotes"
            ]
        )
    }

    @Test(
        "A text with a control character is refused at its path; tab, newline and return are text",
        arguments: [
            (
                "Hello\\u0000 world",
                "segments[1].text: holds the control character U+0000 at character 6; a speech engine reads up to a NUL and drops the rest"
            ),
            (
                "Bell\\u0007",
                "segments[1].text: holds the control character U+0007 at character 5; control characters are not speech"
            ),
            (
                "CSI\\u009b2J",
                "segments[1].text: holds the control character U+009B at character 4; control characters are not speech"
            ),
            ("Line one.\\nLine\\ttwo.\\r", ""),
        ]
    )
    func controlCharacters(text: String, expected: String) {
        let json = ScriptValidationTests.json(
            segments: """
                [{"id": "opening", "startSeconds": 0, "text": "Welcome.", "phase": "opening"},
                 {"id": "teachings", "startSeconds": 120.5, "text": "\(text)", "phase": "teachings"}]
                """
        )
        let problems = (ScriptValidationTests.error(json)?.problems ?? []).map(\.description)
        #expect(problems == (expected.isEmpty ? [] : [expected]))
    }

    @Test("A workout's announcement that grows past 5,000 characters with {n} is refused")
    func expandingAnnouncement() {
        // "{n}" is 3 characters and grows to 4 from round 1000 on.
        func workout(rounds: Int, placeholders: Int) -> String {
            let announce = String(repeating: "{n}", count: placeholders)
            return
                #"{"kind": "workout", "id": "w", "title": "W", "rounds": \#(rounds), "workSeconds": 10, "announce": "\#(announce)"}"#
        }
        // 1,600 × "{n}" is 4,800 characters; round 999 speaks 4,800 of them.
        #expect(Self.problems(workout(rounds: 999, placeholders: 1_600)) == [])
        #expect(
            Self.problems(workout(rounds: 1_000, placeholders: 1_600)) == [
                "announce: the announcement of round 1000 is 6400 characters, more than the TTS limit of 5000"
            ]
        )
    }
}
