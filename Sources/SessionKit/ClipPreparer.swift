public import Foundation
internal import SessionAudio
internal import SessionTimeline

extension ClipCache {
    /// What the cache holds for an entry.
    public enum EntryState: Sendable, Equatable {
        /// No file.
        case missing
        /// A clip that measures as audio.
        case usable
        /// A file that is not a usable clip, and why.
        case corrupt(String)
    }

    /// Whether the entry's file exists and measures as audio (a scan of its frame headers, fast).
    public func state(of entry: Entry) -> EntryState {
        guard FileManager.default.fileExists(atPath: entry.path) else { return .missing }
        do {
            _ = try AudioFileDecoder.measure(path: entry.path)
            return .usable
        } catch {
            return .corrupt(error.reason)
        }
    }

    /// Stores `audio` as the clip for `entry`.
    ///
    /// The bytes go to a temporary file in the cache folder, are decoded in full (they must be
    /// MPEG audio with at least one frame: an HTML error page, an empty body or bad base64 never
    /// reach the cache), flushed to disk and renamed over the key's file in one step. Concurrent
    /// writers and a kill mid-write never leave a half-written entry under a key.
    public func store(_ audio: Data, for entry: Entry) throws(SpeechError) {
        let file = AtomicFile(destination: entry.path, removingStaleTemporaries: false)
        do {
            try audio.write(to: URL(fileURLWithPath: file.temporaryPath))
        } catch {
            file.discard()
            throw SpeechError("cannot write into the cache folder \(directory): \(FileProblem.describe(error, path: directory))")
        }
        do {
            _ = try AudioFileDecoder.verifyMPEG(path: file.temporaryPath)
            try file.commit()
        } catch {
            file.discard()
            throw SpeechError("the audio received (\(audio.count) bytes) is not a usable MP3: \(error.reason)")
        }
    }

    /// Creates the cache folder if needed and checks that it can be written.
    public func prepareFolder() throws(SessionError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw SessionError(.cannotWrite, "Cannot create the cache folder \(directory): \(FileProblem.describe(error, path: directory))")
        }
        guard FileManager.default.isWritableFile(atPath: directory) else {
            throw SessionError(.cannotWrite, "Cannot write into the cache folder \(directory): permission denied")
        }
    }
}

/// A clip that could not be made.
public struct ClipFailure: Sendable, Equatable, CustomStringConvertible {
    /// The clip.
    public let entry: ClipCache.Entry
    /// Why.
    public let reason: String

    /// `Cannot synthesize "text…" (key …): reason`.
    public var description: String {
        "Cannot synthesize \(quoted(entry.text)) (key \(entry.key)): \(reason)"
    }
}

/// Where a `prepare` run has got to.
public struct PrepareProgress: Sendable {
    /// Clips the texts need, each key once.
    public var needed: Int
    /// Clips finished so far: found in the cache, synthesized or failed.
    public var done: Int
    /// Clips that were already in the cache.
    public var alreadyCached: Int
    /// Clips synthesized and stored.
    public var synthesized: Int
    /// Corrupt cache entries synthesized again.
    public var replaced: Int
    /// Clips that could not be made.
    public var failures: [ClipFailure]
    /// Time since the run started.
    public var elapsed: Duration

    /// `8 clips needed: 3 already cached, 5 synthesized, 0 failed, in 2.10 s`.
    public var summary: String {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let replacedText = replaced > 0 ? " (\(replaced) corrupt entries replaced)" : ""
        return "\(needed) clips needed: \(alreadyCached) already cached, \(synthesized) synthesized\(replacedText), \(failures.count) failed, in \(String(format: "%.2f", seconds)) s"
    }
}

/// Makes sure the cache holds a clip for every text: finds what is there, synthesizes the rest
/// with a provider, several at a time, and stores each one safely.
public struct ClipPreparer: Sendable {
    public let cache: ClipCache
    public let provider: any SpeechProvider
    public let voice: String
    public let speed: Double
    public let jobs: Int

