internal import Foundation
internal import SessionKit
internal import SessionTimeline

/// The renders a server makes: each request's files in the output folder under its id, one
/// render per id however many ask at once, at most ``ServerSettings/maximumRenders`` running and
/// as many again waiting, the rest refused at once (503, to be tried again).
actor RenderService {
    /// What a render request came to.
    enum Outcome: Sendable, Equatable {
        /// The files were made for this request (201).
        case rendered
        /// The files were there already, made for an identical request (200).
        case existing
    }

    /// Why a render was not made.
    enum Refusal: Error, Sendable, Equatable {
        /// Every slot and place in the queue is taken: try again later (503).
        case busy
        /// The render took longer than the server's deadline (503).
        case timedOut(Duration)
        /// The render failed: the lines to answer with, and whether the request is at fault (422)
        /// or the server (500; 503 when trying again may work).
        case failed(lines: [String], status: Int)
    }

    private let settings: ServerSettings
    private let metrics: ServerMetrics
    /// The running or queued render of each id, which every request for that id awaits.
    private var flights: [String: Flight] = [:]
    /// Renders running now.
    private var running = 0
    /// Renders waiting for a slot, first come first served.
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(settings: ServerSettings, metrics: ServerMetrics) {
        self.settings = settings
        self.metrics = metrics
    }

    /// The files of render `id`: the audio, its timeline and its captions.
    nonisolated func files(of id: String, format: AudioFileFormat) -> RenderFiles {
        RenderFiles(folder: settings.outputFolder, id: id, format: format)
    }

    /// Renders `request` unless its files exist, sharing a render already running for the same id.
    ///
    /// The caller waits at most `deadline` (queueing included); a render that no caller waits for
    /// any more is cancelled, and writes nothing.
    func render(_ request: RenderRequest, id: String, deadline: Duration) async throws -> Outcome {
        let files = files(of: id, format: request.format)
        if files.allExist { return .existing }
        if flights[id] == nil {
            guard flights.count < 2 * settings.maximumRenders else { throw Refusal.busy }
            let token = UUID()
            let task = Task {
                do {
                    self.finish(id, token, .success(try await self.run(request, files: files)))
                } catch {
                    self.finish(id, token, .failure(error))
                }
            }
            flights[id] = Flight(token: token, task: task)
            metrics.setInFlight(flights.count)
        }
        let waiter = UUID()
        let timer = Task {
            try await Task.sleep(for: deadline)
            self.release(id, waiter, Refusal.timedOut(deadline))
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { flights[id]?.waiters[waiter] = $0 }
    }

    /// Render `id` (the flight `token`) ended: every caller still waiting has its result.
    private func finish(_ id: String, _ token: UUID, _ result: Result<Outcome, any Error>) {
        guard let flight = flights[id], flight.token == token else { return }
        flights[id] = nil
        metrics.setInFlight(flights.count)
        for waiter in flight.waiters.values { waiter.resume(with: result) }
    }

    /// One caller of render `id` waits no more, and is answered with `error`: when it was the
    /// last, the render is cancelled (it stops at its next block, writing nothing) and forgotten.
    private func release(_ id: String, _ waiter: UUID, _ error: Refusal) {
        guard var flight = flights[id], let continuation = flight.waiters.removeValue(forKey: waiter) else { return }
        continuation.resume(throwing: error)
        if flight.waiters.isEmpty {
            flight.task.cancel()
            flights[id] = nil
        } else {
            flights[id] = flight
        }
        metrics.setInFlight(flights.count)
    }

    /// A render running or queued, and the callers waiting for it.
    private struct Flight {
        /// Told apart from a later render of the same id, once this one is cancelled.
        let token: UUID
        let task: Task<Void, Never>
        var waiters: [UUID: CheckedContinuation<Outcome, any Error>] = [:]
    }

    /// The clip of `text` in the server's voice, from the cache or synthesized into it: its MP3
    /// bytes, as seed 000's `POST /tts/synthesize` answers (base64 in JSON).
    func speech(of text: String) async throws -> Data {
        let prepared: PreparedClips
        do {
            prepared = try await settings.pipeline.prepare(texts: [text])
        } catch {
            throw Refusal.failed(lines: error.lines, status: Self.status(of: error))
        }
        metrics.countClips(cached: prepared.alreadyCached, synthesized: prepared.synthesized)
        let problems = prepared.problemLines()
        guard problems.isEmpty, let entry = prepared.entries.first else {
            throw Refusal.failed(lines: problems, status: prepared.failed > 0 ? 503 : 500)
        }
        // Our own cache's file, but a cache folder is shared: its size is capped before reading.
        let size = (try? FileManager.default.attributesOfItem(atPath: entry.path)[.size] as? NSNumber)?.intValue ?? -1
        guard (0...Self.largestClipBytes).contains(size), let bytes = FileManager.default.contents(atPath: entry.path)
        else {
            throw Refusal.failed(
                lines: ["\(entry.key).mp3: the cached clip cannot be read, or is over 64 MiB"],
                status: 500
            )
        }
        return bytes
    }

    /// The largest clip `/tts/synthesize` answers with: 64 MiB, hours of speech.
    static let largestClipBytes = 64 << 20

    private func run(_ request: RenderRequest, files: RenderFiles) async throws -> Outcome {
        await takeSlot()
        defer { giveSlot() }
        // Cancelled while queued: no caller waits any more.
        guard !Task.isCancelled else { throw CancellationError() }
        var pipeline = settings.pipeline
        pipeline.plan.seed = request.seed
        pipeline.output = OutputSettings(
            format: request.format,
            bitrate: request.bitrate,
            quality: request.quality,
            audio: .path(files.audio),
            timeline: .path(files.timeline)
        )
        pipeline.output.captions = .path(files.captions)
        let problems = pipeline.problems
        guard problems.isEmpty else {
            throw Refusal.failed(lines: problems.map { "options: \($0)" }, status: 422)
        }
        do {
            let outcome = try await pipeline.run(request.script)
            metrics.countClips(cached: outcome.clips.alreadyCached, synthesized: outcome.clips.synthesized)
        } catch {
            throw Refusal.failed(lines: error.lines, status: Self.status(of: error))
        }
        return .rendered
    }

    /// The status a failed render answers with: the request's fault (422), a fault that trying
    /// again may mend (503), or the server's (500).
    private static func status(of error: SessionError) -> Int {
        switch error.code {
        case .invalidScript, .invalidSetting, .missingSound, .unknownVoice, .lateSpeech, .positionOutOfRange,
            .missingClips:
            422
        case .providerUnavailable, .cancelled:
            503
        default:
            500
        }
    }

    private func takeSlot() async {
        if running < settings.maximumRenders {
            running += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func giveSlot() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}

/// Where a render's files are: `FOLDER/ID.EXT`, `FOLDER/ID.timeline.json`, `FOLDER/ID.vtt`.
struct RenderFiles: Sendable {
    var audio: String
    var timeline: String
    var captions: String

    init(folder: String, id: String, format: AudioFileFormat) {
        audio = "\(folder)/\(id).\(format.fileExtension)"
        timeline = "\(folder)/\(id).timeline.json"
        captions = "\(folder)/\(id).vtt"
    }

    /// Whether all three were written: a render commits them together or not at all.
    var allExist: Bool {
        [audio, timeline, captions].allSatisfy { FileManager.default.fileExists(atPath: $0) }
    }
}
