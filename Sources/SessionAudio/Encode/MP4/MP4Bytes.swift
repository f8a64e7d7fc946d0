/// Bytes of an ISO base media file (MP4) being put together: big-endian fields, four-character
/// codes, and boxes whose 32-bit size is filled in once their body is written.
struct MP4Bytes {
    private(set) var bytes: [UInt8] = []

    init(reservingCapacity capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    /// Appends `value` big-endian, in its own width.
    mutating func append<Value: FixedWidthInteger>(_ value: Value) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends `value` in 32 bits (version 0 of a box) or 64 (version 1).
    mutating func append(_ value: Int64, wide: Bool) {
        if wide { append(UInt64(value)) } else { append(UInt32(value)) }
    }

    /// Appends raw bytes.
    mutating func append(contentsOf raw: some Sequence<UInt8>) {
        bytes.append(contentsOf: raw)
    }

    /// Appends a four-character code, such as `mp4a`.
    mutating func append(code: String) {
        precondition(code.utf8.count == 4, "a four-character code has four bytes: \(code)")
        bytes.append(contentsOf: code.utf8)
    }

    /// Appends `count` zero bytes.
    mutating func appendZeros(_ count: Int) {
        bytes.append(contentsOf: repeatElement(0, count: count))
    }

    /// Appends a box of `type` whose body `body` writes.
    mutating func box(_ type: String, _ body: (inout MP4Bytes) -> Void) {
        box(code: Array(type.utf8), body)
    }

    /// Appends a box whose type is `code`'s four bytes (`©nam` is not ASCII).
    mutating func box(code: [UInt8], _ body: (inout MP4Bytes) -> Void) {
        precondition(code.count == 4, "a box type has four bytes")
        let start = bytes.count
        append(UInt32(0))
        append(contentsOf: code)
        body(&self)
        let size = UInt32(bytes.count - start)
        withUnsafeBytes(of: size.bigEndian) { raw in
            for (index, byte) in raw.enumerated() { bytes[start + index] = byte }
        }
    }

    /// Appends a full box: a box whose body starts with a version and 24 bits of flags.
    mutating func fullBox(_ type: String, version: UInt8 = 0, flags: UInt32 = 0, _ body: (inout MP4Bytes) -> Void) {
        box(type) { box in
            box.append(UInt32(version) << 24 | flags & 0xFF_FFFF)
            body(&box)
        }
    }
}
