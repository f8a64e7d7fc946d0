import Foundation

/// The spans of a file's last encoding, kept so that encoding the same session again with a few
/// moments changed (a lossy file encoded once more with its overshoots lowered) encodes only the
/// spans those moments lie in and copies the packets of the others.
///
/// Copying is exactly encoding again: a ``SilenceSplicer`` encodes each span with a fresh encoder
/// started on the same packet grid after the same silence, so a span given the same samples makes
/// the same packets. Which spans changed is known before their samples come: the caller names the
/// frames it changed (``prepareNextEncoding(changedFrames:)``). An unchanged span's samples are
/// therefore not kept, only hashed as they pass; at the span's end its length and hash are checked
/// against the last encoding's, and a span that differs after all fails the encoding with
/// ``mismatch`` set, which the caller repeats with ``forgetSpans()`` (never a wrong packet).
///
/// The packets live in an unnamed temporary file, each after its length, gone when this ends;
/// memory holds one record per span, whatever the session's length. One encoding at a time uses
/// it, on the thread that writes.
package final class SpanReuse {
    /// One span of an encoding: what it was fed and where its packets are.
    struct Record {
        /// Input frames the span's encoder was given, its leading and trailing zeros included.
        var fed: Int64
        /// The hash of those frames (``SilenceSplicer`` feeds it).
        var digest: Int
        /// Where the span's packets start in the archive, how many bytes they take (with their
        /// lengths), and how many there are.
        var offset: Int64
        var byteCount: Int64
        var packetCount: Int64
    }

    private let archive: FileDescriptor
    private var archiveSize: Int64 = 0
    /// The last finished encoding's spans and the one being written's, by their first packet.
    private var previous: [Int64: Record] = [:]
    private var current: [Int64: Record] = [:]
    /// The session frames changed since the last encoding, in order.
    private var changedFrames: [Range<Int64>] = []
    /// Where the span now being archived started.
    private var openRecordOffset: Int64?
    private var readBuffer: [UInt8] = []
    /// Kept packets not yet written to the archive: they are written 64 KiB at a time.
    private var unwritten: [UInt8] = []

    /// How many spans the last encoding copied rather than encoded.
    package private(set) var reusedSpanCount = 0
    /// Why the last encoding failed, if a span it was told was unchanged had changed.
    package private(set) var mismatch: String?

    /// Nothing kept yet; the packets will be kept in the folder `temporaryFolder`.
    ///
    /// - Throws: ``SystemError`` when the folder's file system cannot hold a file with no name.
    package init(temporaryFolder: String = NSTemporaryDirectory()) throws(SystemError) {
        archive = try FileDescriptor.anonymousFile(inFolder: temporaryFolder)
    }

    /// Says that the next encoding is of the same session with only the frames in
    /// `changedFrames` (session frames, before any lead) different: the spans of the last
    /// encoding that no range reaches are copied.
    package func prepareNextEncoding(changedFrames: [Range<Int64>]) {
        self.changedFrames = changedFrames.sorted { $0.lowerBound < $1.lowerBound }
    }

    /// Forgets the spans kept: the next encoding encodes all of them (and keeps them again).
    package func forgetSpans() {
        previous = [:]
        changedFrames = []
    }

    // MARK: What a splicer calls

    /// Starts an encoding: nothing copied yet.
    func beginEncoding() {
        current = [:]
        reusedSpanCount = 0
        mismatch = nil
        openRecordOffset = nil
        // What a failed encoding left unwritten: no record points to it.
        archiveSize -= Int64(unwritten.count)
        unwritten.removeAll(keepingCapacity: true)
    }

    /// The last encoding's span starting at packet `firstPacket`, if the frames it covered,
    /// from session frame `start` on, are all unchanged.
    func unchangedSpan(at firstPacket: Int64, startingAt start: Int64) -> Record? {
        guard let record = previous[firstPacket] else { return nil }
        let covered = start..<(start + record.fed)
        return changedFrames.contains { $0.overlaps(covered) } ? nil : record
    }

    /// Notes that the span starting at packet `firstPacket` was to be copied but was fed other
    /// frames than last time; returns the reason the encoding fails with.
    func noteMismatch(at firstPacket: Int64) -> String {
        let reason =
            "the span at packet \(firstPacket) was fed other samples than the encoding before, outside every changed frame"
        mismatch = reason
        return reason
    }

    /// Keeps a packet of the span being encoded, which starts a record if none is open.
    func keep(_ packet: ArraySlice<UInt8>) throws(SystemError) {
        if openRecordOffset == nil { openRecordOffset = archiveSize }
        let length = UInt32(packet.count)
        for shift in stride(from: 0, to: 32, by: 8) { unwritten.append(UInt8(truncatingIfNeeded: length >> shift)) }
        unwritten += packet
        archiveSize += 4 + Int64(packet.count)
        if unwritten.count >= 1 << 16 { try writeKept() }
    }

    private func writeKept() throws(SystemError) {
        try archive.write(unwritten)
        unwritten.removeAll(keepingCapacity: true)
    }

    /// Ends the record of the span starting at packet `firstPacket`, whose packets were kept.
    func endSpan(at firstPacket: Int64, fed: Int64, digest: Int, packetCount: Int64) {
        let offset = openRecordOffset ?? archiveSize
        current[firstPacket] = Record(
            fed: fed,
            digest: digest,
            offset: offset,
            byteCount: archiveSize - offset,
            packetCount: packetCount
        )
        openRecordOffset = nil
    }

    /// Hands each packet of `record` to `body`, in order, and keeps the record for the next
    /// encoding as the span starting at packet `firstPacket`.
    func copy<Failure: Error>(
        _ record: Record,
        at firstPacket: Int64,
        _ body: (ArraySlice<UInt8>) throws(Failure) -> Void
    ) throws(BlockReadError<Failure>) {
        // The record's bytes are read 64 KiB at a time (a span of speech is a few dozen packets
        // of a few hundred bytes), and its packets handed over from what was read.
        var (position, end) = (record.offset, record.offset + record.byteCount)
        var (pending, start) = ([UInt8](), 0)
        func need(_ count: Int) throws(SystemError) {
            while pending.count - start < count {
                let piece = Int(min(Int64(max(1 << 16, count)), end - position))
                guard piece > 0 else { throw .ioError }
                try archive.read(into: &readBuffer, count: piece, at: position)
                pending.removeFirst(start)
                start = 0
                pending += readBuffer[..<piece]
                position += Int64(piece)
            }
        }
        for _ in 0..<record.packetCount {
            let length: Int
            do {
                try need(4)
                length = pending[start..<start + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
                start += 4
                try need(length)
            } catch {
                throw .reading(error)
            }
            do {
                try body(pending[start..<start + length])
            } catch {
                throw .handling(error)
            }
            start += length
        }
        current[firstPacket] = record
        reusedSpanCount += 1
    }

    /// Ends an encoding: its spans are those the next one may copy.
    func endEncoding() throws(SystemError) {
        try writeKept()
        previous = current
        current = [:]
        changedFrames = []
    }
}
