import Foundation

/// Plain words for file-system errors from Foundation, which are worded for apps, not paths.
enum FileProblem {
    /// Why `error` happened at `path`, in a few words: `no such file`, `permission denied`, ….
    static func describe(_ error: any Error, path: String) -> String {
        if let reason = reasonFromDisk(path) { return reason }
        return (error as NSError).localizedDescription
    }

    /// Why `path` cannot be opened for reading, as seen on disk.
    static func describeUnreadable(_ path: String) -> String {
        reasonFromDisk(path) ?? "it cannot be opened"
    }

    private static func reasonFromDisk(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) { return "no such file" }
        if isDirectory.boolValue { return "it is a directory" }
        if !FileManager.default.isReadableFile(atPath: path) { return "permission denied" }
        return nil
    }
}
