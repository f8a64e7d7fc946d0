package import Foundation
internal import SessionAudio
package import SessionTimeline

extension ClipCache {
    /// Measures the entry's file: its exact decoded length, from a scan of its frame headers (fast).
    /// - Returns: `nil` if there is no file.
    /// - Throws: ``SessionError`` (`unusableClips`) for a file that is not a usable clip.
    package func measure(_ entry: Entry) throws(SessionError) -> AudioSourceInfo? {
        do {
            return try measureFile(entry)
        } catch {
            throw SessionError(.unusableClips, wrapping: error)
        }
    }

    func measureFile(_ entry: Entry) throws(AudioError) -> AudioSourceInfo? {
        guard try Self.checkEntry(entry) else { return nil }
        return AudioSourceInfo(try Self.checkedMP3(AudioFileDecoder.measure(path: entry.path), entry), path: entry.path)
    }

    /// Whether `entry` has a file, refusing one that is a symbolic link: the cache holds only
    /// files it wrote itself, and a link planted in a shared cache would have the render (and
    /// `queue`, which copies entries) read whatever it points at.
    static func checkEntry(_ entry: Entry) throws(AudioError) -> Bool {
        let kind: FileKind?
        do {
            kind = try FileSystem.kindOfItem(at: entry.path)
        } catch {
            // A cache folder that is not a folder has no entries; making it says what is wrong.
            if error == SystemError(code: ENOTDIR) { return false }
            throw AudioError(.cannotOpen, path: entry.path, reason: error.description)
        }
        if kind == .symbolicLink {
            throw AudioError(
                .cannotOpen,
                path: entry.path,
                reason: "the cache entry is a symbolic link; the cache holds only the files it stored"
            )
        }
        return kind != nil
    }

    /// `measurement` when it is of an MP3 file, as every cache entry is (an answer in AAC or MP2
    /// is stored as MP3): an entry in another format was not stored by this tool, and `queue`
    /// would ship it under a `.mp3` name.
    static func checkedMP3(_ measurement: AudioMeasurement, _ entry: Entry) throws(AudioError) -> AudioMeasurement {
        guard measurement.formatName == AudioFileDecoder.mp3FormatName else {
            throw AudioError(
                .unsupportedFormat,
                path: entry.path,
                reason: "the cache entry is \(measurement.formatName), not MP3, so it was not stored by render-session"
            )
        }
        return measurement
    }

    /// Stores `audio` as the clip for `entry` and returns its measurement.
    ///
    /// The bytes go to a temporary file in the cache folder, are decoded in full (they must be
    /// MPEG audio with at least one frame: an HTML error page, an empty body or bad base64 never
    /// reach the cache), flushed to disk and put in place under the key's name in one step.
    /// Concurrent writers and a kill mid-write never leave a half-written entry under a key.
    ///
    /// An entry another process stored meanwhile (several `prepare`s or batch shards sharing one
    /// cache) is kept, and measured instead: replacing it would change its modification time, which
    /// batch manifests hash, and make finished sessions render again.
    /// - Parameters:
    ///   - measuringLoudness: whether to keep the loudness the decode measured: in the result, and
    ///     in the clip's sidecar (written the same safe way, after the clip). Otherwise the
    ///     result's loudness is `nil` and no sidecar is written.
    ///   - replacingExisting: whether to replace an entry that is there (one found corrupt).
    ///   - lengthLimit: the longest the clip may be for its text (``ClipLengthLimit``): longer
    ///     audio is refused, never stored.
    ///   - marks: where the engine said the clip's words and sentences are: they must fit the
    ///     clip as decoded (its rate, every mark inside it and in order), or the clip is refused
    ///     (an engine's broken marks are a fault, not a guess to keep); kept in the clip's marks
    ///     sidecar (``marks(of:measured:)``), written after the clip.
    package func store(
        _ audio: Data,
        for entry: Entry,
        measuringLoudness: Bool = false,
        replacingExisting: Bool = false,
        lengthLimit: ClipLengthLimit? = nil,
        marks: SpeechMarks? = nil
    ) throws(SessionError) -> AudioSourceInfo {
        let file = AtomicFile(destination: entry.path, removingStaleTemporaries: false)
        try write(audio, to: file)
        let audio = try transcodingToMP3(audio, in: file, lengthLimit: lengthLimit)
        var measurement: AudioMeasurement
        do {
            measurement = try AudioFileDecoder.verifyMPEG(path: file.temporaryPath)
        } catch {
            file.discard()
            throw SessionError(
                .providerFailed,
                "the audio received (\(audio.count) bytes) is not a usable MP3: \(error.reason)",
                underlyingError: error
            )
        }
        if let lengthLimit, let problem = lengthLimit.problem(measurement.frameCount, at: measurement.sampleRate) {
            file.discard()
            throw SessionError(.providerFailed, problem)
        }
        if let problem = marks?.problem(forClipOf: measurement.frameCount, at: measurement.sampleRate) {
            file.discard()
            throw SessionError(.providerFailed, "the engine's marks do not fit its audio: \(problem)")
        }
        if replacingExisting {
            try file.commit()
        } else if try !file.commitUnlessExists() {
            let existing = try? measuringLoudness ? measureFileWithLoudness(entry) : measureFile(entry)
            if let existing {
                file.discard()
                return existing
            }
            // What is there is not a usable clip: this one replaces it.
            try file.commit()
        }
        if let marks { MarksSidecar(marks, of: ClipFingerprint(audio)).write(to: marksPath(forKey: entry.key)) }
        guard measuringLoudness else {
            measurement.loudness = nil
            return AudioSourceInfo(measurement, path: entry.path)
        }
        LoudnessSidecar(measurement, of: ClipFingerprint(audio)).write(to: loudnessPath(forKey: entry.key))
        return AudioSourceInfo(measurement, path: entry.path)
    }

