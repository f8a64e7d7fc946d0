import Foundation
internal import SessionAudio
internal import SessionTimeline
import Subprocess

/// How a worker's process failed, inside its closure.
enum WorkerFailure: Error {
    /// It said why it cannot go on (no Piper package, a model that does not load).
    case said(String)
    /// It wrote what the protocol does not allow: the worker (as a phrase) and what it wrote.
    case brokenProtocol(String, String)
    /// Its output ended in the middle of an answer, or before one.
    case ended
}

/// Reads a worker's answers from its process's standard output: lines of JSON, and runs of
/// bytes (Piper's bridge and the speech check's recognizer).
///
/// Linear in what it reads, and bounded: a line is searched for its end once, byte by byte, and
/// may be at most `maximumLineBytes` long; a run of bytes is at most what the caller allows
/// (checked before it is asked for).
struct WorkerOutputReader {
    private var chunks: SubprocessOutputSequence.Iterator
    /// Bytes read and not yet taken: `buffer[start...]`.
    private var buffer: [UInt8] = []
    private var start = 0
    /// How many bytes from `start` are known to hold no newline.
    private var searched = 0
    /// The worker's process, ended when it breaks the protocol.
    private let process: Int32
    /// The worker, as a phrase for errors: `the Piper worker for NAME (process PID)`.
    private let worker: String
    /// The longest line the worker may write.
    private let maximumLineBytes: Int

    init(_ chunks: SubprocessOutputSequence.Iterator, process: Int32, worker: String, maximumLineBytes: Int) {
        self.chunks = chunks
        self.process = process
        self.worker = worker
        self.maximumLineBytes = maximumLineBytes
    }

    /// Ends the process, which broke the protocol (what it writes next means nothing, and it may
    /// never stop writing or never read its input again), and says how.
    func broken(_ detail: String) -> WorkerFailure {
        ProcessControl.send(.kill, to: process)
        return .brokenProtocol(worker, detail)
    }

    /// The next line, decoded as `Line`.
    mutating func line<Line: Decodable>(as _: Line.Type) async throws -> Line {
        let limit = maximumLineBytes
        while true {
            if let newline = buffer[(start + searched)...].firstIndex(of: 0x0A) {
                guard newline - start <= limit else { throw tooLong() }
                let line = Data(buffer[start..<newline])
                take(upTo: newline + 1)
                guard let header = try? JSONDecoder().decode(Line.self, from: line) else {
                    let start = printable(String(decoding: line.prefix(200), as: UTF8.self))
                    throw broken("it wrote something that is not its protocol: \(start)")
                }
                return header
            }
            searched = buffer.count - start
            guard searched <= limit else { throw tooLong() }
            try await fill()
        }
    }

    /// The next `count` bytes.
    mutating func bytes(count: Int) async throws -> Data {
        while buffer.count - start < count { try await fill() }
        let taken = Data(buffer[start..<(start + count)])
        take(upTo: start + count)
        return taken
    }

    private func tooLong() -> WorkerFailure {
        broken("it wrote a line longer than \(maximumLineBytes) bytes")
    }

    /// Drops the bytes before `end`; the buffer is compacted once half of it is taken, so each byte moves at most once or twice.
    private mutating func take(upTo end: Int) {
        start = end
        searched = 0
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
    }

    private mutating func fill() async throws {
        guard let chunk = try await chunks.next() else { throw WorkerFailure.ended }
        buffer.append(contentsOf: chunk.bytes)
    }
}

extension Environment {
    /// An environment of `variables` alone, nothing inherited: a worker's (Piper's, the speech
    /// recognizer's), so that no key, header or `PYTHON*` setting of the user's reaches it.
    static func only(_ variables: [String: String]) -> Environment {
        .custom(Dictionary(uniqueKeysWithValues: variables.map { (Environment.Key(stringLiteral: $0), $1) }))
    }
}
