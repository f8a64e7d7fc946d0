// libFuzzer target for meditation Markdown: `MeditationMarkdown.parse` (MeditationMarkdown.swift),
// fed the input as UTF-8. (ScriptLibrary reads a file with `String(contentsOfFile:encoding: .utf8)`,
// which refuses invalid UTF-8; here `String(decoding:)` turns it into U+FFFD, a superset.)
//
// Compiled into the SessionTimeline module itself (see scripts/fuzz), so internal API is visible.
//
// Every thrown ScriptError is an expected outcome. Findings are crashes, sanitizer reports, timeouts,
// out-of-memory, and these broken promises
// (checked with `expect`, which stops with its message even in -O builds):
// - an error is malformedMarkdown or brokenRule with one problem, whose line is within the file
//   (1…number of lines), or none for an empty file;
// - an accepted category has a non-empty id made by `identifier`, and at least one script;
// - in an accepted file, every line that starts like a time marker is a valid one (never prose);
// - script N has id `<category>-NN`, orderIndex N, duration 600 s, and passes `Script(json:)`
//   unchanged when written as `import` writes it.
//
// Earlier findings, fixed, with regression tests in MeditationMarkdownTests: markdown-45fae434.bin
// (minutes that overflowed `minutes * 60` trapped) and markdown-077896a4.bin (a problem reported
// at "line 3" of a 2-line file).
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let lines = MeditationMarkdown.lines(of: text)
    let lineCount = lines.count
    let category: MeditationMarkdown.Category
    do {
        category = try MeditationMarkdown.parse(text)
    } catch {
        expect(error.code == .malformedMarkdown || error.code == .brokenRule, "code \(error.code): \(error)")
        expect(error.problems.count == 1, "\(error.problems.count) problems: \(error)")
        let line = error.problems[0].line
        expect(
            line.map { (1...lineCount).contains($0) } ?? true,
            "problem at line \(line ?? 0) of \(lineCount): \(error)"
        )
        expect(!error.description.isEmpty)
        return 0
    }
    for line in lines where MeditationMarkdown.Parser.looksLikeMarker(line) {
        if case .defect(let reason) = MeditationMarkdown.Parser.marker(line) {
            expect(false, "the malformed marker \(String(reflecting: line)) was accepted (\(reason))")
        }
    }
    expect(!category.id.isEmpty && category.id == MeditationMarkdown.identifier(category.name))
    expect(!category.scripts.isEmpty)
    for (offset, script) in category.scripts.enumerated() {
        let number = offset + 1
        expect(script.orderIndex == number && script.category == category.id)
        expect(script.id == "\(category.id)-\(number < 10 ? "0" : "")\(number)")
        // A Duration: line's length, or the last marker's plus 10 s: within a day either way.
        expect(script.durationSeconds > 0 && script.durationSeconds <= ScriptRules.maximumDurationSeconds + 10)
        checkRoundTrip(script)
    }
    return 0
}
