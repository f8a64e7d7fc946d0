public import Foundation
internal import SessionAudio
package import SessionTimeline

/// Piper, a neural voice that runs offline: its Python engine in worker processes that each load
/// a model once and speak clip after clip (``PiperWorkerPool``), each clip stored as every clip
/// is, MP3 with the gapless tag at the model's rate (22,050 Hz for `medium` voices).
///
/// Voice ids are `piper:NAME` for a model `NAME.onnx` on the search path (``PiperInstallation``).
/// Speed maps to Piper's length scale: the model's own scale ÷ speed. The pauses of
/// ``SpeechPacing`` are put between sentences and paragraphs inside the clip.
public struct PiperSpeechProvider: PacedSpeechProvider {
    public let name = "piper"
    /// One worker per core: a batch keeps every core speaking.
    public var defaultJobs: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }
    /// Where the engine and models are.
    public let installation: PiperInstallation
    private let pools: PiperPools

    public init(installation: PiperInstallation = .located()) {
        self.installation = installation
        self.pools = PiperPools(installation: installation)
    }

    /// Finds `voice`'s model and starts `concurrency` workers for it, waiting for the first to load.
    /// - Throws: ``SessionError`` (`voiceUnavailable`) when the engine or model is missing or does not load.
    public func prepareVoice(_ voice: String, concurrency: Int) async throws(SessionError) {
        _ = try await pools.pool(forVoice: voice).start(count: concurrency)
    }

    /// Stops every worker (each ends when it finishes the clip it holds); the next clip starts them again.
    public func releaseVoices() async {
        await pools.removeAll()
    }

    public func synthesize(
        text: String,
        voice: String,
        speed: Double,
        pacing: SpeechPacing
    ) async throws(SessionError) -> Data {
        try await clip(text: text, voice: voice, speed: speed, pacing: pacing).mp3
    }

    /// Piper's speech for `text`, and the MP3 the cache stores of it (which decodes to exactly its frames).
    package func clip(
        text: String,
        voice: String,
        speed: Double,
        pacing: SpeechPacing = .standard
    ) async throws(SessionError) -> (audio: PiperAudio, mp3: Data) {
        let audio = try await speak(text: text, voice: voice, speed: speed, pacing: pacing)
        do {
            return (audio, Data(try SpeechClip.mp3(audio.samples, sampleRate: audio.sampleRate.hertz, voice: "Piper")))
        } catch {
            throw SessionError(.providerFailed, error.reason, underlyingError: error)
        }
    }

    /// Piper's speech for `text` as it came from the engine: 16-bit mono at the model's rate.
    package func speak(
        text: String,
        voice: String,
        speed: Double,
        pacing: SpeechPacing = .standard
    ) async throws(SessionError) -> PiperAudio {
        let pool = try await pools.pool(forVoice: voice)
        let sampleRate = try await pool.start(count: 1)
        let pauses = pacing.frames(at: sampleRate)
        let request = PiperBridge.Request(
            paragraphs: SentenceSplitter.paragraphs(of: text),
            lengthScale: 1 / speed,
            sentencePauseFrames: pauses.sentence.count,
            paragraphPauseFrames: pauses.paragraph.count
        )
        let limit = ClipLengthLimit(text: text, speed: speed, pacing: pacing)
        return try await pool.speak(request, maximumFrames: Int(limit.frames(at: sampleRate).count)).get()
    }

    /// The process ids of `voice`'s running workers: for tests that kill one mid-batch.
    public func workerProcessIdentifiers(forVoice voice: String) async -> [Int32] {
        guard let pool = try? await pools.pool(forVoice: voice) else { return [] }
        return await pool.processIdentifiers
    }
}

/// Speech as Piper spoke it: 16-bit mono samples at the model's rate.
package struct PiperAudio: Sendable, Equatable {
    package let samples: [Int16]
    package let sampleRate: SampleRate

    /// The audio from the bridge's little-endian bytes.
    init(littleEndianSamples bytes: Data, sampleRate: SampleRate) {
        self.samples = SpeechClip.samples(littleEndian: bytes)
        self.sampleRate = sampleRate
    }

    /// Its length in frames.
    package var frameCount: Frames { Frames(Int64(samples.count)) }
}

/// One worker pool per model, made when the model is first asked for and kept while the provider lives.
private actor PiperPools {
    let installation: PiperInstallation
    private var pools: [String: PiperWorkerPool] = [:]

    init(installation: PiperInstallation) {
        self.installation = installation
    }

    func pool(forVoice voice: String) throws(SessionError) -> PiperWorkerPool {
        if let pool = pools[voice] { return pool }
        let pool = PiperWorkerPool(installation: installation, model: try installation.model(forVoice: voice))
        pools[voice] = pool
        return pool
    }

    func removeAll() {
        pools.removeAll()
    }
}
