internal import Foundation
internal import SessionKit
package import SessionTimeline

/// The renders a server makes: each request's files in the output folder under its id, one
/// render per id however many ask at once, at most ``ServerSettings/maximumRenders`` running and
/// as many again waiting, the rest refused at once (503, to be tried again).
package actor RenderService {
    /// What a render request came to.
    package enum Outcome: Sendable, Equatable {
        /// The files were made for this request (201).
        case rendered
        /// The files were there already, made for an identical request (200).
        case existing
    }

    /// Why a render was not made.
    package enum Refusal: Error, Sendable, Equatable {
        /// Every slot and place in the queue is taken: try again later (503).
        case busy
        /// The render failed: the lines to answer with, and whether the request is at fault (422)
        /// or the server (500; 503 when trying again may work).
        case failed(lines: [String], status: Int)
    }

    private let settings: ServerSettings
    /// The running or queued render of each id, which every request for that id awaits.
    private var flights: [String: Task<Outcome, any Error>] = [:]
    /// Renders running now.
    private var running = 0
    /// Renders waiting for a slot, first come first served.
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init(settings: ServerSettings) {
        self.settings = settings
    }

    /// How many renders are running or queued.
    package var inFlight: Int { flights.count }

    /// The files of render `id`: the audio, its timeline and its captions.
    package nonisolated func files(of id: String, format: AudioFileFormat) -> RenderFiles {
        RenderFiles(folder: settings.outputFolder, id: id, format: format)
    }

    /// Renders `request` unless its files exist, sharing a render already running for the same id.
    package func render(_ request: RenderRequest, id: String) async throws -> Outcome {
        let files = files(of: id, format: request.format)
        if files.allExist { return .existing }
        if let flight = flights[id] { return try await flight.value }
        guard flights.count < 2 * settings.maximumRenders else { throw Refusal.busy }
        let flight = Task { try await self.run(request, files: files) }
        flights[id] = flight
        defer { flights[id] = nil }
        return try await flight.value
    }

    private func run(_ request: RenderRequest, files: RenderFiles) async throws -> Outcome {
        await takeSlot()
        defer { giveSlot() }
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
            _ = try await pipeline.run(request.script)
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
package struct RenderFiles: Sendable {
    package var audio: String
    package var timeline: String
    package var captions: String

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
