import Foundation
import SessionTimeline
import TestSupport
import Testing

/// Issue 41, item 10: every line a command prints on standard output that carries outside text
/// (a timeline's names, a file's name, a library's names and paths, a model's file name) goes
/// through one escaping function (`Console.printLines`, `printRows`, `printableJSON`), so no
/// terminal escape, bidirectional override or zero-width character reaches the terminal raw.
@Suite("Outside text in what the commands print")
struct PrintedTextTests {
    /// A title-setting escape, a bell, a right-to-left override and a zero-width space.
    static let hostile = "x\u{1B}]0;pwned\u{7}\u{202E}y\u{200B}z"

    /// Whether `text` holds a character a terminal would act on or hide (tabs and line feeds aside).
    static func isRaw(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            (scalar.isControlCharacter && scalar != "\n" && scalar != "\t") || scalar.isHiddenWhenPrinted
        }
    }

    @Test("show, verify (text and JSON), sounds and voices print a hostile name escaped, never raw")
    func eachCommand() async throws {
        let folder = try TemporaryFolder()
        // A timeline whose phases and a sound are named with the hostile text.
        let timeline = try String(
            contentsOfFile: Repository.root.path + "/Fixtures/positions/five-seconds.timeline.json",
            encoding: .utf8
        )
        let escapedJSON = "x\\u001b]0;pwned\\u0007\\u202ey\\u200bz"
        try timeline.replacingOccurrences(of: "\"opening\"", with: "\"\(escapedJSON)\"")
            .write(toFile: folder.path("hostile.timeline.json"), atomically: true, encoding: .utf8)
        // A WAV named with the hostile text, which verify finds cut short.
        let wav = folder.path("clip\(Self.hostile).wav")
        try FileManager.default.copyItem(atPath: Repository.root.path + "/Fixtures/bad/short-data.wav", toPath: wav)
        // A library whose entry's name and file are hostile, and a models folder with a hostile model.
        try FileManager.default.createDirectory(atPath: folder.path("lib"), withIntermediateDirectories: true)
        try #"[{"id": "rain", "name": "Rain\#(escapedJSON)", "file": "r\#(escapedJSON)"}]"#
            .write(toFile: folder.path("lib/sounds.json"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: folder.path("models"), withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: folder.path("models/evil\(Self.hostile).onnx")))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: folder.path("models/evil\(Self.hostile).onnx.json")))

        let runs: [(String, [String], [String: String]?, String)] = [
            ("show", ["show", folder.path("hostile.timeline.json")], nil, "\\u{1b}]0;pwned\\u{7}\\u{202e}y\\u{200b}z"),
            (
                "verify", ["verify", wav, "--no-timeline"], nil,
                "clipx\\u{1b}]0;pwned\\u{7}\\u{202e}y\\u{200b}z.wav: is not a well-formed WAV"
            ),
            (
                "verify --json", ["verify", "--json", "--no-timeline", wav], nil,
                "clipx\\u001b]0;pwned\\u0007\\u202ey\\u200bz.wav"
            ),
            (
                "sounds", ["sounds", "--sounds", folder.path("lib")], nil,
                "rain\tRainx\\u{1b}]0;pwned\\u{7}\\u{202e}y\\u{200b}z\t-\t-\tmissing"
            ),
            (
                "voices", ["voices"], ["RENDER_SESSION_PIPER_MODELS": folder.path("models")],
                "piper:evilx\\u{1b}]0;pwned\\u{7}\\u{202e}y\\u{200b}z\tpiper"
            ),
        ]
        for (name, arguments, environment, expected) in runs {
            var merged = ProcessInfo.processInfo.environment
            for (key, value) in environment ?? [:] { merged[key] = value }
            let result = try await renderSession(arguments, environment: merged)
            #expect(!Self.isRaw(result.standardOutput), "\(name): standard output holds a raw escape")
            #expect(!Self.isRaw(result.standardError), "\(name): standard error holds a raw escape")
            #expect(result.standardOutput.contains(expected), "\(name): \(result.standardOutput.prefix(600))")
        }
    }
}
