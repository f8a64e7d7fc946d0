extension [UInt8] {
    /// Appends the bytes `bytes` views, such as a child process's output buffer's
    /// (swift-subprocess's `Buffer.bytes`).
    package mutating func append(contentsOf bytes: RawSpan) {
        bytes.withUnsafeBytes { append(contentsOf: $0) }
    }
}
