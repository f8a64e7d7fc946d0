package import Foundation
internal import SessionAudio
package import SessionTimeline

/// Piper, a neural voice that runs offline: its Python engine in worker processes that each load
/// a model once and speak clip after clip, each clip stored as every clip
/// is, MP3 with the gapless tag at the model's rate (22,050 Hz for `medium` voices).
///
/// Voices are ``Voice/piper(model:)`` for a model `NAME.onnx` on the search path
/// (``PiperInstallation``). Speed maps to Piper's length scale: the model's own scale ÷ speed.
/// The pauses of ``SpeechPacing`` are put between sentences and paragraphs inside the clip.
public struct PiperSpeechProvider: SpeechProvider {
    public let name = "piper"
    /// One worker per core: a batch keeps every core speaking.
    public var defaultJobs: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }
    /// Where the engine and models are.
    package let installation: PiperInstallation
    private let pools: PiperPools

    public init(installation: PiperInstallation = .located()) {
        self.installation = installation
        self.pools = PiperPools(installation: installation)
    }

    /// ``Voice``'s own rules, and the model on the search path (the default voice passes,
    /// installed or not).
    public func checkVoice(_ voice: Voice) throws(SessionError) {
        try voice.check()
        try installation.checkModel(of: voice)
    }

    /// Finds `voice`'s model and starts `concurrency` workers for it, waiting for the first to load.
    /// - Throws: ``SessionError`` (`voiceUnavailable`) when the engine or model is missing or does not load.
    public func prepareVoice(_ voice: Voice, concurrency: Int) async throws(SessionError) {
        _ = try await pools.pool(for: voice).start(count: concurrency)
    }

    /// Stops every worker (each ends when it finishes the clip it holds); the next clip starts them again.
    public func releaseVoices() async {
        await pools.removeAll()
    }

    public func speak(_ request: SpeechRequest) async throws(SessionError) -> SpeechResult {
        let (audio, mp3) = try await clip(request)
        var result = SpeechResult(audio: mp3, marks: audio.marks(of: SentenceSplitter.paragraphs(of: request.text)))
        if result.marks == nil {
            result.marksUnavailable =
                "Piper voice \(request.voice.id) gives no word timing: "
                + (audio.marksUnavailable ?? "its word spans do not fit the sentences spoken")
        }
        return result
    }

    /// Piper's speech for `request`, and the MP3 the cache stores of it (which decodes to exactly its frames).
    package func clip(_ request: SpeechRequest) async throws(SessionError) -> (audio: PiperAudio, mp3: Data) {
        let audio = try await speech(request)
        // LAME encodes on a pool's thread (the pipeline's, when it asks).
        return try await BlockingPool.currentOrShared.run { () throws(SessionError) in
            do throws(AudioError) {
                return (
                    audio, Data(try SpeechClip.mp3(audio.samples, sampleRate: audio.sampleRate.hertz, voice: "Piper"))
                )
            } catch {
                throw SessionError(.providerFailed, error.reason, underlyingError: error)
            }
        }
    }

    /// Piper's speech for `request` as it came from the engine: 16-bit mono at the model's rate.
    package func speech(_ request: SpeechRequest) async throws(SessionError) -> PiperAudio {
        let pool = try await pools.pool(for: request.voice)
        let sampleRate = try await pool.start(count: 1)
        let pauses = request.pacing.frames(at: sampleRate)
        let bridged = PiperBridge.Request(
            paragraphs: SentenceSplitter.paragraphs(of: request.text),
            lengthScale: 1 / request.speed,
            sentencePauseFrames: pauses.sentence.count,
            paragraphPauseFrames: pauses.paragraph.count
        )
        let limit = ClipLengthLimit(text: request.text, speed: request.speed, pacing: request.pacing)
        return try await pool.speak(bridged, maximumFrames: Int(limit.frames(at: sampleRate).count)).get()
    }

    /// The process ids of `voice`'s running workers: for tests that kill one mid-batch.
    package func workerProcessIdentifiers(for voice: Voice) async -> [Int32] {
        guard let pool = try? await pools.pool(for: voice) else { return [] }
        return await pool.processIdentifiers
    }
}

/// Speech as Piper spoke it: 16-bit mono samples at the model's rate.
package struct PiperAudio: Sendable, Equatable {
    package let samples: [Int16]
    package let sampleRate: SampleRate
    /// Per sentence, each whitespace token's `[start, end)` frames, as the bridge gave them.
    package let words: [[[Int]?]]?
    /// Why the bridge gave no word timing.
    package let marksUnavailable: String?

    /// The audio from the bridge's little-endian bytes.
    init(
        littleEndianSamples bytes: Data,
        sampleRate: SampleRate,
        words: [[[Int]?]]? = nil,
        marksUnavailable: String? = nil
    ) {
        self.samples = SpeechClip.samples(littleEndian: bytes)
        self.sampleRate = sampleRate
        self.words = words
        self.marksUnavailable = marksUnavailable
    }

    /// The words and sentences of `paragraphs` (the request's, as ``SentenceSplitter`` parted
    /// it) where the bridge's spans put them, placed where they are heard (``WordPlacement``);
    /// `nil` when the bridge gave none or its spans do not match the sentences' tokens.
    package func marks(of paragraphs: [[String]]) -> SpeechMarks? {
        let sentences = paragraphs.flatMap { $0 }
        guard let words, words.count == sentences.count else { return nil }
        var spoken: [WordPlacement.Sentence] = []
        for (sentence, spans) in zip(sentences, words) {
            let tokens = sentence.split(whereSeparator: \.isWhitespace).map(String.init)
            guard tokens.count == spans.count else { return nil }
            var placed: [WordPlacement.Word] = []
            for (token, span) in zip(tokens, spans) {
                guard let span else { continue }
                guard span.count == 2 else { return nil }
                placed.append(WordPlacement.Word(text: token, start: span[0], end: span[1]))
            }
            spoken.append(WordPlacement.Sentence(text: sentence, words: placed))
        }
        return WordPlacement.marks(of: spoken, in: samples, sampleRate: sampleRate)
    }

    /// Its length in frames.
    package var frameCount: Frames { Frames(Int64(samples.count)) }
}

/// One worker pool per model, made when the model is first asked for and kept while the provider lives.
private actor PiperPools {
    let installation: PiperInstallation
    private var pools: [Voice: PiperWorkerPool] = [:]

    init(installation: PiperInstallation) {
        self.installation = installation
    }

    func pool(for voice: Voice) throws(SessionError) -> PiperWorkerPool {
        if let pool = pools[voice] { return pool }
        let pool = PiperWorkerPool(installation: installation, model: try installation.model(for: voice))
        pools[voice] = pool
        return pool
    }

    func removeAll() {
        pools.removeAll()
    }
}
