import Foundation
internal import SessionTimeline

/// Encodes only the spans of a stream that make sound, each with a fresh encoder on a worker
/// thread, and puts ready-made silent packets in the digital silence between, on one packet grid:
/// what makes the MP3 and AAC writers fast on sessions that are mostly silence, with joins that
/// decode exactly as the formats' own pages in docs/formats.md explain.
///
/// The grid: file packet `g` decodes to the input frames `g × F − D ..< (g + 1) × F − D`, where
/// `F` is the packet size and `D` the encoder's delay, exactly as if one encoder had encoded the
/// whole stream. A span is encoded by a fresh encoder started on a packet boundary `s` at or
/// before its first sounding frame (after ``Grid/preRollPackets`` packets of zeros whose packets
/// are dropped), fed the zeros from `s` and ``Grid/trailingZeros`` zeros after
/// its last sound, so its packet `j` is the file's packet `s / F + j`. Of the packets it makes,
/// ``Grid/keptPackets(fed:)`` are written; the rest encode only zeros. Spans closer than
/// ``Grid/joinGap`` frames are encoded as one; a session with a bed under it is one span. With
/// silence skipping off, the whole input is one span.
///
/// Given a ``SpanReuse``, it keeps each span's packets, and copies those of a span the last
/// encoding made from the same samples instead of encoding it again.
final class SilenceSplicer<Encoder: SpanEncoder> {
    /// The packet grid and the margins a format's joins need.
    struct Grid {
        /// Frames in one packet.
        var frameSize: Int64
        /// Zeros after a span's last sound that its encoder encodes before it is flushed.
        var trailingZeros: Int64
        /// A silence at least this long ends a span: shorter ones are encoded with the sound around them.
        var joinGap: Int64
        /// The encoder's delay plus any the decoder adds: a span fed `fed` frames keeps the
        /// `⌈(fed + keptDelay) / F⌉` packets that hold them.
        var keptDelay: Int64
        /// The packets the whole file has.
        var totalPackets: Int64
        /// Packets of zeros a span's encoder encodes before the span's first packet, their
        /// packets dropped: the input there is zeros either way (the packets before a span hold
        /// at least `trailingZeros` of silence), but an encoder that has seen them starts the
        /// span in the state one encoding the whole stream would have after silence.
        var preRollPackets = 0

        /// The packets a span fed `fed` frames (from its start through its trailing zeros) keeps.
        func keptPackets(fed: Int64) -> Int64 { (fed + keptDelay + frameSize - 1) / frameSize }
    }

    /// A packet for the file, in order.
    enum Packet {
        /// A packet an encoder made.
        case encoded(ArraySlice<UInt8>)
        /// The format's ready-made packet that decodes to zero.
        case silent
    }

    private let grid: Grid
    /// The session's frames promised to the file and those taken so far.
    private var promise: FramePromise
    private let channels: Int
    private let skipsSilence: Bool
    private let path: String
    private let emit: (Packet) throws(AudioError) -> Void
    /// The threads that encode spans.
    private let workers: SpanWorkers<Encoder>
    private var workersStopped = false
    /// Input frames taken so far, the lead included.
    private(set) var position: Int64 = 0
    /// The session's frames taken so far: not the lead.
    var framesWritten: Frames { Frames(promise.written) }
    /// The next packet of the file to emit.
    private(set) var nextPacket: Int64 = 0
    /// The span being given sound, if any.
    private var openSpan: OpenSpan?
    private struct OpenSpan {
        /// Its first packet, and whether its encoder is encoding it or its packets are copied.
        let firstPacket: Int64
        let source: SpanSource
        /// Input frames given to it, and their hash when spans are kept.
        var fed: Int64 = 0
        var digest: Hasher?
    }
    private enum SpanSource {
        case encoded(SpanWorkers<Encoder>.Span)
        case copied(SpanReuse.Record)
    }
    /// How a span ended: the packets it keeps, and what it was fed.
    private struct SpanEnd {
        let packetCount: Int64
        let fed: Int64
        let digest: Int
    }
    /// What is still to be emitted, in file order: silent packets up to a packet, or a span's
    /// packets (how many once the span has ended).
    private var steps: [Step] = []
    private enum Step {
        case silence(upTo: Int64)
        case span(SpanWorkers<Encoder>.Span, end: SpanEnd?)
        case copy(SpanReuse.Record, firstPacket: Int64, ended: Bool)
    }
    /// Where the spans of the last encoding are kept, if anywhere.
    private let spans: SpanReuse?
    /// Input frames before the session's first: the lead.
    private var leadFrames: Int64 = 0
    /// Zeros after the last sound of the open span, not yet given to its encoder.
    private var pendingZeros: Int64 = 0
    private var zeros: [Float] = []
    /// The packets the spans planned so far end at: where the next span may start.
    private var plannedPackets: Int64 = 0
    /// How many spans were encoded and how many packets were emitted as silence; tests read them.
    private(set) var encodedSpanCount = 0
    private(set) var silentPacketCount: Int64 = 0