    public init(cache: ClipCache, provider: any SpeechProvider, voice: String, speed: Double, jobs: Int? = nil) {
        self.cache = cache
        self.provider = provider
        self.voice = voice
        self.speed = speed
        self.jobs = max(1, jobs ?? provider.defaultJobs)
    }

    /// Prepares the clips of `texts` (duplicates count once).
    ///
    /// A cache entry that exists but does not measure as audio is treated as missing and
    /// synthesized again; `warn` is told. Temporaries left by killed runs are removed first.
    /// - Parameter progress: called after each clip finishes, on an arbitrary thread.
    /// - Throws: ``SessionError`` only if the cache folder cannot be created or written; clips
    ///   that fail are in the result's ``PrepareProgress/failures``.
    public func prepare(
        texts: [String],
        warn: @Sendable (String) -> Void = { _ in },
        progress: @Sendable (PrepareProgress) -> Void = { _ in }
    ) async throws(SessionError) -> PrepareProgress {
        let clock = ContinuousClock()
        let started = clock.now
        var seen = Set<String>()
        let entries = texts.map { cache.entry(text: $0, voice: voice, speed: speed) }.filter { seen.insert($0.key).inserted }
        var state = PrepareProgress(needed: entries.count, done: 0, alreadyCached: 0, synthesized: 0, replaced: 0, failures: [], elapsed: .zero)

        // Measuring is a scan of each file: spread it over the cores.
        let states = await withTaskGroup(of: (Int, ClipCache.EntryState).self) { group in
            for (index, entry) in entries.enumerated() {
                group.addTask { [cache] in (index, cache.state(of: entry)) }
            }
            var states = [ClipCache.EntryState](repeating: .missing, count: entries.count)
            for await (index, state) in group { states[index] = state }
            return states
        }
        var toMake: [ClipCache.Entry] = []
        for (entry, entryState) in zip(entries, states) {
            switch entryState {
            case .usable:
                state.alreadyCached += 1
                state.done += 1
            case .missing:
                toMake.append(entry)
            case .corrupt(let reason):
                warn("Cache entry \(entry.key).mp3 for \(quoted(entry.text)) is corrupt (\(reason)); synthesizing it again")
                state.replaced += 1
                toMake.append(entry)
            }
        }
        state.elapsed = clock.now - started
        progress(state)
        guard !toMake.isEmpty else { return state }

        try cache.prepareFolder()
        AtomicFile.removeStaleTemporaries(in: cache.directory)
        let outcomes = await withTaskGroup(of: (ClipCache.Entry, SpeechError?).self) { group in
            var pending = toMake.makeIterator()
            var outcomes: [String: SpeechError?] = [:]
            func startNext() -> Bool {
                guard let entry = pending.next() else { return false }
                group.addTask { [provider, cache, voice, speed] in
                    if Interruption.isRequested { return (entry, SpeechError("interrupted")) }
                    do throws(SpeechError) {
                        let audio = try await provider.synthesize(text: entry.text, voice: voice, speed: speed)
                        try cache.store(audio, for: entry)
                        return (entry, nil)
                    } catch {
                        return (entry, error)
                    }
                }
                return true
            }
            for _ in 0..<jobs where !startNext() { break }
            while let (entry, error) = await group.next() {
                outcomes[entry.key] = error
                if let error {
                    state.failures.append(ClipFailure(entry: entry, reason: error.reason))
                } else {
                    state.synthesized += 1
                }
                state.done += 1
                state.elapsed = clock.now - started
                progress(state)
                _ = startNext()
            }
            return outcomes
        }
        // Failures in the order of the texts, whatever order they finished in.
        let order = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.key, $0) })
        state.failures.sort { order[$0.entry.key, default: 0] < order[$1.entry.key, default: 0] }
        precondition(outcomes.count == toMake.count)
        state.elapsed = clock.now - started
        return state
    }
}
