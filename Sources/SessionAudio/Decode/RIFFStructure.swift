/// The chunk structure of a RIFF/WAVE or RF64 file, walked from its bytes rather than trusted to a
/// decoder: libsndfile opens a file whose `data` chunk sits inside the size a `LIST` declared
/// (the file libsndfile 1.2.0 itself writes when its header overflows), where ffmpeg, sox,
/// Python's `wave` and browsers find no `data` at all. So `verify` judges a WAV by this walk too.
///
/// The walk reads only chunk headers (8 bytes each, `pread`), so it costs the same for an hour
/// as for a second, and it stops at ``maximumChunks`` chunks and subchunks.
package enum RIFFStructure {
    /// The most chunks and `LIST` subchunks walked: a session's WAV has a few chunks and a `labl`
    /// subchunk per chapter, 10,000 at most.
    package static let maximumChunks = 1_000_000

    /// What is wrong with the structure of the file at `path`, as one phrase (`the LIST chunk at
    /// byte 36 runs 40 bytes past the end of the RIFF chunk`), or `nil` when every chunk lies
    /// inside its parent, the RIFF size is the file's, and there is one `fmt ` chunk followed by
    /// one `data` chunk at the top level. A file that is not RIFF/WAVE or RF64 is `nil` too:
    /// this only judges WAVs.
    /// - Throws: ``AudioError`` with code `cannotOpen` when the file cannot be opened or read.
    package static func problem(path: String) throws(AudioError) -> String? {
        do {
            let file = try FileDescriptor.open(path, .readOnly)
            return try problem(in: file, byteCount: try file.byteCount())
        } catch {
            throw AudioError(.cannotOpen, path: path, reason: error.description)
        }
    }

    /// The walk, over an open file of `byteCount` bytes.
    static func problem(in file: borrowing FileDescriptor, byteCount: Int64) throws(SystemError) -> String? {
        guard byteCount >= 12 else { return nil }
        var reader = HeaderReader()
        let form = try reader.header(of: file, at: 0)
        guard form.id == "RIFF" || form.id == "RF64", try reader.fourCC(of: file, at: 8) == "WAVE" else { return nil }
        var riffEnd = 8 + Int64(form.size)
        var dataSize: Int64?
        if form.id == "RF64" {
            // EBU Tech 3306: the real RIFF and data sizes are in `ds64`, the first chunk.
            guard byteCount >= 12 + 8 + 16, try reader.fourCC(of: file, at: 12) == "ds64" else {
                return "an RF64 file without a ds64 chunk first"
            }
            let sizes = try reader.bytes(of: file, at: 20, count: 16)
            riffEnd =
                8 + Int64(bitPattern: UInt64(littleEndian: sizes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }))
            dataSize = Int64(
                bitPattern: UInt64(
                    littleEndian: sizes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self) }
                )
            )
        }
        guard riffEnd == byteCount else {
            return riffEnd > byteCount
                ? "the RIFF chunk declares \(riffEnd) bytes, but the file has \(byteCount) (cut short)"
                : "the RIFF chunk declares \(riffEnd) bytes, but the file has \(byteCount) (\(byteCount - riffEnd) bytes after it)"
        }
        var offset: Int64 = 12
        var seenFormat = false
        var seenData = false
        while offset < riffEnd {
            guard reader.walked < maximumChunks else { return "more than \(maximumChunks) chunks" }
            guard riffEnd - offset >= 8 else {
                return "\(riffEnd - offset) stray bytes at byte \(offset), too few for a chunk header"
            }
            let chunk = try reader.header(of: file, at: offset)
            guard chunk.id.allSatisfy(\.isASCII) else {
                return "bytes at \(offset) that are no chunk (id \(chunk.id.debugDescription)), inside no chunk"
            }
            var size = Int64(chunk.size)
            if chunk.id == "data", let dataSize, chunk.size == UInt32.max { size = dataSize }
            let end = offset + 8 + size + (size & 1)
            // The last chunk's pad byte may be missing: many writers leave it out.
            guard end <= riffEnd || offset + 8 + size == riffEnd else {
                return
                    "the \(chunk.id.debugDescription) chunk at byte \(offset) runs \(end - riffEnd) bytes past the end of the RIFF chunk"
            }
            switch chunk.id {
            case "fmt ":
                guard !seenFormat else { return "a second fmt  chunk at byte \(offset)" }
                seenFormat = true
            case "data":
                guard !seenData else { return "a second data chunk at byte \(offset)" }
                guard seenFormat else { return "the data chunk at byte \(offset) comes before any fmt  chunk" }
                seenData = true
            case "LIST":
                if let problem = try listProblem(file, reader: &reader, at: offset, size: size) { return problem }
            default:
                break
            }
            offset = end
        }
        if !seenFormat { return "no fmt  chunk at the top level" }
        if !seenData { return "no data chunk at the top level" }
        return nil
    }

    /// What is wrong inside the `LIST` chunk at `offset` whose body is `size` bytes: a subchunk
    /// that runs past the list's end, or a list too short for its type.
    private static func listProblem(
        _ file: borrowing FileDescriptor,
        reader: inout HeaderReader,
        at offset: Int64,
        size: Int64
    ) throws(SystemError) -> String? {
        guard size >= 4 else { return "the LIST chunk at byte \(offset) is too short for its type" }
        let listType = try reader.fourCC(of: file, at: offset + 8)
        let end = offset + 8 + size
        var inner = offset + 12
        while inner < end {
            guard reader.walked < maximumChunks else { return "more than \(maximumChunks) chunks" }
            guard end - inner >= 8 else {
                return "\(end - inner) stray bytes at byte \(inner) in the LIST/\(listType) chunk at byte \(offset)"
            }
            let subchunk = try reader.header(of: file, at: inner)
            let subchunkEnd = inner + 8 + Int64(subchunk.size)
            guard subchunkEnd <= end else {
                return
                    "the \(subchunk.id.debugDescription) subchunk at byte \(inner) runs \(subchunkEnd - end) bytes past the end of the LIST/\(listType) chunk at byte \(offset)"
            }
            inner = subchunkEnd + (subchunkEnd & 1)
        }
        return nil
    }

    /// Reads chunk headers and counts them.
    private struct HeaderReader {
        private var buffer: [UInt8] = []
        private(set) var walked = 0

        mutating func bytes(
            of file: borrowing FileDescriptor,
            at offset: Int64,
            count: Int
        ) throws(SystemError) -> [UInt8] {
            try file.read(into: &buffer, count: count, at: offset)
            return Array(buffer[0..<count])
        }

        mutating func fourCC(of file: borrowing FileDescriptor, at offset: Int64) throws(SystemError) -> String {
            String(decoding: try bytes(of: file, at: offset, count: 4), as: UTF8.self)
        }

        /// The chunk header at `offset`: its id and its 32-bit size.
        mutating func header(
            of file: borrowing FileDescriptor,
            at offset: Int64
        ) throws(SystemError) -> (id: String, size: UInt32) {
            walked += 1
            let header = try bytes(of: file, at: offset, count: 8)
            let size = UInt32(header[4]) | UInt32(header[5]) << 8 | UInt32(header[6]) << 16 | UInt32(header[7]) << 24
            return (String(decoding: header[0..<4], as: UTF8.self), size)
        }
    }
}