    /// Zero runs shorter than this inside one block are taken as part of the sound around them.
    private static var shortestSilence: Int { 64 }

    /// Starts two encoder threads (one on one core) named `threadName`, for a file of exactly
    /// `frameCount` of the session's frames; `emit` is called with each packet of the file in
    /// order, on the caller's thread. With `spans`, unchanged spans of its last encoding are
    /// copied, and this encoding's spans kept.
    init(
        grid: Grid,
        frameCount: Frames,
        channels: Int,
        skipsSilence: Bool,
        path: String,
        threadName: String,
        reusing spans: SpanReuse? = nil,
        makeEncoder: @escaping @Sendable () throws(AudioError) -> Encoder,
        emit: @escaping (Packet) throws(AudioError) -> Void
    ) {
        self.grid = grid
        self.promise = FramePromise(path: path, frameCount: frameCount.count, wording: .file)
        self.channels = channels
        self.skipsSilence = skipsSilence
        self.path = path
        self.emit = emit
        self.spans = spans
        spans?.beginEncoding()
        workers = SpanWorkers(
            count: max(1, min(2, ProcessInfo.processInfo.activeProcessorCount)),
            channels: channels,
            name: threadName,
            preRollPackets: grid.preRollPackets,
            frameSize: grid.frameSize,
            makeEncoder: makeEncoder
        )
    }

    deinit {
        if !workersStopped { workers.stop() }
    }

    /// Takes the first `frames` frames of interleaved `samples`.
    func write(_ samples: [Float], frames: Int) throws(AudioError) {
        precondition(
            samples.count >= frames * channels,
            "write(_:frames:) was given fewer samples than frames × channels"
        )
        try promise.checkRoom(for: Int64(frames))
        try samples.withUnsafeBufferPointer { (buffer) throws(AudioError) in try take(buffer, frames: frames) }
        promise.record(Int64(frames))
    }

    /// Takes `frames` frames of digital silence.
    func writeSilence(frames: Frames) throws(AudioError) {
        try promise.checkRoom(for: frames.count)
        try takeZeros(frames.count)
        promise.record(frames.count)
    }

    /// Takes `frames` zeros before the session, which the file holds but no promise counts.
    func writeLead(frames: Int64) throws(AudioError) {
        precondition(promise.written == 0, "the lead goes before the session's first frame")
        leadFrames += frames
        try takeZeros(frames)
    }

    /// Takes `frames` frames of interleaved `buffer`, splitting sound from digital silence.
    private func take(_ buffer: UnsafeBufferPointer<Float>, frames: Int) throws(AudioError) {
        if skipsSilence {
            var index = 0
            while index < frames {
                let start = index
                while index < frames, isSilent(buffer, frame: index) { index += 1 }
                if index > start { try silence(Int64(index - start)) }
                guard index < frames else { break }
                // The sound runs to its last sounding frame before a silence long enough to count.
                let soundStart = index
                var last = index
                index += 1
                while index < frames, index - last <= Self.shortestSilence {
                    if !isSilent(buffer, frame: index) { last = index }
                    index += 1
                }
                index = last + 1
                try sound(UnsafeBufferPointer(rebasing: buffer[(soundStart * channels)..<(index * channels)]))
            }
        } else {
            try sound(UnsafeBufferPointer(rebasing: buffer[0..<(frames * channels)]))
        }
        try drain(waiting: false)
    }