    /// `audio`, written to `file`, as the cache stores it: an answer in AAC or ALAC (MP4, CAF,
    /// ADTS) or in MPEG audio layer 1 or 2 (MP2, which players given a `.mp3` file may refuse) is
    /// measured in full (refused when longer than `lengthLimit` allows, before it is decoded into
    /// memory), decoded and written over `file` as MP3, which is returned; anything else is
    /// returned as it is, for ``AudioFileDecoder/verifyMPEG(path:)`` to judge. The cache's files
    /// and the app's queue are MP3.
    private func transcodingToMP3(
        _ audio: Data,
        in file: AtomicFile,
        lengthLimit: ClipLengthLimit?
    ) throws(SessionError) -> Data {
        let kind =
            AudioFileDecoder.startsAsAAC(path: file.temporaryPath)
            ? "AAC" : AudioFileDecoder.isMPEGLayer1Or2(path: file.temporaryPath) ? "MP2" : nil
        guard let kind else { return audio }
        func unusable(_ error: AudioError) -> SessionError {
            file.discard()
            return SessionError(
                .providerFailed,
                "the audio received (\(audio.count) bytes) is not a usable \(kind) clip: \(error.reason)",
                underlyingError: error
            )
        }
        let measurement: AudioMeasurement
        do {
            measurement = try AudioFileDecoder.measure(path: file.temporaryPath)
        } catch {
            throw unusable(error)
        }
        if let lengthLimit, let problem = lengthLimit.problem(measurement.frameCount, at: measurement.sampleRate) {
            file.discard()
            throw SessionError(.providerFailed, problem)
        }
        let mp3: Data
        do {
            mp3 = Data(try SpeechClip.mp3(transcoding: file.temporaryPath))
        } catch {
            throw unusable(error)
        }
        try write(mp3, to: file)
        return mp3
    }

    /// Writes `audio` to `file`'s temporary path, discarding it if that fails.
    private func write(_ audio: Data, to file: AtomicFile) throws(SessionError) {
        do {
            try audio.write(to: URL(fileURLWithPath: file.temporaryPath))
        } catch {
            file.discard()
            throw SessionError(
                .cannotWrite,
                "cannot write into the cache folder \(directory): \(FileProblem.describe(error, path: directory))",
                underlyingError: error
            )
        }
    }

    /// Creates the cache folder if needed and checks that it can be written.
    package func prepareFolder() throws(SessionError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw SessionError(
                .cannotWrite,
                "Cannot create the cache folder \(directory): \(FileProblem.describe(error, path: directory))",
                underlyingError: error
            )
        }
        guard FileManager.default.isWritableFile(atPath: directory) else {
            throw SessionError(.cannotWrite, "Cannot write into the cache folder \(directory): permission denied")
        }
    }
}

