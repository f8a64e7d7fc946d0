import Foundation

/// An encoder of one span of sound (``SilenceSplicer``): fed interleaved floats, flushed once,
/// it gives back whole packets (MP3 frames, AAC access units), each `frameSize` frames long.
/// It is used on one worker thread at a time.
protocol SpanEncoder: AnyObject, SendableMetatype {
    /// Encodes `frames` frames of interleaved `samples`.
    func encode(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(AudioError)
    /// Encodes what is buffered, padding the last packet with zeros, and ends the stream.
    func flush() throws(AudioError)
    /// The whole packets made since the last call, in order.
    func takePackets() throws(AudioError) -> [[UInt8]]
}

/// Encodes spans of sound on worker threads, each span with its own encoder, while the thread
/// that renders goes on: spans are independent by construction, so two cores encode two spans at
/// once and the packets are written in order as they come back.
///
/// A new span goes to the worker with the least left to encode. Memory stays bounded: a worker
/// holds at most ``queuedFrameLimit`` frames of samples before the renderer waits for it (enough
/// for the renderer to run ahead of one long span while the other worker encodes the one before),
/// and a span's packets wait only while the span before it is being finished (compressed, a
/// twentieth of the samples).
final class SpanWorkers<Encoder: SpanEncoder>: @unchecked Sendable {
    // @unchecked: `queues`, `queuedFrames`, `running` and every span's `output` are reached only while holding
    // `condition`; a span's encoder and its pre-roll count only on its worker's thread.

    /// One span of sound: its encoder (used on its worker's thread only) and the packets it made.
    final class Span: @unchecked Sendable {
        /// The file's packet the span's first packet is.
        let firstPacket: Int64
        fileprivate let worker: Int
        fileprivate var encoder: Encoder?
        /// Packets made and not yet taken, whether the encoder is flushed, and any failure.
        fileprivate var output: (packets: [[UInt8]], finished: Bool, failure: AudioError?) = ([], false, nil)
        /// The encoder's pre-roll packets not yet made: they are dropped, not taken.
        fileprivate var preRollPacketsLeft: Int

        fileprivate init(firstPacket: Int64, worker: Int, preRollPackets: Int) {
            self.firstPacket = firstPacket
            self.worker = worker
            self.preRollPacketsLeft = preRollPackets
        }
    }

    private enum Task {
        case samples(Span, [Float], frames: Int)
        case zeros(Span, frames: Int64)
        case finish(Span)
        case stop
    }

    private let condition = NSCondition()
    private var queues: [[Task]]
    /// Frames of samples and zeros each worker has been given and not yet encoded.
    private var queuedFrames: [Int64]
    private var running: Int
    /// How many workers there are (``queues``'s count, which may only be read under the lock).
    private let workerCount: Int
    private let makeEncoder: @Sendable () throws(AudioError) -> Encoder
    private let channels: Int
    /// The packets of zeros a span's encoder encodes before the span, and their frames.
    private let preRoll: (packets: Int, frames: Int64)
    /// Zeros to encode from, only read: 16,384 frames.
    private let zeros: [Float]
    /// Frames of samples a worker holds before the renderer waits for it: 2 MiB of mono floats.
    static var queuedFrameLimit: Int64 { 1 << 19 }

    /// Starts `count` threads named `name 1`, `name 2`, … . Each span's encoder first encodes
    /// `preRollPackets` packets of `frameSize` zeros, whose packets are dropped
    /// (``SilenceSplicer/Grid/preRollPackets`` says why).
    init(
        count: Int,
        channels: Int,
        name: String,
        preRollPackets: Int,
        frameSize: Int64,
        makeEncoder: @escaping @Sendable () throws(AudioError) -> Encoder
    ) {
        queues = Array(repeating: [], count: count)
        queuedFrames = Array(repeating: 0, count: count)
        running = count
        workerCount = count
        self.channels = channels
        self.makeEncoder = makeEncoder
        preRoll = (preRollPackets, Int64(preRollPackets) * frameSize)
        zeros = [Float](repeating: 0, count: 16_384 * channels)
        for index in 0..<count {
            let thread = Thread { [self] in work(index) }
            thread.name = "\(name) \(index + 1)"
            thread.start()
        }
    }

    /// Starts a span on the worker with the least left to encode.
    func startSpan(at firstPacket: Int64) -> Span {
        condition.lock()
        let worker = queuedFrames.indices.min { queuedFrames[$0] < queuedFrames[$1] } ?? 0
        condition.unlock()
        return Span(firstPacket: firstPacket, worker: worker, preRollPackets: preRoll.packets)
    }

