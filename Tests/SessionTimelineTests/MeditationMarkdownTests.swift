import Foundation
import SessionTimeline
import Testing

@Suite("Meditations in Markdown")
struct MeditationMarkdownTests {
    static let sample = """
        # Body Scan

        ## 1. Feet First
        *Starting from the ground*

        [0:00]
        Welcome.
        Settle in.

        A second paragraph.

        [2:00]
        Notice your feet.

        [6:00]
        - Come back.
        - Soften.

        [8:30]
        Goodbye.

        ## 2. Second
        *Another*

        [0:00]
        Only an opening.
        """

    /// The error `MeditationMarkdown.parse` throws for `text`, or `nil` if it accepts it.
    static func error(_ text: String) -> ScriptError? {
        do {
            _ = try MeditationMarkdown.parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test("A meditation becomes a script with the seed's shape")
    func parse() throws {
        let category = try MeditationMarkdown.parse(Self.sample)
        #expect(category.id == "body-scan" && category.name == "Body Scan")
        #expect(category.scripts.map(\.id) == ["body-scan-01", "body-scan-02"])
        let first = category.scripts[0]
        #expect(first.title == "Feet First" && first.subtitle == "Starting from the ground" && first.orderIndex == 1)
        // No Duration: line: it ends 10 s after its last marker, or with the speech there.
        #expect(first.category == "body-scan" && first.durationSeconds == 520)
        #expect(first.sound == nil && first.voice == nil && category.warnings.isEmpty)
        #expect(
            first.guided.segments == [
                .init(
                    id: "opening",
                    startSeconds: 0,
                    text: "Welcome. Settle in.\n\nA second paragraph.",
                    phase: "opening"
                ),
                .init(id: "teachings", startSeconds: 120, text: "Notice your feet.", phase: "teachings"),
                .init(id: "closing", startSeconds: 510, text: "Goodbye.", phase: "closing"),
            ]
        )
        #expect(
            first.guided.interjections == [
                .init(windowStartSeconds: 350, windowEndSeconds: 370, textOptions: ["Come back.", "Soften."])
            ]
        )
        #expect(category.scripts[1].guided.segments.map(\.phase) == ["opening"])
        #expect(category.scripts[1].durationSeconds == 10)
    }

    @Test("A header sets the length, voice and sound: the file's for every meditation, a meditation's for itself")
    func header() throws {
        let text = """
            # Timer Talks
            Duration: 5:00
            Voice: espeak:en
            Sound:
            ```json
            {"ambience": "rain", "ambienceGain": 0.2}
            ```

            ## 1. Short
            *Five minutes*

            [0:00]
            Welcome.

            [4:00]
            - Breathe.

            ## 2. Long
            *An hour*
            Duration: 1:00:00
            Voice: espeak:de

            [0:00]
            Willkommen.

            [59:00]
            Auf Wiedersehen.
            """
        let category = try MeditationMarkdown.parse(text)
        let (short, long) = (category.scripts[0], category.scripts[1])
        #expect(short.durationSeconds == 300 && long.durationSeconds == 3600)
        #expect(short.voice == "espeak:en" && long.voice == "espeak:de")
        #expect(short.sound?.ambience == "rain" && short.sound?.ambienceGain == 0.2 && long.sound == short.sound)
        // The window reaches to the end, no further: 4:00 ± 10 s.
        #expect(short.guided.interjections.map(\.windowEndSeconds) == [250])
        #expect(category.warnings.isEmpty)
        // What import writes reads back as the same script.
        #expect(try Script(json: MeditationMarkdown.json(short)) == short)
    }