/// Makes sure the cache holds a clip for every text: measures what is there, synthesizes the rest
/// with a provider (if there is one), several at a time, and stores each one safely.
///
/// Every clip is measured exactly once: a cached clip by a scan of its frames, a new one by the
/// full decode that checks it before it is stored. Planning reuses those measurements.
///
/// With `measureLoudness`, every clip's measurement carries its integrated loudness too: a cached
/// clip's comes from its sidecar (`{key}.loudness.json`) when that describes the clip's exact
/// bytes, else from a full decode that writes the sidecar; a new clip's from the decode that
/// checks it, which writes its sidecar as it is stored.
package struct ClipPreparer: Sendable {
    package let identity: ClipIdentity
    package let provider: (any SpeechProvider)?
    package let jobs: Int
    /// Whether measurements carry the clips' integrated loudness (through the cache's sidecars).
    package let measureLoudness: Bool

    /// - Parameters:
    ///   - provider: where missing clips come from; `nil` leaves them missing (offline).
    ///   - jobs: how many clips to synthesize at once (`nil`: the provider's default).
    ///   - measureLoudness: whether to measure each clip's integrated loudness (``ClipCache/measureWithLoudness(_:)``).
    package init(
        identity: ClipIdentity,
        provider: (any SpeechProvider)?,
        jobs: Int? = nil,
        measureLoudness: Bool = false
    ) {
        self.identity = identity
        self.provider = provider
        self.jobs = max(1, jobs ?? provider?.defaultJobs ?? 1)
        self.measureLoudness = measureLoudness
    }

    /// Prepares the clips of `texts` (duplicates count once).
    ///
    /// A cache entry that exists but does not measure as audio is treated as missing and
    /// synthesized again; `warn` is told. Temporaries left by killed runs are removed first.
    /// A cancelled task stops starting new clips; clips already stored stay in the cache.
    /// - Parameter progress: called after each clip finishes, on an arbitrary thread.
    /// - Parameter made: called as each clip synthesized ends, made or failed (not for a clip
    ///   found in the cache, nor one cancelled), before `progress`.
    /// - Throws: ``SessionError`` if the cache folder cannot be created or written, if the voice
    ///   cannot be had at all (`voiceUnavailable`, before any clip is made), or `cancelled`;
    ///   clips that fail are in the result.
    /// - Parameter replacing: keys whose entries are synthesized again and replace what is there
    ///   (clips that failed the speech check), as a corrupt entry is.
    package func prepare(
        texts: [String],
        replacing: Set<String> = [],
        warn: @Sendable (String) -> Void = { _ in },
        progress: @Sendable (PreparedClips) -> Void = { _ in },
        made: @Sendable (MadeClip) -> Void = { _ in }
    ) async throws(SessionError) -> PreparedClips {
        let clock = ContinuousClock()
        let started = clock.now
        var seen = Set<String>()
        let entries = texts.map(identity.entry(for:)).filter { seen.insert($0.key).inserted }
        var result = PreparedClips(entries: entries)

        // Measuring is a scan of each file (or a hash, or a decode, for loudness): spread it over the cores.
        let cache = identity.cache
        let measureLoudness = measureLoudness
        if measureLoudness { AtomicFile.removeStaleTemporaries(in: cache.directory) }
        let measured = await withTaskGroup(of: (Int, Result<AudioSourceInfo?, AudioError>).self) { group in
            for (index, entry) in entries.enumerated() {
                group.addTask {
                    let outcome = Result { () throws(AudioError) in
                        try measureLoudness ? cache.measureFileWithLoudness(entry) : cache.measureFile(entry)
                    }
                    return (index, outcome)
                }
            }
            var measured = [Result<AudioSourceInfo?, AudioError>](repeating: .success(nil), count: entries.count)
            for await (index, outcome) in group { measured[index] = outcome }
            return measured
        }
        var toMake: [ClipCache.Entry] = []
        // Keys whose entry is there but unusable: the new clip replaces it.
        var corrupt = Set<String>()
        for (entry, outcome) in zip(entries, measured) {
            if replacing.contains(entry.key), provider != nil {
                result.states[entry.key] = .missing
                corrupt.insert(entry.key)
                toMake.append(entry)
                continue
            }
            switch outcome {
            case .success(let measurement?):
                result.states[entry.key] = .ready(measurement)
                result.marks[entry.key] = cache.marks(of: entry, measured: measurement)
                result.alreadyCached += 1
                result.done += 1
            case .success(nil):
                result.states[entry.key] = .missing
                toMake.append(entry)
            case .failure(let error):
                if provider != nil {
                    warn(
                        "Cache entry \(entry.key).mp3 for \(quoted(entry.text)) is corrupt (\(error.reason)); synthesizing it again"
                    )
                    result.replaced += 1
                }
                result.states[entry.key] = .unusable(error.description)
                corrupt.insert(entry.key)
                toMake.append(entry)
            }
        }
        await recoverMarks(into: &result)
        result.elapsed = clock.now - started
        progress(result)
        guard let provider, !toMake.isEmpty else { return result }

        try cache.prepareFolder()
        // A voice that cannot be had is one error for the whole voice, found before any clip.
        try await provider.prepareVoice(identity.voice, concurrency: min(jobs, toMake.count))
        AtomicFile.removeStaleTemporaries(in: cache.directory)
        let (identity, corruptKeys) = (identity, corrupt)
        // Why a voice gave no words, each said once for the whole run.
        var saidUnavailable = Set<String>()
        typealias Made = (AudioSourceInfo, SpeechMarks?, String?)
        await withTaskGroup(of: (ClipCache.Entry, Duration, Result<Made, SessionError>).self) {
            group in
            var pending = toMake.makeIterator()
            func startNext() {
                guard !Task.isCancelled, let entry = pending.next() else { return }
                group.addTask {
                    let started = ContinuousClock.now
                    do throws(SessionError) {
                        try Task.checkCancellation(or: .cancelled)
                        let spoken = try await provider.speak(
                            SpeechRequest(
                                text: entry.text,
                                voice: identity.voice,
                                speed: identity.speed,
                                pacing: identity.pacing
                            )
                        )
                        let stored = try cache.store(
                            spoken.audio,
                            for: entry,
                            measuringLoudness: measureLoudness,
                            replacingExisting: corruptKeys.contains(entry.key),
                            lengthLimit: ClipLengthLimit(
                                text: entry.text,
                                speed: identity.speed,
                                pacing: identity.pacing
                            ),
                            marks: spoken.marks
                        )
                        // Read back from the sidecar: the clip kept may be another process's.
                        let marks = cache.marks(of: entry, measured: stored)
                        return (
                            entry, ContinuousClock.now - started, .success((stored, marks, spoken.marksUnavailable))
                        )
                    } catch {
                        return (entry, ContinuousClock.now - started, .failure(error))
                    }
                }
            }
            for _ in 0..<jobs { startNext() }
            while let (entry, elapsed, outcome) = await group.next() {
                switch outcome {
                case .success(let (measurement, marks, unavailable)):
                    made(MadeClip(key: entry.key, text: entry.text, elapsed: elapsed))
                    result.states[entry.key] = .ready(measurement)
                    result.marks[entry.key] = marks
                    if marks == nil { result.engineMarksNotes[entry.key] = unavailable }
                    result.synthesized += 1
                    if marks == nil, let unavailable, saidUnavailable.insert(unavailable).inserted { warn(unavailable) }
                case .failure(let error) where error.code == .cancelled:
                    break
                case .failure(let error):
                    result.states[entry.key] = .failed(error.description)
                    made(MadeClip(key: entry.key, text: entry.text, elapsed: elapsed, failure: error.description))
                }
                result.done += 1
                result.elapsed = clock.now - started
                progress(result)
                startNext()
            }
        }
        result.elapsed = clock.now - started
        if Task.isCancelled { throw SessionError.cancelled }
        return result
    }
}

