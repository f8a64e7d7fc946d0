import Foundation

/// The virtual environment an engine's interpreter runs in, as `scripts/setup-piper` and
/// `scripts/setup-speech-check` make them: `ENV/bin/python3` beside `ENV/lib/python3.*/site-packages`.
enum PythonEnvironment {
    /// `ENV/lib` for the interpreter `ENV/bin/python3`.
    static func libraryFolder(python: String) -> String {
        ((python as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent + "/lib"
    }

    /// The `site-packages` folders beside the interpreter `python`, one per Python version
    /// found under `ENV/lib`, in name order; none when there is no such folder.
    static func sitePackages(python: String) -> [String] {
        let lib = libraryFolder(python: python)
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? [])
            .filter { $0.hasPrefix("python") }.sorted()
        return versions.map { "\(lib)/\($0)/site-packages" }
    }
}