    private func takeZeros(_ frames: Int64) throws(AudioError) {
        if skipsSilence {
            try silence(frames)
        } else {
            if zeros.isEmpty { zeros = [Float](repeating: 0, count: 16_384 * channels) }
            var remaining = frames
            while remaining > 0 {
                let chunk = Int(min(remaining, 16_384))
                try zeros.withUnsafeBufferPointer { (buffer) throws(AudioError) in
                    try sound(UnsafeBufferPointer(rebasing: buffer[0..<(chunk * channels)]))
                }
                remaining -= Int64(chunk)
            }
        }
        try drain(waiting: false)
    }

    /// Ends the last span, emits the silent packets after it up to ``Grid/totalPackets``, waits for
    /// the workers and stops them.
    ///
    /// - Throws: ``AudioError`` with code `cannotWrite` unless exactly the promised frames were
    ///   written, `cannotEncode` when an encoder failed or gave other packets than planned.
    func finish() throws(AudioError) {
        try promise.checkKept()
        if openSpan != nil { try endSpan(feedingZeros: pendingZeros) }
        steps.append(.silence(upTo: grid.totalPackets))
        try drain(waiting: true)
        workers.stop()
        workersStopped = true
        guard nextPacket == grid.totalPackets else {
            throw AudioError(
                .cannotEncode,
                path: path,
                reason: "the file has \(nextPacket) packets of the \(grid.totalPackets) it needs"
            )
        }
        do {
            try spans?.endEncoding()
        } catch {
            throw AudioError(.cannotWrite, path: path, reason: "cannot keep its spans: \(error)")
        }
    }

    private func isSilent(_ buffer: UnsafeBufferPointer<Float>, frame: Int) -> Bool {
        let base = frame * channels
        for channel in 0..<channels where buffer[base + channel] != 0 { return false }
        return true
    }

    /// Takes `frames` frames of digital silence.
    private func silence(_ frames: Int64) throws(AudioError) {
        position += frames
        guard openSpan != nil else { return }
        pendingZeros += frames
        if pendingZeros >= grid.joinGap { try endSpan(feedingZeros: grid.trailingZeros) }
    }

    /// Takes interleaved frames that make sound (or may: silence inside a span).
    private func sound(_ samples: UnsafeBufferPointer<Float>) throws(AudioError) {
        let frames = Int64(samples.count / channels)
        let size = grid.frameSize
        if openSpan == nil {
            // Start on the packet boundary at or before the sound, after the packets already planned.
            let start = max(position / size * size, plannedPackets * size)
            guard start <= position else {
                throw AudioError(
                    .cannotEncode,
                    path: path,
                    reason: "sound at frame \(position) falls inside packets already planned (up to \(plannedPackets))"
                )
            }
            steps.append(.silence(upTo: start / size))
            let firstPacket = start / size
            if let record = spans?.unchangedSpan(at: firstPacket, startingAt: start - leadFrames) {
                steps.append(.copy(record, firstPacket: firstPacket, ended: false))
                openSpan = OpenSpan(firstPacket: firstPacket, source: .copied(record), digest: Hasher())
            } else {
                let span = workers.startSpan(at: firstPacket)
                steps.append(.span(span, end: nil))
                openSpan = OpenSpan(
                    firstPacket: firstPacket,
                    source: .encoded(span),
                    digest: spans.map { _ in Hasher() }
                )
                encodedSpanCount += 1
            }
            pendingZeros = position - start
        }
        feedZeros(pendingZeros)
        pendingZeros = 0
        if var span = openSpan {
            if case .encoded(let encoding) = span.source { workers.encode(samples, in: encoding) }
            span.digest?.combine(bytes: UnsafeRawBufferPointer(samples))
            span.fed += frames
            openSpan = span
        }
        position += frames
    }

