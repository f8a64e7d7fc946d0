import Foundation
import SessionTimeline
import TestSupport
import Testing

/// The preview page in a real browser: headless Chromium driven through WebDriver
/// (`Tests/Browser/preview-page.py`), on a page `show` writes for a rendered fixture.
@Suite("The preview page in headless Chromium", .serialized, .requiresBrowser)
struct PreviewBrowserTests {
    /// One check the driver made.
    struct Check: Decodable {
        var name: String
        var ok: Bool
        var detail: String
    }

    @Test(
        "Loads offline with no console error and no request; one element per item; a click seeks to the frame; arrows step; playing moves the playhead and the current item; the screenshot is not blank"
    )
    func page() throws {
        let folder = try TemporaryFolder()
        let audio = folder.path("edge-cases.wav")
        let render = try renderSession([
            "render", "Fixtures/scripts/edge-cases.json", "--cache", "Fixtures/cache", "--offline", "--seed", "3",
            "-o", audio, "--timeline", audio + ".timeline.json",
        ])
        #expect(render.status == 0, "\(render.standardError)")
        let page = folder.path("page.html")
        let shown = try renderSession(["show", audio, "-o", page])
        #expect(shown.status == 0, "\(shown.standardError)")
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: audio + ".timeline.json"))
        )

        let driver = Process()
        driver.executableURL = URL(fileURLWithPath: BrowserSupport.python)
        driver.arguments = [
            Repository.root.appendingPathComponent("Tests/Browser/preview-page.py").path, page,
            "--items", "\(timeline.items.count + timeline.overlays.count)", "--click-index", "3",
            "--screenshot", folder.path("shot.png"),
        ]
        let output = Pipe()
        let errors = Pipe()
        driver.standardOutput = output
        driver.standardError = errors
        try driver.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let complaints = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        driver.waitUntilExit()
        #expect(
            driver.terminationStatus == 0,
            "preview-page.py: \(String(decoding: printed, as: UTF8.self)) \(complaints)"
        )

        struct Report: Decodable { var checks: [Check] }
        let checks = try JSONDecoder().decode(Report.self, from: printed).checks
        let expected = [
            "loads", "no-console-errors", "no-network", "item-count", "click-seeks", "arrow-keys", "playback",
            "screenshot",
        ]
        #expect(checks.map(\.name) == expected)
        for check in checks { #expect(check.ok, "\(check.name): \(check.detail)") }
        #expect(FileManager.default.fileExists(atPath: folder.path("shot.png")))
    }
}
