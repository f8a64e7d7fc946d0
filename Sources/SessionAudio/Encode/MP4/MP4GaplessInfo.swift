#if canImport(Glibc)
import Glibc
#endif

/// iTunes' gapless record, `iTunSMPB`: the encoder delay, the padding and the frame count, as a
/// freeform `----` atom (`com.apple.iTunes`, `iTunSMPB`) in the file's `ilst`. Apple's players
/// read the gapless length from it; others (ffmpeg) read the edit list, which says the same.
///
/// libavformat 5.1's MP4 muxer writes no freeform atoms, and inserting one after it has written
/// the file would move the audio its index points at. So the muxer is given a comment (`©cmt`)
/// of exactly the `----` atom's size to hold its place, and ``write(into:)`` overwrites that
/// comment with the atom in place: no offset in the file changes.
struct MP4GaplessInfo: Equatable {
    /// Frames before the first frame of the session.
    var priming: Int64
    /// Frames after its last.
    var padding: Int64
    /// The session's frames.
    var frameCount: Int64

    /// The record's text as iTunes writes it: 12 hexadecimal fields, the 2nd the priming, the
    /// 3rd the padding, the 4th the frame count.
    var text: String {
        let fields =
            [hex(0, 8), hex(priming, 8), hex(padding, 8), hex(frameCount, 16)] + Array(repeating: hex(0, 8), count: 8)
        return fields.map { " " + $0 }.joined()
    }

    /// The `----` atom holding ``text``.
    var atom: [UInt8] {
        Self.box(
            "----",
            Self.box("mean", [0, 0, 0, 0] + Array("com.apple.iTunes".utf8))
                + Self.box("name", [0, 0, 0, 0] + Array("iTunSMPB".utf8))
                + Self.box("data", [0, 0, 0, 1, 0, 0, 0, 0] + Array(text.utf8))
        )
    }

    /// The comment the muxer is given to hold the atom's place: its `©cmt` atom (8 bytes of
    /// header, a `data` atom of 16 and the text) is as long as ``atom``, since every record's text
    /// has the same length.
    static var placeholder: String {
        let length = MP4GaplessInfo(priming: 0, padding: 0, frameCount: 0).atom.count - 24
        let mark = "render-session reserves this for iTunSMPB "
        return mark + String(repeating: ".", count: length - mark.utf8.count)
    }

    /// The comment atom as the muxer writes the placeholder, byte for byte.
    private static var placeholderAtom: [UInt8] {
        box([0xA9, 0x63, 0x6D, 0x74], box("data", [0, 0, 0, 1, 0, 0, 0, 0] + Array(placeholder.utf8)))
    }

    /// Overwrites the placeholder comment in the `moov` of the MP4 file at `path` with ``atom``
    /// and flushes the file to disk.
    ///
    /// - Throws: ``AudioError`` with code `cannotWrite` when the file cannot be read or written,
    ///   `cannotEncode` when its `moov` or the placeholder in it is not found.
    func write(into path: String) throws(AudioError) {
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        let (offset, size) = try Self.moov(in: descriptor, path: path)
        var moov = [UInt8](repeating: 0, count: size)
        guard moov.withUnsafeMutableBytes({ pread(descriptor, $0.baseAddress, size, off_t(offset)) }) == size else {
            throw AudioError(.cannotWrite, path: path, reason: "cannot read the moov atom back")
        }
        let target = Self.placeholderAtom
        guard let found = Self.firstIndex(of: target, in: moov) else {
            throw AudioError(.cannotEncode, path: path, reason: "the muxer did not write the iTunSMPB placeholder")
        }
        let record = atom
        precondition(record.count == target.count, "the iTunSMPB atom and its placeholder differ in size")
        let written = record.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(offset + found)) }
        guard written == record.count, fsync(descriptor) == 0 else {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// Where the top-level `moov` box starts and how long it is, found by walking the boxes.
    private static func moov(in descriptor: Int32, path: String) throws(AudioError) -> (Int, Int) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(errno)))
        }
        let fileSize = Int(status.st_size)
        var offset = 0
        while offset + 8 <= fileSize {
            var header = [UInt8](repeating: 0, count: 16)
            let read = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 16, off_t(offset)) }
            guard read >= 8 else { break }
            var size = Int(bigEndian(header[0..<4]))
            if size == 1, read == 16 { size = Int(bigEndian(header[8..<16])) }
            if size == 0 { size = fileSize - offset }
            guard size >= 8, offset + size <= fileSize else { break }
            if header[4..<8].elementsEqual("moov".utf8) { return (offset, size) }
            offset += size
        }
        throw AudioError(.cannotEncode, path: path, reason: "the muxer wrote no moov atom")
    }

    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static func firstIndex(of pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard pattern.count <= bytes.count, let first = pattern.first else { return nil }
        for start in 0...(bytes.count - pattern.count) where bytes[start] == first {
            if bytes[start..<(start + pattern.count)].elementsEqual(pattern) { return start }
        }
        return nil
    }

    /// A box: its 32-bit size, its type and `body`.
    private static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        box(Array(type.utf8), body)
    }

    private static func box(_ type: [UInt8], _ body: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + body.count)
        return [UInt8(size >> 24), UInt8((size >> 16) & 0xFF), UInt8((size >> 8) & 0xFF), UInt8(size & 0xFF)] + type
            + body
    }

    private func hex(_ value: Int64, _ digits: Int) -> String {
        let text = String(UInt64(value), radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