    private func feedZeros(_ count: Int64) {
        guard var span = openSpan, count > 0 else { return }
        if case .encoded(let encoding) = span.source { workers.encodeZeros(count, in: encoding) }
        // A run of zeros goes into the digest as one number, its frame count negated, rather than
        // sample by sample. Its 8 bytes end in 0xFFFFFFFF, which as a 32-bit float is a NaN, and
        // no sample of the mix is one (it is finite): so no run of samples hashes like a run of
        // zeros, and a span whose silence inside is longer or shorter differs.
        span.digest?.combine(-count)
        span.fed += count
        openSpan = span
    }

    /// Gives the open span's encoder `count` of the pending zeros and has it flushed; a copied
    /// span is checked against the encoding it is copied from.
    private func endSpan(feedingZeros count: Int64) throws(AudioError) {
        feedZeros(min(count, pendingZeros))
        pendingZeros = 0
        guard let span = openSpan else { return }
        let packetCount = grid.keptPackets(fed: span.fed)
        let end = SpanEnd(packetCount: packetCount, fed: span.fed, digest: span.digest?.finalize() ?? 0)
        switch span.source {
        case .encoded(let encoding):
            workers.finish(encoding)
            if case .span(let last, nil)? = steps.last, last === encoding {
                steps[steps.count - 1] = .span(encoding, end: end)
            }
        case .copied(let record):
            guard record.fed == end.fed, record.digest == end.digest else {
                throw AudioError(
                    .cannotEncode,
                    path: path,
                    reason: spans?.noteMismatch(at: span.firstPacket) ?? "a span was copied without kept spans"
                )
            }
            steps[steps.count - 1] = .copy(record, firstPacket: span.firstPacket, ended: true)
        }
        plannedPackets = span.firstPacket + packetCount
        openSpan = nil
    }

    /// Emits what can be emitted, in order: silent packets, and the packets spans have made; with
    /// `waiting`, waits for ended spans to finish.
    private func drain(waiting: Bool) throws(AudioError) {
        while let step = steps.first {
            switch step {
            case .silence(let packet):
                while nextPacket < packet {
                    try emitPacket(.silent)
                    silentPacketCount += 1
                }
            case .span(let span, let spanEnd):
                let end = spanEnd.map { span.firstPacket + $0.packetCount } ?? Int64.max
                var finished = false
                repeat {
                    let taken = try workers.take(from: span, waiting: waiting && spanEnd != nil)
                    for packet in taken.packets where nextPacket < end {
                        try keep(packet[...])
                        try emitPacket(.encoded(packet[...]))
                    }
                    finished = taken.finished
                } while waiting && spanEnd != nil && !finished
                guard finished, let spanEnd else { return }
                guard nextPacket == end else {
                    throw AudioError(
                        .cannotEncode,
                        path: path,
                        reason:
                            "the encoder gave \(nextPacket - span.firstPacket) packets for a span that needs \(spanEnd.packetCount)"
                    )
                }
                spans?.endSpan(
                    at: span.firstPacket,
                    fed: spanEnd.fed,
                    digest: spanEnd.digest,
                    packetCount: spanEnd.packetCount
                )
            case .copy(let record, let firstPacket, let ended):
                guard ended, let spans else { return }
                do {
                    try spans.copy(record, at: firstPacket) { (packet) throws(AudioError) in
                        try emitPacket(.encoded(packet))
                    }
                } catch {
                    switch error {
                    case .reading(let error):
                        throw AudioError(.cannotWrite, path: path, reason: "cannot read its kept spans: \(error)")
                    case .handling(let error): throw error
                    }
                }
            }
            steps.removeFirst()
        }
    }

    /// Keeps a packet an encoder made, when spans are kept.
    private func keep(_ packet: ArraySlice<UInt8>) throws(AudioError) {
        do {
            try spans?.keep(packet)
        } catch {
            throw AudioError(.cannotWrite, path: path, reason: "cannot keep its spans: \(error)")
        }
    }

    private func emitPacket(_ packet: Packet) throws(AudioError) {
        guard nextPacket < grid.totalPackets else {
            throw AudioError(
                .cannotEncode,
                path: path,
                reason: "more than the \(grid.totalPackets) packets the file needs"
            )
        }
        try emit(packet)
        nextPacket += 1
    }
}
