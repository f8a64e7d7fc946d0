import Foundation

/// Caches in the stretching app's layout, `{sha256(text)}.mp3`, made without the code under test.
public enum StretchingCache {
    /// Lowercase hex SHA-256 of the UTF-8 bytes of `text` (no newline), as coreutils' `sha256sum`
    /// prints it: an independent check of `ClipCache.key(text:)`.
    public static func sha256sum(_ text: String) async throws -> String {
        let run = try await ChildProcess.run("/usr/bin/env", ["sha256sum"], input: Data(text.utf8))
        return String(run.standardOutputText.prefix(64))
    }

    /// A copy of every fixture clip in `folder`, named as the stretching app names it.
    /// - Returns: the names written, sorted.
    @discardableResult
    public static func fill(_ folder: TemporaryFolder) async throws -> [String] {
        var names: [String] = []
        for clip in try FixtureClip.all() {
            let name = "\(try await sha256sum(clip.text)).mp3"
            try FileManager.default.copyItem(atPath: clip.path, toPath: folder.path(name))
            names.append(name)
        }
        return names.sorted()
    }
}