    @Test("A duration that leaves more than a minute of silence after the last speech is a warning at its line")
    func appendedSilence() throws {
        let text = """
            # C

            Duration: 10:00

            ## 1. Five Minutes
            *Ends early*

            [0:00]
            Welcome.

            [4:30]
            Goodbye, and thank you for sitting today.

            ## 2. Nine Minutes
            *Ends on time*

            [0:00]
            Welcome.

            [9:00]
            Goodbye.
            """
        let category = try MeditationMarkdown.parse(text)
        #expect(category.scripts.map(\.durationSeconds) == [600, 600])
        // Seven words at 150 a minute: 2.8 s, so speech ends at about 4:33, leaving 5:27.
        #expect(
            category.warnings.map(\.description) == [
                "line 3: meditation 1 (\"Five Minutes\") lasts 10:00, but its last speech ([4:30]) ends at about 4:33 at 150 words per minute: 5:27 of silence at the end; give it its own Duration: line, or none to end with its speech"
            ]
        )
    }

    @Test(
        "A malformed file names the line and what was expected",
        arguments: [
            ("", "the file is empty; expected '# Category name' first"),
            ("## 1. No category", "line 1: expected '# Category name' as the first line"),
            ("# C\n\n## 2. Wrong number\n*s*\n[0:00]\nx", "line 3: expected meditation number 1: '## 1. Title'"),
            (
                "# C\n\n## 1. T\nno subtitle",
                "line 4: expected the subtitle in single asterisks, '*Subtitle*', after the title"
            ),
            (
                "# C\n## 1. T\n*s*\n\nprose without a marker",
                "line 5: expected a time marker such as '[2:00]' alone on a line, or a header line (Duration:, Voice:, Sound:)"
            ),
            (
                "# C\n## 1. T\n*s*\n[2:00]\nx\n[1:00]\ny",
                "line 6: time markers must increase; this one is not after the one before"
            ),
            (
                "# C\n## 1. T\n*s*\n[0:00]\n\n[2:00]\nx",
                "line 4: the marker has nothing under it; expected prose or a list of options"
            ),
            (
                "# C\n## 1. T\n*s*\n[6:00]\n- only options",
                "line 2: the meditation has no spoken section; expected '[0:00]' and prose"
            ),
            (
                "# C\nDuration: 10:00\n## 1. T\n*s*\n[10:00]\nx",
                "line 5: the marker is at or past the end of the meditation (Duration: 10:00, line 2)"
            ),
            (
                "# C\n## 1. T\n*s*\nDuration: 1:00:00\n[1:00:00]\nx",
                "line 5: \"[1:00:00]\" is not a time marker: it has more than one ':'; a marker is m:ss alone on its line, such as '[2:00]'"
            ),
            (
                "# C\n## 1. T\n*s*\nDuration: 5:00\nDuration: 6:00\n[0:00]\nx",
                "line 5: Duration: is given twice in this header"
            ),
            (
                "# C\n## 1. T\n*s*\nDuration: 5 minutes\n[0:00]\nx",
                "line 4: Duration: \"5 minutes\" is not a length; write m:ss or h:mm:ss, such as 'Duration: 10:00'"
            ),
            (
                "# C\n## 1. T\n*s*\nDuration: 25:00:00\n[0:00]\nx",
                "line 4: Duration: 25:00:00 is longer than the longest session, 24:00:00"
            ),
            (
                "# C\nLength: 10:00\n## 1. T\n*s*\n[0:00]\nx",
                "line 2: expected the first meditation, '## 1. Title', or a header line (Duration:, Voice:, Sound:)"
            ),
            (
                "# C\n## 1. T\n*s*\nSound:\n```json\n{\"ambience\": \"../rain\"}\n```\n[0:00]\nx",
                "line 5: Sound: sound.ambience: \"../rain\" is a path; a script names a sound by its name in the sound library, and only the command line gives a sound file's path"
            ),
            (
                "# C\n## 1. T\n*s*\nSound:\n```json\n{\"ambience\": \"rain\"}\n[0:00]\nx",
                "line 5: Sound: the JSON block has no closing '```'"
            ),
            (
                "# C\n## 1. T\n*s*\nSound: rain\n[0:00]\nx",
                "line 4: Sound: expected nothing after it, and its JSON block on the next lines"
            ),
            (
                "# C\n## 1. T\n*s*\n[0:00]\nx\n- a list in prose",
                "line 6: a list item inside prose; put interjection options under their own marker"
            ),
            ("# C\n", "line 2: expected at least one meditation, '## 1. Title'"),
            // Found by the Markdown fuzzer (Fuzz/regressions/markdown-077896a4.bin): a file ending right
            // after a title was reported at a line past its end.
            ("# t\n## 1. n", "line 2: expected the subtitle in single asterisks, '*Subtitle*', after the title"),
            // Found by the Markdown fuzzer (Fuzz/regressions/markdown-45fae434.bin): minutes that overflow
            // when multiplied by 60 trapped instead of being reported.
            (
                "# t\n## 1. e\n*S*\n[919999999999999999:00]",
                "line 4: the marker is past the longest session, 24:00:00"
            ),
        ]
    )
    func malformed(text: String, expected: String) {
        let error = Self.error(text)
        #expect(error?.description == expected)
        #expect(error?.code == .malformedMarkdown)
        #expect(error?.problems.count == 1)
    }

    @Test("A problem's line is a number; an empty file has none")
    func problemLine() {
        #expect(
            Self.error("# C\n\n## 1. T\nno subtitle")
                == ScriptError(
                    .malformedMarkdown,
                    ScriptProblem(
                        line: 4,
                        rule: "expected the subtitle in single asterisks, '*Subtitle*', after the title"
                    )
                )
        )
        #expect(Self.error("# C\n\n## 1. T\nno subtitle")?.problems.first?.location == "line 4")
        #expect(Self.error(" \n\n")?.problems.first?.line == nil)
    }

    @Test("A text over the TTS limit is caught at import, with the meditation's line")
    func ruleBroken() {
        let long = String(repeating: "word ", count: 1_100)
        #expect(
            throws: ScriptError(
                .brokenRule,
                ScriptProblem(
                    line: 2,
                    rule:
                        "meditation 1 breaks a script rule: segments[0].text: 5499 characters are more than the TTS limit of 5000"
                )
            )
        ) {
            try MeditationMarkdown.parse("# C\n## 1. T\n*s*\n[0:00]\n\(long)")
        }
    }

    /// A meditation with `line` as line 9, in the middle of its opening's prose.
    static func withLine9(_ line: String) -> String {
        "# C\n\n## 1. T\n*s*\n\n[0:00]\nWelcome.\n\n\(line)\nBreathe.\n"
    }

    static let notAMarker = "is not a time marker"
    static let whatAMarkerIs = "a marker is m:ss alone on its line, such as '[2:00]'"

    @Test(
        "A line that starts like a time marker but is not one is an error on its line, never spoken",
        arguments: [
            ("[99:99] text", #""[99:99] text" is not a time marker: its seconds, 99, are more than 59"#),
            (
                "[2:00] text on the same line",
                #""[2:00] text on the same line" is not a time marker: text follows the ']' on the same line"#
            ),
            ("[2:00 ]", #""[2:00 ]" is not a time marker: it has a space inside the brackets"#),
            ("[2;00]", #""[2;00]" is not a time marker: its minutes and seconds are not separated by ':'"#),
            ("[2:0]", #""[2:0]" is not a time marker: its seconds, '0', are not two digits"#),
            ("[ 2:00]", #""[ 2:00]" is not a time marker: it has a space inside the brackets"#),
            ("[2:60]", #""[2:60]" is not a time marker: its seconds, 60, are more than 59"#),
            ("[2:000]", #""[2:000]" is not a time marker: its seconds, '000', are not two digits"#),
            ("[2:00", #""[2:00" is not a time marker: it has no closing ']'"#),
            ("[-1:00]", #""[-1:00]" is not a time marker: its minutes, '-1', are not digits"#),
            ("[1:00:00]", #""[1:00:00]" is not a time marker: it has more than one ':'"#),
            ("\t [2:00]x", #""[2:00]x" is not a time marker: text follows the ']' on the same line"#),
            (
                "[2:00] " + String(repeating: "long text ", count: 10),
                #""[2:00] long text long text long text lo…" is not a time marker: text follows the ']' on the same line"#
            ),
        ]
    )
    func malformedMarker(line: String, expected: String) {
        #expect(
            Self.error(Self.withLine9(line))
                == ScriptError(
                    .malformedMarkdown,
                    ScriptProblem(
                        line: 9,
                        rule: "\(expected); \(Self.whatAMarkerIs)"
                    )
                )
        )
    }

    @Test(
        "A malformed marker is named wherever a marker may stand",
        arguments: [
            // Where the first marker belongs, right after the subtitle.
            ("# C\n## 1. T\n*s*\n[0:0]\nWelcome.", 4, "[0:0]"),
            // After a list of options.
            ("# C\n## 1. T\n*s*\n[0:00]\nWelcome.\n[6:00]\n- Soften.\n[8:30] Goodbye.", 8, "[8:30] Goodbye."),
            // Indented, in the second meditation.
            ("# C\n## 1. T\n*s*\n[0:00]\nA.\n## 2. U\n*s*\n[0:00]\nB.\n  [1:5]\nC.", 10, "[1:5]"),
        ]
    )
    func malformedMarkerAnywhere(text: String, line: Int, marker: String) {
        let error = Self.error(text)
        #expect(error?.code == .malformedMarkdown)
        #expect(error?.problems.first?.line == line)
        #expect(
            error?.problems.first?.rule.hasPrefix("\"\(marker)\" \(Self.notAMarker): ") == true,
            "\(String(describing: error))"
        )
    }

    @Test("Prose may hold brackets, even at the start of a line, when they do not start like a marker")
    func bracketsInProse() throws {
        let category = try MeditationMarkdown.parse(
            """
            # C
            ## 1. T
            *s*
              [0:00]\t
            Breathe in [slowly] and out, count [1:00] if you like.
            [pause]
            [Rest for a moment.]
            [

            ] and [2:00] are fine here too.
            [1:00]
            Go on.
            """
        )
        #expect(
            category.scripts[0].guided.segments == [
                .init(
                    id: "opening",
                    startSeconds: 0,
                    text: """
                        Breathe in [slowly] and out, count [1:00] if you like. [pause] [Rest for a moment.] [

                        ] and [2:00] are fine here too.
                        """,
                    phase: "opening"
                ),
                .init(id: "closing", startSeconds: 60, text: "Go on.", phase: "closing"),
            ]
        )
    }
}
