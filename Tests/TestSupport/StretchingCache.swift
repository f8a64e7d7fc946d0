import Foundation

/// Caches in the stretching app's layout, `{sha256(text)}.mp3`, made without the code under test.
public enum StretchingCache {
    /// Lowercase hex SHA-256 of the UTF-8 bytes of `text` (no newline), as coreutils' `sha256sum`
    /// prints it: an independent check of `ClipCache.key(text:)`.
    public static func sha256sum(_ text: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
        try input.fileHandleForWriting.close()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(printed.prefix(64))
    }

    /// A copy of every fixture clip in `folder`, named as the stretching app names it.
    /// - Returns: the names written, sorted.
    @discardableResult
    public static func fill(_ folder: TemporaryFolder) throws -> [String] {
        var names: [String] = []
        for clip in try FixtureClip.all() {
            let name = "\(try sha256sum(clip.text)).mp3"
            try FileManager.default.copyItem(atPath: clip.path, toPath: folder.path(name))
            names.append(name)
        }
        return names.sorted()
    }
}