extension ClipPreparer {
    /// Gives the embedded voice's cached clips that have no marks their marks back
    /// (``ClipCache/recoveredMarks(of:measured:language:speed:)``), a clip at a time on the
    /// blocking pool. Clips of other voices keep none: their engines' marks cannot be recovered
    /// from the sound alone.
    private func recoverMarks(into result: inout PreparedClips) async {
        guard case .espeak(let language) = identity.voice else { return }
        let missing = result.entries.compactMap { entry -> (ClipCache.Entry, AudioSourceInfo)? in
            guard result.marks[entry.key] == nil, case .ready(let measurement)? = result.states[entry.key],
                ClipLengthLimit(text: entry.text, speed: identity.speed, pacing: identity.pacing)
                    .problem(measurement.frameCount, at: measurement.sampleRate) == nil
            else { return nil }
            return (entry, measurement)
        }
        let (cache, speed) = (identity.cache, identity.speed)
        await withTaskGroup(of: (String, SpeechMarks?).self) { group in
            for (entry, measurement) in missing {
                group.addTask {
                    let marks = try? await BlockingPool.currentOrShared.run { () throws(SessionError) in
                        cache.recoveredMarks(of: entry, measured: measurement, language: language, speed: speed)
                    }
                    return (entry.key, marks ?? nil)
                }
            }
            for await (key, marks) in group { result.marks[key] = marks }
        }
    }
}

