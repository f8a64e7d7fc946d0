#if canImport(Glibc)
import Glibc
#endif

/// A file read through a 64 KiB buffer, for libmpg123 and libavformat's reads: left to itself
/// libmpg123 reads a frame header, then the frame, a system call for every few hundred bytes
/// (40,000 calls for a 10-minute session). Owns its descriptor and closes it.
final class BufferedFile {
    private let descriptor: Int32
    /// The file's size when it was opened.
    let size: Int64
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private var bufferStart: Int64 = 0
    private var bufferCount = 0
    private var position: Int64 = 0

    /// Reads the file open at `descriptor`, which it owns (and closes, on failure too).
    init?(descriptor: Int32) {
        self.descriptor = descriptor
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            close(descriptor)
            return nil
        }
        size = Int64(status.st_size)
    }

    deinit {
        close(descriptor)
    }

    /// Copies up to `count` bytes at the current position; returns how many, 0 at the end, −1 on error.
    func read(into target: UnsafeMutableRawPointer, count: Int) -> Int {
        var copied = 0
        while copied < count {
            if position < bufferStart || position >= bufferStart + Int64(bufferCount) {
                let filled = buffer.withUnsafeMutableBytes {
                    pread(descriptor, $0.baseAddress, $0.count, off_t(position))
                }
                if filled < 0 { return copied > 0 ? copied : -1 }
                if filled == 0 { break }
                bufferStart = position
                bufferCount = filled
            }
            let offset = Int(position - bufferStart)
            let chunk = min(count - copied, bufferCount - offset)
            buffer.withUnsafeBytes { (target + copied).copyMemory(from: $0.baseAddress! + offset, byteCount: chunk) }
            copied += chunk
            position += Int64(chunk)
        }
        return copied
    }

    /// Up to `count` bytes at `offset`, without moving the position.
    func bytes(at offset: Int64, count: Int) -> [UInt8] {
        guard offset >= 0, offset < size else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        return read > 0 ? Array(bytes.prefix(read)) : []
    }

    /// Moves the position as `lseek` does; returns the new position, or −1.
    func seek(offset: Int64, whence: Int32) -> Int64 {
        let base: Int64
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = position
        case SEEK_END: base = size
        default: return -1
        }
        guard base + offset >= 0 else { return -1 }
        position = base + offset
        return position
    }
}