    /// Gives `span`'s encoder a copy of interleaved `samples`.
    func encode(_ samples: UnsafeBufferPointer<Float>, in span: Span) {
        submit(.samples(span, Array(samples), frames: samples.count / channels), to: span.worker)
    }

    /// Gives `span`'s encoder `frames` frames of zeros.
    func encodeZeros(_ frames: Int64, in span: Span) {
        guard frames > 0 else { return }
        submit(.zeros(span, frames: frames), to: span.worker)
    }

    /// Flushes `span`'s encoder once it has encoded what it was given.
    func finish(_ span: Span) {
        submit(.finish(span), to: span.worker)
    }

    /// Takes the packets `span` has made; with `waiting`, waits until there is one or the span is finished.
    func take(from span: Span, waiting: Bool) throws(AudioError) -> (packets: [[UInt8]], finished: Bool) {
        condition.lock()
        defer { condition.unlock() }
        while waiting, span.output.packets.isEmpty, !span.output.finished { condition.wait() }
        if let failure = span.output.failure { throw failure }
        let packets = span.output.packets
        span.output.packets.removeAll()
        return (packets, span.output.finished)
    }

    /// Stops the workers once they have done what they were given, and waits for them.
    func stop() {
        // Not `queues.indices`: reading the array outside the lock races with a worker taking
        // its next task (the thread sanitizer saw it).
        for worker in 0..<workerCount { submit(.stop, to: worker) }
        condition.lock()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    private func submit(_ task: Task, to worker: Int) {
        condition.lock()
        while queuedFrames[worker] >= Self.queuedFrameLimit { condition.wait() }
        queues[worker].append(task)
        queuedFrames[worker] += Self.frames(in: task)
        condition.broadcast()
        condition.unlock()
    }

    private func work(_ worker: Int) {
        while true {
            condition.lock()
            while queues[worker].isEmpty { condition.wait() }
            let task = queues[worker].first!
            condition.unlock()
            let span: Span
            do {
                switch task {
                case .stop:
                    condition.lock()
                    running -= 1
                    condition.broadcast()
                    condition.unlock()
                    return
                case .samples(let target, let samples, let frames):
                    span = target
                    try samples.withUnsafeBufferPointer { (buffer) throws(AudioError) in
                        try encoder(of: span).encode(buffer, frames: frames)
                    }
                case .zeros(let target, let frames):
                    span = target
                    try encodeZeros(frames, with: encoder(of: span))
                case .finish(let target):
                    span = target
                    try encoder(of: span).flush()
                }
                try collect(span, finished: { if case .finish = task { true } else { false } }())
                done(task, worker)
            } catch {
                done(task, worker)
                let failed: Span? =
                    switch task {
                    case .samples(let target, _, _), .zeros(let target, _), .finish(let target): target
                    case .stop: nil
                    }
                condition.lock()
                failed?.output.failure = failed?.output.failure ?? error
                failed?.output.finished = true
                condition.broadcast()
                condition.unlock()
            }
        }
    }

    /// Takes a finished task off `worker`'s queue, making room for the renderer.
    private func done(_ task: Task, _ worker: Int) {
        condition.lock()
        queues[worker].removeFirst()
        queuedFrames[worker] -= Self.frames(in: task)
        condition.broadcast()
        condition.unlock()
    }

    private static func frames(in task: Task) -> Int64 {
        switch task {
        case .samples(_, _, let frames): Int64(frames)
        case .zeros(_, let frames): frames
        case .finish, .stop: 0
        }
    }

    /// `span`'s encoder, made on first use and given its pre-roll.
    private func encoder(of span: Span) throws(AudioError) -> Encoder {
        if let encoder = span.encoder { return encoder }
        let encoder = try makeEncoder()
        span.encoder = encoder
        try encodeZeros(preRoll.frames, with: encoder)
        return encoder
    }

    private func encodeZeros(_ frames: Int64, with encoder: Encoder) throws(AudioError) {
        let block = Int64(zeros.count / channels)
        var remaining = frames
        while remaining > 0 {
            let chunk = Int(min(remaining, block))
            try zeros.withUnsafeBufferPointer { (buffer) throws(AudioError) in
                try encoder.encode(buffer, frames: chunk)
            }
            remaining -= Int64(chunk)
        }
    }

    /// Moves the whole packets `span`'s encoder has made to its output, less its pre-roll's.
    private func collect(_ span: Span, finished: Bool) throws(AudioError) {
        var packets = try span.encoder?.takePackets() ?? []
        let dropped = min(span.preRollPacketsLeft, packets.count)
        packets.removeFirst(dropped)
        span.preRollPacketsLeft -= dropped
        guard !packets.isEmpty || finished else { return }
        condition.lock()
        span.output.packets += packets
        if finished { span.output.finished = true }
        condition.broadcast()
        condition.unlock()
    }
}
