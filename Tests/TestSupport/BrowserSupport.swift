import Foundation
public import Testing

/// The headless browser the preview page is tested in: Debian's `chromium`, `chromium-driver`
/// and `python3-selenium`, which `scripts/test` installs.
public enum BrowserSupport {
    /// Why the browser test cannot run here, or `nil` when it can.
    public static let missing: String? = {
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is not installed (apt-get install chromium chromium-driver)"
        }
        // Debian's python3-selenium is the system Python's, whatever python3 comes first on PATH.
        // Waited for in place (not with ChildProcess): a trait's reason is known when the tests are
        // listed, before any runs, and this probe runs once, for a fraction of a second.
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: python)
        probe.arguments = ["-c", "import selenium"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return "\(python) cannot be run" }
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? nil : "\(python) has no selenium (apt-get install python3-selenium)"
    }()

    /// The Python that Debian's `python3-selenium` belongs to.
    public static let python = "/usr/bin/python3"

    /// Why ``python`` cannot run `statement` (an import of Debian's Python packages), or `nil` when
    /// it can, `install` saying what to install. Waited for in place, as ``missing`` is: for a
    /// trait's reason, known before any test runs.
    public static func pythonMissing(_ statement: String, install: String) -> String? {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: python)
        probe.arguments = ["-c", statement]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return "\(python) cannot be run" }
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? nil : install
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs a test only where headless Chromium can be driven; elsewhere `swift test` reports it
    /// as skipped, with the reason.
    public static var requiresBrowser: Self {
        .enabled(if: BrowserSupport.missing == nil, Comment(rawValue: BrowserSupport.missing ?? ""))
    }
}
