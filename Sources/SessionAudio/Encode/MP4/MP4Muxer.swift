/// An MP4 file (M4A or M4B) being written: the boxes ``MP4Movie`` lays out, around AAC packets
/// the caller gives in order.
///
/// The `ftyp`, a `moov` of zeros as long as the finished one will be, the `mdat`'s header and
/// the chapters' text samples are written first; then the packets as they come, through a
/// buffer; ``finish()`` writes the `moov` into its place, with every packet's size and the bit
/// rates, and the `mdat`'s size. So the index is before the audio (a player can start while the
/// file is still arriving) without rewriting the file, and what is kept until the end is 4 bytes
/// a packet: 2 MB for three hours at 48 kHz.
///
/// Owns the file's descriptor.
final class MP4Muxer {
    private let path: String
    private let movie: MP4Movie
    private var file: FileDescriptor?
    private var packetSizes: [UInt32] = []
    private var pending: [UInt8] = []
    private let movieOffset: Int64
    private let movieSize: Int
    private let mediaDataOffset: Int64
    private let chapterOffset: Int64
    private let audioOffset: Int64
    private var audioBytes: Int64 = 0

    /// Packets' bytes gathered before a write.
    private static let bufferSize = 1 << 16

    /// The brands a file is written with.
    enum Brand: String {
        /// Audio (`M4A `).
        case audio = "M4A "
        /// An audiobook (`M4B `), which players file as a book and let resume.
        case audiobook = "M4B "
    }

    /// Creates `path` (replacing any file there) for the packets `movie` describes, and writes
    /// what comes before them.
    ///
    /// - Throws: ``AudioError`` with code `cannotWrite` when the file cannot be created or written.
    init(path: String, movie: MP4Movie) throws(AudioError) {
        self.path = path
        self.movie = movie
        let fileType = movie.fileType
        let chapters = movie.chapterSamples
        let chapterBytes = chapters.reduce(0) { $0 + $1.count }
        movieOffset = Int64(fileType.count)
        // Sizes and offsets are fixed-width fields: the moov is as long with zeros as with them.
        movieSize =
            movie.movie(
                packetSizes: Array(repeating: 0, count: Int(movie.packetCount)),
                audioOffset: 0,
                chapterOffset: 0
            ).count
        mediaDataOffset = movieOffset + Int64(movieSize)
        let headerSize = movie.mediaDataHeader(payloadSize: 0).count
        chapterOffset = mediaDataOffset + Int64(headerSize)
        audioOffset = chapterOffset + Int64(chapterBytes)
        packetSizes.reserveCapacity(Int(movie.packetCount))
        pending.reserveCapacity(Self.bufferSize + 8_192)
        do {
            file = try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate], permissions: 0o666)
        } catch {
            throw AudioError(.cannotWrite, path: path, reason: error.description)
        }
        pending += fileType
        pending += repeatElement(0, count: movieSize)
        pending += movie.mediaDataHeader(payloadSize: 0)
        for sample in chapters { pending += sample }
        try flush()
    }

    /// Writes the next AAC packet.
    func write(_ bytes: ArraySlice<UInt8>) throws(AudioError) {
        guard file != nil else { throw closed }
        guard Int64(packetSizes.count) < movie.packetCount else {
            throw AudioError(
                .cannotEncode,
                path: path,
                reason: "the encoder made more than the \(movie.packetCount) packets the file's index holds"
            )
        }
        packetSizes.append(UInt32(bytes.count))
        audioBytes += Int64(bytes.count)
        pending += bytes
        if pending.count >= Self.bufferSize { try flush() }
    }

    /// Writes what is buffered, the index in its place and the `mdat`'s size, flushes the file to
    /// disk and closes it.
    ///
    /// - Throws: ``AudioError`` with code `cannotEncode` unless every packet the index holds was
    ///   written, `cannotWrite` when the file cannot be written.
    func finish() throws(AudioError) {
        guard file != nil else { throw closed }
        defer { file = nil }
        try flush()
        guard Int64(packetSizes.count) == movie.packetCount else {
            throw AudioError(
                .cannotEncode,
                path: path,
                reason: "the encoder made \(packetSizes.count) packets, not the \(movie.packetCount) the index holds"
            )
        }
        let index = movie.movie(packetSizes: packetSizes, audioOffset: audioOffset, chapterOffset: chapterOffset)
        precondition(index.count == movieSize, "the moov's length depends only on the packets' count")
        let payload = audioOffset - chapterOffset + audioBytes
        do {
            try file?.write(index, at: movieOffset)
            try file?.write(movie.mediaDataHeader(payloadSize: payload), at: mediaDataOffset)
            try file?.synchronize()
        } catch {
            throw AudioError(.cannotWrite, path: path, reason: error.description)
        }
        try closeFile()
    }

    private func flush() throws(AudioError) {
        guard !pending.isEmpty else { return }
        do {
            try file?.write(pending)
        } catch {
            throw AudioError(.cannotWrite, path: path, reason: error.description)
        }
        pending.removeAll(keepingCapacity: true)
    }

    private func closeFile() throws(AudioError) {
        guard let open = file.take() else { return }
        do {
            try open.close()
        } catch {
            throw AudioError(.cannotWrite, path: path, reason: error.description)
        }
    }

    private var closed: AudioError { AudioError(.cannotWrite, path: path, reason: "the file is already closed") }
}
