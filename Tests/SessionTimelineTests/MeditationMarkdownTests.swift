import Foundation
import Testing
import SessionTimeline

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
        #expect(first.category == "body-scan" && first.durationSeconds == 600)
        #expect(first.segments == [
            .init(id: "opening", startSeconds: 0, text: "Welcome. Settle in.\n\nA second paragraph.", phase: "opening"),
            .init(id: "teachings", startSeconds: 120, text: "Notice your feet.", phase: "teachings"),
            .init(id: "closing", startSeconds: 510, text: "Goodbye.", phase: "closing"),
        ])
        #expect(first.interjections == [.init(windowStartSeconds: 350, windowEndSeconds: 370, textOptions: ["Come back.", "Soften."])])
        #expect(category.scripts[1].segments.map(\.phase) == ["opening"])
    }

    @Test("A malformed file names the line and what was expected", arguments: [
        ("", "the file is empty; expected '# Category name' first"),
        ("## 1. No category", "line 1: expected '# Category name' as the first line"),
        ("# C\n\n## 2. Wrong number\n*s*\n[0:00]\nx", "line 3: expected meditation number 1: '## 1. Title'"),
        ("# C\n\n## 1. T\nno subtitle", "line 4: expected the subtitle in single asterisks, '*Subtitle*', after the title"),
        ("# C\n## 1. T\n*s*\n\nprose without a marker", "line 5: expected a time marker such as '[2:00]' alone on a line"),
        ("# C\n## 1. T\n*s*\n[2:00]\nx\n[1:00]\ny", "line 6: time markers must increase; this one is not after the one before"),
        ("# C\n## 1. T\n*s*\n[0:00]\n\n[2:00]\nx", "line 4: the marker has nothing under it; expected prose or a list of options"),
        ("# C\n## 1. T\n*s*\n[6:00]\n- only options", "line 2: the meditation has no spoken section; expected '[0:00]' and prose"),
        ("# C\n## 1. T\n*s*\n[10:00]\nx", "line 4: the marker is at or past the end of the meditation (600 s)"),
        ("# C\n## 1. T\n*s*\n[0:00]\nx\n- a list in prose", "line 6: a list item inside prose; put interjection options under their own marker"),
        ("# C\n", "line 2: expected at least one meditation, '## 1. Title'"),
        // Found by the Markdown fuzzer (Fuzz/regressions/markdown-077896a4.bin): a file ending right
        // after a title was reported at a line past its end.
        ("# t\n## 1. n", "line 2: expected the subtitle in single asterisks, '*Subtitle*', after the title"),
        // Found by the Markdown fuzzer (Fuzz/regressions/markdown-45fae434.bin): minutes that overflow
        // when multiplied by 60 trapped instead of being reported.
        ("# t\n## 1. e\n*S*\n[919999999999999999:00]", "line 4: the marker is at or past the end of the meditation (600 s)"),
    ])
    func malformed(text: String, expected: String) {
        let error = Self.error(text)
        #expect(error?.description == expected)
        #expect(error?.code == .malformedMarkdown)
        #expect(error?.problems.count == 1)
    }

    @Test("A problem's line is a number; an empty file has none")
    func problemLine() {
        #expect(Self.error("# C\n\n## 1. T\nno subtitle") == ScriptError(.malformedMarkdown, ScriptProblem(
            line: 4, rule: "expected the subtitle in single asterisks, '*Subtitle*', after the title")))
        #expect(Self.error("# C\n\n## 1. T\nno subtitle")?.problems.first?.location == "line 4")
        #expect(Self.error(" \n\n")?.problems.first?.line == nil)
    }

    @Test("A text over the TTS limit is caught at import, with the meditation's line")
    func ruleBroken() {
        let long = String(repeating: "word ", count: 1_100)
        #expect(throws: ScriptError(.brokenRule, ScriptProblem(line: 2, rule: "meditation 1 breaks a script rule: segments[0].text: 5499 characters are more than the TTS limit of 5000"))) {
            try MeditationMarkdown.parse("# C\n## 1. T\n*s*\n[0:00]\n\(long)")
        }
    }
}
