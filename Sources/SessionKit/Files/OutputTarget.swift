import Foundation
internal import SessionAudio
internal import SessionTimeline

/// An output destination as found on disk before any work: how it will be written.
///
/// What is at a path decides how it is written, so that nothing of the user's is replaced that
/// is not a regular file they asked for: a regular file (or nothing) is replaced atomically; a
/// symbolic link has its target replaced atomically and stays a link; a FIFO, character device
/// or socket (`/dev/stdout`, `/dev/null`, `<(…)`) is written straight through; a folder is refused.
struct OutputTarget: Sendable, Equatable {
    /// How the output is written.
    enum Kind: Sendable, Equatable {
        /// To the process's standard output.
        case standardOutput
        /// Straight into what is at `path`, which cannot be replaced (a FIFO or device).
        case stream(path: String)
        /// Beside the regular file `path` under a temporary name, then renamed over it.
        case replace(path: String)
    }

    /// Where the user asked the output to go.
    let destination: OutputDestination
    /// How it is written.
    let kind: Kind

    /// Finds out how `destination` will be written, creating its folder if needed.
    ///
    /// With `inOwnedFolder` (a batch's outputs, in a folder the tool owns) only a regular file or
    /// nothing is written: a link, a FIFO or a device there is refused, never followed or written
    /// through. What is then written is renamed over the path, which replaces a link planted
    /// meanwhile rather than following it.
    /// - Throws: ``SessionError`` (`cannotWrite`, `outputExists`) for a folder, an unwritable
    ///   place, or an existing file when `replaceExisting` is false.
    static func resolve(
        _ destination: OutputDestination,
        replaceExisting: Bool,
        inOwnedFolder: Bool = false
    ) throws(SessionError) -> OutputTarget {
        guard case .path(let path) = destination else {
            return OutputTarget(destination: destination, kind: .standardOutput)
        }
        var current = path
        // Follow links to what they finally name; a chain longer than the kernel's limit is a loop.
        for _ in 0..<40 {
            let found: FileKind?
            do {
                found = try FileSystem.kindOfItem(at: current)
            } catch {
                throw cannotWrite(path, error.reason(), cause: error)
            }
            guard let found else {
                try createFolder(of: current, for: path)
                return OutputTarget(destination: destination, kind: .replace(path: current))
            }
            switch found {
            case .symbolicLink:
                guard !inOwnedFolder else {
                    throw cannotWrite(
                        path,
                        "it is a symbolic link, which is never followed in an output folder render-session owns; remove it"
                    )
                }
                current = try linkTarget(current, for: path)
            case .directory:
                throw cannotWrite(path, current == path ? "it is a directory" : "it links to the directory \(current)")
            case .regularFile:
                guard replaceExisting else {
                    throw SessionError(
                        .outputExists,
                        "\(path) exists; not replacing it (outputs are replaced unless \(SettingReference.noOverwrite.marker) is given)"
                    )
                }
                try checkWritableFolder(of: current, for: path)
                return OutputTarget(destination: destination, kind: .replace(path: current))
            case .other:
                guard !inOwnedFolder else { throw cannotWrite(path, "it is not a regular file; remove it") }
                do {
                    try FileSystem.checkWritable(current)
                } catch {
                    throw cannotWrite(path, error.reason(), cause: error)
                }
                return OutputTarget(destination: destination, kind: .stream(path: current))
            }
        }
        throw cannotWrite(path, "too many levels of symbolic links")
    }

    /// Whether two destinations name one file: the same path once made absolute, normalized and
    /// with links resolved, or both standard output.
    static func sameFile(_ first: OutputDestination, _ second: OutputDestination) -> Bool {
        switch (first, second) {
        case (.standardOutput, .standardOutput): true
        case (.path(let a), .path(let b)): canonicalPath(a) == canonicalPath(b)
        case (.standardOutput, .path(let path)), (.path(let path), .standardOutput):
            canonicalPath(path) == "/dev/stdout"
        }
    }

    private static func canonicalPath(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }

    private static func linkTarget(_ link: String, for path: String) throws(SessionError) -> String {
        let target: String
        do {
            target = try FileSystem.symbolicLinkTarget(at: link)
        } catch {
            throw cannotWrite(path, error.reason(), cause: error)
        }
        if target.hasPrefix("/") { return target }
        return (URL(fileURLWithPath: link).deletingLastPathComponent().path as NSString).appendingPathComponent(target)
    }

    /// Creates the folder that will hold `file` (as `mkdir -p`), and checks it can be written.
    private static func createFolder(of file: String, for path: String) throws(SessionError) {
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent().path
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw cannotWrite(
                path,
                "cannot create the folder \(folder): \(FileProblem.describe(error, path: folder))",
                cause: error
            )
        }
        try checkWritableFolder(of: file, for: path)
    }

    private static func checkWritableFolder(of file: String, for path: String) throws(SessionError) {
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent().path
        do {
            try FileSystem.checkWritable(folder)
        } catch {
            throw cannotWrite(path, "the folder \(folder) is not writable", cause: error)
        }
    }

    private static func cannotWrite(_ path: String, _ reason: String, cause: (any Error)? = nil) -> SessionError {
        SessionError(.cannotWrite, "Cannot write \(path): \(reason)", underlyingError: cause)
    }
}