/// The longest a clip of a text may plausibly be: a provider's answer longer than this is not
/// speech of that text (a server looping, a wrong file) and is refused before it is stored.
///
/// The rule: `max(10 s, 0.5 s × characters) ÷ min(speed, 1)`, plus the longer of the two
/// ``SpeechPacing`` pauses for every place a voice may pause inside the clip (each `.`, `!`, `?`,
/// `;`, `:`, `…` and line break). Half a second a character is five times a slow reading
/// (10 characters a second), and the floor covers a voice's own silence around a word or two.
package struct ClipLengthLimit: Sendable, Equatable {
    /// The shortest limit, for very short texts.
    package static let floorSeconds = 10.0
    /// The allowance per character of text.
    package static let secondsPerCharacter = 0.5
    /// The characters after which a voice may pause (Piper's sentence and paragraph pauses).
    static let pauseMarks: Set<Character> = [".", "!", "?", ";", ":", "…", "\n"]

    /// The text the limit is for.
    package let text: String
    /// The limit, in seconds.
    package let seconds: Double

    /// The limit for `text` spoken at `speed` with `pacing`'s pauses.
    package init(text: String, speed: Double, pacing: SpeechPacing = .standard) {
        let characters = text.count
        let pauses = text.reduce(into: 0) { count, character in
            if Self.pauseMarks.contains(character) { count += 1 }
        }
        let speech = max(Self.floorSeconds, Self.secondsPerCharacter * Double(characters))
        let slowest = speed.isFinite && speed > 0 ? min(speed, 1) : 1
        let pause = max(pacing.sentencePauseSeconds, pacing.paragraphPauseSeconds, 0)
        self.text = text
        self.seconds = speech / slowest + Double(pauses) * (pause.isFinite ? pause : 0)
    }

    /// The limit in frames at `sampleRate`, rounded up.
    package func frames(at sampleRate: SampleRate) -> Frames {
        Frames(Int64((seconds * Double(sampleRate.hertz)).rounded(.up)))
    }

    /// Why a clip of `frameCount` frames at `sampleRate` is too long for the text, or `nil` if it is not.
    package func problem(_ frameCount: Frames, at sampleRate: SampleRate) -> String? {
        guard frameCount > frames(at: sampleRate) else { return nil }
        let length = sampleRate.seconds(of: frameCount)
        return
            "the audio received is \(Self.format(length)) s long, more than the \(Self.format(seconds)) s a clip of \(quoted(text)) (\(text.count) characters) may plausibly be"
    }

    private static func format(_ seconds: Double) -> String {
        String(format: "%.1f", seconds)
    }
}

extension Task where Success == Never, Failure == Never {
    /// Throws `error` if the current task is cancelled.
    static func checkCancellation(or error: SessionError) throws(SessionError) {
        if isCancelled { throw error }
    }
}

extension AudioSourceInfo {
    /// The source a measurement of the file at `path` describes.
    init(_ measurement: AudioMeasurement, path: String) {
        self.init(
            path: path,
            sampleRate: measurement.sampleRate,
            frameCount: measurement.frameCount,
            gapless: measurement.gapless,
            loudness: measurement.loudness,
            truePeak: measurement.truePeak,
            leveledLoudness: measurement.leveledLoudness,
            loudestMomentary: measurement.loudestMomentary,
            strikeFrames: measurement.strikeFrames
        )
        channelCount = measurement.channelCount
    }
}
