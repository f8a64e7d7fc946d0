import Dispatch
internal import SessionAudio
internal import SessionTimeline

/// A narration item's clip, opened and read on another thread a few blocks ahead of the mixer:
/// decoding, resampling and leveling speech use the second core while the mixer, the limiter and
/// the writer use the first.
///
/// The blocks are the clip stream's own, in order, so the mix is the same bit for bit. An error
/// opening or reading the clip is kept and thrown where the mixer reaches it, as if it had been
/// read there. At most ``blocksAhead`` blocks of ``blockFrames`` wait; ending this value (an
/// error elsewhere, the mix finished) stops the reading thread and closes the clip.
final class ClipReadAhead {
    /// Frames per block the reading thread hands over.
    static let blockFrames = 8_192
    /// Blocks read ahead at most: 32,768 frames, about 1.4 s at 24 kHz.
    static let blocksAhead = 4

    private let shared: Shared
    private let channels: Int
    /// The block being handed out, and how far.
    private var block: [Float] = []
    private var offset = 0
    private var ending: Shared.Ending?

    /// Starts reading the stream `open` makes on `queue` (serial: clips read ahead one after the
    /// other, in the order they are started).
    init(channels: Int, queue: DispatchQueue, open: @escaping @Sendable () throws(AudioError) -> ClipStream) {
        let shared = Shared()
        self.shared = shared
        self.channels = channels
        queue.async {
            // A reader gone before its turn came: the clip is not even opened.
            if shared.isCancelled { return }
            let stream: ClipStream
            do throws(AudioError) {
                stream = try open()
            } catch {
                shared.end(.failure(error))
                return
            }
            var buffer: [Float] = []
            while shared.waitForRoom() {
                do throws(AudioError) {
                    let frames = try stream.read(into: &buffer, maximumFrames: Self.blockFrames)
                    guard frames > 0 else {
                        shared.end(.finished(leveling: stream.leveling))
                        return
                    }
                    // A block of its own, never `Array(buffer[...])`: a slice over the whole
                    // buffer becomes an array sharing its storage, which this thread then writes
                    // into on its next read while the mixer still reads it (the thread sanitizer
                    // saw it, optimized).
                    var block: [Float] = []
                    block.reserveCapacity(frames * channels)
                    block.append(contentsOf: buffer[0..<(frames * channels)])
                    shared.hand(block)
                } catch {
                    shared.end(.failure(error))
                    return
                }
            }
        }
    }

    deinit {
        shared.cancel()
    }

    /// What the speech leveler took off the clip, once it has all been read; `nil` before, or
    /// without leveling.
    var leveling: LimiterActivity? {
        if case .finished(let leveling) = ending { return leveling }
        return nil
    }

    /// Waits for the reading to end after the clip's last frame was read; returns what the speech
    /// leveler took off the clip (`nil` without leveling).
    func finish() throws(AudioError) -> LimiterActivity? {
        var rest: [Float] = []
        while try read(into: &rest, maximumFrames: Self.blockFrames) > 0 {}
        return leveling
    }

    /// Writes up to `maximumFrames` of the clip's next frames into `samples` from index 0, waiting
    /// for the reading thread if it is behind; returns 0 at the clip's end.
    func read(into samples: inout [Float], maximumFrames: Int) throws(AudioError) -> Int {
        while offset == block.count {
            switch ending {
            case .failure(let error): throw error
            case .finished: return 0
            case nil: break
            }
            switch shared.take() {
            case .block(let next): (block, offset) = (next, 0)
            case .end(let end): ending = end
            }
        }
        let frames = min(maximumFrames, (block.count - offset) / channels)
        let count = frames * channels
        if samples.count < count { samples = [Float](repeating: 0, count: count) }
        ClipStream.take(count, from: &block, at: &offset, into: &samples)
        return frames
    }

    /// What the two threads share: the blocks read and not yet taken, and how the reading ended.
    private final class Shared: @unchecked Sendable {
        // @unchecked: `state` is reached only under its lock; the semaphores are thread-safe.
        enum Ending {
            case finished(leveling: LimiterActivity?)
            case failure(AudioError)
        }
        enum Next {
            case block([Float])
            case end(Ending)
        }

        private let state = Locked<(blocks: [[Float]], ending: Ending?, cancelled: Bool)>(([], nil, false))
        /// Room for blocks, and blocks (or the end) ready. Both start at 0 (libdispatch refuses to
        /// free a semaphore left under its starting value): the room is signalled in.
        private let room = DispatchSemaphore(value: 0)
        private let ready = DispatchSemaphore(value: 0)

        init() {
            for _ in 0..<ClipReadAhead.blocksAhead { room.signal() }
        }

        /// Whether the reader is gone.
        var isCancelled: Bool { state.withLock { $0.cancelled } }

        /// Waits until a block may be read; `false` once the reader is gone.
        func waitForRoom() -> Bool {
            room.wait()
            return !isCancelled
        }

        func hand(_ block: [Float]) {
            state.withLock { $0.blocks.append(block) }
            ready.signal()
        }

        func end(_ ending: Ending) {
            state.withLock { $0.ending = ending }
            ready.signal()
        }

        /// The next block, or how the reading ended once every block is taken; waits for it.
        func take() -> Next {
            ready.wait()
            return state.withLock { state in
                if !state.blocks.isEmpty {
                    room.signal()
                    return .block(state.blocks.removeFirst())
                }
                // Only the end signals without a block, once: it is the last thing taken.
                return .end(state.ending!)
            }
        }

        /// The reader is gone: the reading thread stops at its next block.
        func cancel() {
            state.withLock { $0.cancelled = true }
            room.signal()
        }
    }
}
