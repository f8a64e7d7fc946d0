import Foundation
import SessionTimeline
import Testing

@Suite("Reading and validating scripts")
struct ScriptValidationTests {
    /// A valid script, as the backend serves it, with `overrides` spliced in as raw JSON.
    static func json(
        id: String = #""med-01""#,
        duration: String = "600",
        segments: String? = nil,
        interjections: String? = nil,
        orderIndex: String = "3",
        extra: String = ""
    ) -> Data {
        let segments =
            segments ?? #"""
                [{"id": "opening", "startSeconds": 0, "text": "Welcome.", "phase": "opening"},
                 {"id": "teachings", "startSeconds": 120.5, "text": "Notice.", "phase": "teachings"}]
                """#
        let interjections =
            interjections ?? #"""
                [{"windowStartSeconds": 350, "windowEndSeconds": 370, "textOptions": ["Breathe.", "Soften."]}]
                """#
        return Data(
            """
            {"id": \(id), "category": "reactivity", "title": "The Pause", "subtitle": "A practice",
             "orderIndex": \(orderIndex), "durationSeconds": \(duration), \(extra)
             "segments": \(segments), "interjections": \(interjections)}
            """.utf8
        )
    }

    static func problems(_ data: Data) -> [String] {
        error(data)?.problems.map(\.description) ?? []
    }

    /// The error `Script(json:)` throws for `data`, or `nil` if it accepts it.
    static func error(_ data: Data) -> ScriptError? {
        do {
            _ = try Script(json: data)
            return nil
        } catch {
            return error
        }
    }

    @Test("A valid script decodes with integers and decimals alike")
    func validScript() throws {
        let script = try Script(json: Self.json(extra: #""createdAt": "2026-01-01", "#))
        #expect(script.id == "med-01")
        #expect(script.category == "reactivity")
        #expect(script.orderIndex == 3)
        #expect(script.durationSeconds == 600)
        #expect(script.guided.segments.map(\.startSeconds) == [0, 120.5])
        #expect(
            script.guided.interjections == [
                .init(windowStartSeconds: 350, windowEndSeconds: 370, textOptions: ["Breathe.", "Soften."])
            ]
        )
        #expect(script.allTexts == ["Welcome.", "Notice.", "Breathe.", "Soften."])
    }

    @Test("Subtitle, orderIndex and interjections may be left out")
    func optionalFields() throws {
        let data = Data(
            #"{"id": "a", "category": "c", "title": "T", "durationSeconds": 10, "segments": [{"id": "s", "startSeconds": 0, "text": "Hi", "phase": "p"}]}"#
                .utf8
        )
        let script = try Script(json: data)
        #expect(script.subtitle == "" && script.orderIndex == 0 && script.guided.interjections.isEmpty)
    }

    struct RuleCase: CustomTestStringConvertible, Sendable {
        let rule: String
        let data: Data
        let expected: [String]
        var testDescription: String { rule }
    }

    static let long = String(repeating: "x", count: 5_001)
    static let ruleCases: [RuleCase] = [
        RuleCase(
            rule: "start past the duration",
            data: json(
                segments: #"""
                    [{"id": "a", "startSeconds": 0, "text": "x", "phase": "p"}, {"id": "b", "startSeconds": 1, "text": "x", "phase": "p"},
                     {"id": "c", "startSeconds": 700, "text": "x", "phase": "p"}]
                    """#
            ),
            expected: ["segments[2].startSeconds: 700 is past durationSeconds 600"]
        ),
        RuleCase(
            rule: "negative start",
            data: json(segments: #"[{"id": "a", "startSeconds": -5, "text": "x", "phase": "p"}]"#),
            expected: ["segments[0].startSeconds: -5 is negative"]
        ),
        RuleCase(
            rule: "id with a slash",
            data: json(id: #""a/b""#),
            expected: [#"id: "a/b" may contain only letters, digits, '.', '_' and '-', since ids become file names"#]
        ),
        RuleCase(
            rule: "id '..'",
            data: json(id: #""..""#),
            expected: [#"id: ".." is not allowed, since ids become file names"#]
        ),
        RuleCase(
            rule: "id with a NUL",
            data: json(id: #""a\u0000b""#),
            expected: [
                #"id: "a\u{0}b" may contain only letters, digits, '.', '_' and '-', since ids become file names"#
            ]
        ),
        RuleCase(
            rule: "id of 10,000 characters",
            data: json(id: "\"" + String(repeating: "a", count: 10_000) + "\""),
            expected: ["id: must be 1 to 128 characters long, found 10000"]
        ),
        RuleCase(rule: "empty id", data: json(id: #""""#), expected: ["id: must be 1 to 128 characters long, found 0"]),
        RuleCase(
            rule: "zero duration",
            data: json(duration: "0"),
            expected: [
                "durationSeconds: 0 must be greater than 0"
            ]
        ),
        RuleCase(
            rule: "duration over 24 hours",
            data: json(duration: "86401"),
            expected: [
                "durationSeconds: 86401 is longer than the limit of 86400 (24 hours)"
            ]
        ),
        RuleCase(
            rule: "1e300 seconds",
            data: json(duration: "1e300"),
            expected: [
                "durationSeconds: 1e+300 is longer than the limit of 86400 (24 hours)"
            ]
        ),
        RuleCase(
            rule: "window start after end",
            data: json(interjections: #"[{"windowStartSeconds": 380, "windowEndSeconds": 370, "textOptions": ["x"]}]"#),
            expected: ["interjections[0]: windowStartSeconds 380 is after windowEndSeconds 370"]
        ),
        RuleCase(
            rule: "window outside the duration",
            data: json(
                interjections: #"[{"windowStartSeconds": 590, "windowEndSeconds": 610.5, "textOptions": ["x"]}]"#
            ),
            expected: ["interjections[0].windowEndSeconds: 610.5 is past durationSeconds 600"]
        ),
        RuleCase(
            rule: "empty textOptions",
            data: json(interjections: #"[{"windowStartSeconds": 1, "windowEndSeconds": 2, "textOptions": []}]"#),
            expected: ["interjections[0].textOptions: needs at least one text"]
        ),
        RuleCase(
            rule: "empty text",
            data: json(segments: #"[{"id": "a", "startSeconds": 0, "text": "", "phase": "p"}]"#),
            expected: ["segments[0].text: is empty; a text needs 1 to 5000 characters"]
        ),
        RuleCase(
            rule: "white-space text",
            data: json(segments: #"[{"id": "a", "startSeconds": 0, "text": " \n ", "phase": "p"}]"#),
            expected: ["segments[0].text: holds only white space; there is nothing to speak"]
        ),
        RuleCase(
            rule: "5,001-character text",
            data: json(
                interjections: #"[{"windowStartSeconds": 1, "windowEndSeconds": 2, "textOptions": ["ok", "\#(long)"]}]"#
            ),
            expected: ["interjections[0].textOptions[1]: 5001 characters are more than the TTS limit of 5000"]
        ),
        RuleCase(rule: "no segments", data: json(segments: "[]"), expected: ["segments: needs at least one segment"]),
        RuleCase(
            rule: "duplicate segment ids",
            data: json(
                segments: #"""
                    [{"id": "a", "startSeconds": 0, "text": "x", "phase": "p"}, {"id": "a", "startSeconds": 1, "text": "y", "phase": "p"}]
                    """#
            ),
            expected: [#"segments[1].id: "a" is already the id of segments[0]"#]
        ),
        RuleCase(
            rule: "wrong types",
            data: json(segments: #"[{"id": 7, "startSeconds": "0", "text": ["x"], "phase": null}]"#),
            expected: [
                "segments[0].id: expected a string, found a number",
                "segments[0].startSeconds: expected a number, found a string",
                "segments[0].text: expected a string, found an array",
                "segments[0].phase: is required but missing",
            ]
        ),
        RuleCase(
            rule: "a fractional orderIndex",
            data: json(orderIndex: "1.5"),
            expected: [
                "orderIndex: 1.5 is not a whole number between -1000000000 and 1000000000"
            ]
        ),
        RuleCase(
            rule: "not an object",
            data: Data("[1, 2]".utf8),
            expected: ["(top level): expected a JSON object, found an array"]
        ),
        RuleCase(
            rule: "missing required fields",
            data: Data(#"{"id": "x"}"#.utf8),
            expected: [
                "category: is required but missing",
                "title: is required but missing",
                "durationSeconds: is required but missing",
                "segments: is required but missing",
            ]
        ),
    ]

    @Test("Each rule has its own message with the JSON path", arguments: ruleCases)
    func ruleMessages(_ testCase: RuleCase) {
        let error = Self.error(testCase.data)
        #expect(error?.problems.map(\.description) == testCase.expected)
        #expect(error?.code == .brokenRule, "a broken rule in well-formed JSON")
        #expect(error?.problems.allSatisfy { $0.line == nil } == true, "a JSON path has no line")
    }

    @Test("Every violation in a script is reported, in document order")
    func everyViolation() {
        let data = Self.json(
            id: #""../x""#,
            duration: "600",
            segments: #"""
                [{"id": "a", "startSeconds": 900, "text": "", "phase": "p"}]
                """#,
            interjections: #"[{"windowStartSeconds": 10, "windowEndSeconds": 5, "textOptions": []}]"#
        )
        #expect(
            Self.problems(data) == [
                #"id: "../x" may contain only letters, digits, '.', '_' and '-', since ids become file names"#,
                "segments[0].startSeconds: 900 is past durationSeconds 600",
                "segments[0].text: is empty; a text needs 1 to 5000 characters",
                "interjections[0]: windowStartSeconds 10 is after windowEndSeconds 5",
                "interjections[0].textOptions: needs at least one text",
            ]
        )
    }

    @Test("100,000 segments are refused with one line")
    func tooManySegments() {
        let segment = #"{"id": "s", "startSeconds": 0, "text": "x", "phase": "p"}"#
        let data = Self.json(segments: "[" + Array(repeating: segment, count: 100_000).joined(separator: ",") + "]")
        #expect(Self.problems(data) == ["segments: 100000 segments are more than the limit of 10000"])
    }

    @Test("A label is counted as texts are, in UTF-16 code units: one letter with 1,000 combining marks is 1,001")
    func labelsCountedAsTexts() {
        let marked = "a" + String(repeating: "\u{0301}", count: 1_000)
        let segment = #"{"id": "s", "startSeconds": 0, "text": "x", "phase": "\#(marked)"}"#
        #expect(
            Self.problems(Self.json(segments: "[\(segment)]")) == [
                "segments[0].phase: 1001 characters are more than the limit of 500"
            ]
        )
        let fits =
            #"{"id": "s", "startSeconds": 0, "text": "x", "phase": "\#(String(repeating: "\u{00E9}", count: 500))"}"#
        #expect(Self.problems(Self.json(segments: "[\(fits)]")).isEmpty, "500 precomposed letters fit")
    }

    @Test("A long list of problems is cut at 100 with a count of the rest")
    func manyProblems() {
        let segment = #"{"id": "s", "startSeconds": -1, "text": "x", "phase": "p"}"#
        let data = Self.json(segments: "[" + Array(repeating: segment, count: 300).joined(separator: ",") + "]")
        let problems = Self.problems(data)
        #expect(problems.count == 101)
        #expect(problems.last == "(script): 499 more problems not listed")
    }

    @Test(
        "Malformed JSON is reported with its line and column",
        arguments: [
            (
                "{\n  \"id\": \"a\",\n  \"title\": [1, 2,, 3]\n}",
                "line 3, column 18: expected a value (object, array, string, number, true, false or null)"
            ),
            ("{\"id\": \"a\"", "line 1, column 11: expected ',' or '}' after a member of an object"),
            ("", "line 1, column 1: the file is empty; expected a JSON object"),
            (
                "{\"durationSeconds\": NaN}",
                "line 1, column 21: expected a value (object, array, string, number, true, false or null)"
            ),
            ("{\"a\": 01}", "line 1, column 8: expected ',' or '}' after a member of an object"),
            ("{\"a\": \"tab\there\"}", "line 1, column 11: a control character must be escaped inside a string"),
            ("{\"a\": \"x\"} trailing", "line 1, column 12: unexpected text after the end of the JSON value"),
            ("{\"é\": \"open", "line 1, column 7: a string is not closed"),
            (String(repeating: "[", count: 100), "line 1, column 65: arrays and objects are nested more than 64 deep"),
        ]
    )
    func malformedJSON(text: String, expected: String) {
        let error = Self.error(Data(text.utf8))
        #expect(error?.problems.map(\.description) == [expected])
        #expect(error?.code == .notJSON, "a syntax error")
    }

    @Test("A syntax error carries its line as a number")
    func syntaxErrorLine() {
        #expect(
            Self.error(Data("{\n  \"id\": \"a\",\n  \"title\": [1, 2,, 3]\n}".utf8))
                == ScriptError(
                    .notJSON,
                    ScriptProblem(
                        location: "line 3, column 18",
                        rule: "expected a value (object, array, string, number, true, false or null)",
                        line: 3
                    )
                )
        )
    }

    @Test("Strings decode escapes and surrogate pairs; numbers are exact")
    func exactValues() throws {
        let script = try Script(
            json: Data(
                #"""
                {"id": "a", "category": "c", "title": "Caf\u00e9 \ud83d\ude42 \"q\" \\ \/", "durationSeconds": 16.856734693877552,
                 "segments": [{"id": "s", "startSeconds": 1E1, "text": "x", "phase": "p"}]}
                """#.utf8
            )
        )
        #expect(script.title == "Café 🙂 \"q\" \\ /")
        #expect(script.durationSeconds == 16.856734693877552, "Foundation's JSONSerialization reads …556 here")
        #expect(script.guided.segments[0].startSeconds == 10)
    }

    @Test("Invalid UTF-8 and lone surrogates are refused")
    func invalidText() {
        #expect(
            Self.problems(Data([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D])) == [
                "line 1, column 2: a string is not valid UTF-8"
            ]
        )
        #expect(
            Self.problems(Data(#"{"a": "\ud800"}"#.utf8)) == [#"line 1, column 14: a \u escape names a lone surrogate"#]
        )
    }

    @Test("Numbers too large for a double are refused, not taken as infinity")
    func hugeNumber() {
        #expect(
            Self.problems(Self.json(duration: "1e400")) == [
                "line 2, column 38: the number 1e400 is too large to represent"
            ]
        )
    }
}
