package import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Plain words for file-system errors, from the system's own error number wherever there is one:
/// every `errno` the library reports goes through ``reason(errno:folder:)`` (a ``SystemError``'s
/// ``SystemError/reason(folder:)`` among them).
package enum FileProblem {
    /// Why `error` happened at `path`, in a few words: `no such file`, `permission denied`,
    /// `the disk holding /out is full`, ….
    ///
    /// The error's own `errno` decides when Foundation carries one; only without it is the path
    /// looked at on disk (which cannot tell a full disk from a missing file).
    package static func describe(_ error: any Error, path: String) -> String {
        if let code = errorNumber(of: error) { return reason(errno: code, folder: folder(of: path)) }
        if let reason = reasonFromDisk(path) { return reason }
        return (error as NSError).localizedDescription
    }

    /// Why `path` cannot be opened for reading, as seen on disk.
    package static func describeUnreadable(_ path: String) -> String {
        reasonFromDisk(path) ?? "it cannot be opened"
    }

    /// The one mapping from a system error number to words; `folder` is where the failing file
    /// lives, named when the cause is the folder's disk (full, over quota, read-only).
    package static func reason(errno code: Int32, folder: String? = nil) -> String {
        let place = folder.map { " holding \($0)" } ?? ""
        switch code {
        case ENOSPC: return "the disk\(place) is full"
        case EDQUOT: return "the disk quota\(folder.map { " for \($0)" } ?? "") is exceeded"
        case EROFS: return "the file system\(place) is read-only"
        case ENOENT: return "no such file"
        case EACCES, EPERM: return "permission denied"
        case EISDIR: return "it is a directory"
        case EEXIST: return "it already exists"
        case ENOTEMPTY: return "the folder is not empty"
        case EIO: return "an input/output error on the disk\(place)"
        case EMFILE, ENFILE: return "too many open files"
        case ENAMETOOLONG: return "the name is too long"
        default: return SystemError(code: code).description
        }
    }

    /// The `errno` behind an error, when it carries one: a ``SystemError``'s, or a Foundation
    /// error's own code or an underlying one.
    static func errorNumber(of error: any Error) -> Int32? {
        if let system = error as? SystemError { return system.code }
        if let posix = error as? POSIXError { return posix.code.rawValue }
        let bridged = error as NSError
        if bridged.domain == NSPOSIXErrorDomain { return Int32(bridged.code) }
        if let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? any Error,
            let code = errorNumber(of: underlying)
        {
            return code
        }
        // Foundation's file errors without their errno: the codes that name one cause.
        guard let cocoa = error as? CocoaError else { return nil }
        switch cocoa.code {
        case .fileWriteOutOfSpace: return ENOSPC
        case .fileWriteVolumeReadOnly: return EROFS
        case .fileNoSuchFile, .fileReadNoSuchFile: return ENOENT
        case .fileWriteNoPermission, .fileReadNoPermission: return EACCES
        default: return nil
        }
    }

    /// The error Foundation's `FileHandle` throws for a read that failed with `error`: a Cocoa error
    /// whose code stands for a few causes (most are "unknown"), wrapping the `errno`. Its
    /// `localizedDescription` is how `render-session position -` has always worded a failed read
    /// of standard input (`The operation could not be completed. (NSCocoaErrorDomain error 256.)`).
    package static func foundationReadError(_ error: SystemError) -> NSError {
        let code: CocoaError.Code =
            switch error.code {
            case EFBIG: .fileReadTooLarge
            case ENOENT: .fileReadNoSuchFile
            case EPERM, EACCES: .fileReadNoPermission
            default: .fileReadUnknown
            }
        let underlying = NSError(domain: NSPOSIXErrorDomain, code: Int(error.code))
        return NSError(domain: NSCocoaErrorDomain, code: code.rawValue, userInfo: [NSUnderlyingErrorKey: underlying])
    }

    /// The folder `path` is in, or `path` itself if it is a folder.
    private static func folder(of path: String) -> String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            return path
        }
        // A name without a slash is in the working folder (and Foundation's
        // deletingLastPathComponent traps on a one-letter name such as "-").
        guard path.contains("/") else { return "." }
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }

    private static func reasonFromDisk(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) { return "no such file" }
        if isDirectory.boolValue { return "it is a directory" }
        if !FileManager.default.isReadableFile(atPath: path) { return "permission denied" }
        return nil
    }
}
