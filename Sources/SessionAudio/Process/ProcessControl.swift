#if canImport(Glibc)
import Glibc
#endif

/// This process, and others by their process id: what temporaries are named after and checked
/// against, what ends a Piper worker, and how the command stops.
package enum ProcessControl {
    /// This process's id. The corresponding system call is `getpid(2)`.
    package static var identifier: Int32 {
        getpid()
    }

    /// This host's name, as the bytes the kernel holds (a temporary's name carries their hash).
    /// The corresponding system call is `gethostname(2)`.
    package static var hostName: [UInt8] {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count - 1)
        return name.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }
    }

    /// Whether no process has the id `process` any more (its temporaries can go). A process that
    /// exists but belongs to another user has not ended.
    /// The corresponding system call is `kill(2)` with signal 0, failing with `ESRCH`.
    package static func hasEnded(_ process: Int32) -> Bool {
        Glibc.kill(process, 0) != 0 && SystemError.current == .noSuchProcess
    }

    /// Sends `signal` to the process `process`; one that has already gone is left alone.
    /// The corresponding system call is `kill(2)`.
    package static func send(_ signal: ProcessSignal, to process: Int32) {
        _ = Glibc.kill(process, signal.number)
    }

    /// Ends the process with `status` at once: no exit handler runs and no buffer is flushed (for
    /// a process that must stop now, whatever its threads are doing).
    /// The corresponding system call is `_exit(2)`.
    package static func exitImmediately(status: Int32) -> Never {
        _exit(status)
    }

    /// Ends the process with `status`, flushing the C library's buffers (what `print` wrote).
    /// The corresponding C function is `exit(3)`.
    package static func exit(status: Int32) -> Never {
        Glibc.exit(status)
    }
}

/// A signal, by what it asks of a process.
package struct ProcessSignal: Sendable, Equatable {
    /// The signal's number, as `signal.h` has it (what a shell's exit status adds to 128).
    package let number: Int32

    /// Ctrl-C (`SIGINT`).
    package static let interrupt = ProcessSignal(number: SIGINT)
    /// A polite request to end (`SIGTERM`).
    package static let terminate = ProcessSignal(number: SIGTERM)
    /// The end that cannot be caught (`SIGKILL`).
    package static let kill = ProcessSignal(number: SIGKILL)

    /// Makes this process ignore the signal, so that it no longer ends it; a dispatch source
    /// watching the signal still sees it arrive. The corresponding C function is `signal(2)` with
    /// `SIG_IGN`.
    package func ignore() {
        _ = signal(number, SIG_IGN)
    }
}
