internal import Foundation
public import SessionTimeline
public import SessionAudio

/// Everything besides the script that decides what a render produces.
public struct RenderOptions: Sendable, Equatable {
    /// The voice every clip is spoken in; part of each clip's cache key.
    public static let defaultVoice = "espeak:en-us"
    /// The range of speaking speeds accepted (the OpenAI speech API's range).
    public static let speedRange: ClosedRange<Double> = 0.25...4.0
    /// The range of output sample rates accepted.
    public static let sampleRateRange: ClosedRange<Int> = 8_000...384_000
    /// The range of output channel counts accepted.
    public static let channelRange: ClosedRange<Int> = 1...8

    /// The clip cache folder.
    public var cacheDirectory: String
    /// The voice id, such as `espeak:en-us`.
    public var voice: String
    /// The speaking speed, 1.0 being normal.
    public var speed: Double
    /// The seed for the interjections' random choices; `nil` draws one (and records it in the timeline).
    public var seed: UInt64?
    /// The output sample rate; `nil` takes the rate of the first segment's clip.
    public var sampleRate: Int?
    /// The output channel count.
    public var channels: Int
    /// A file to use as the closing bell; `nil` uses the built-in bell.
    public var bellPath: String?
    /// How samples are stored in the output.
    public var sampleFormat: SampleFormat
    /// Whether a missing or unusable clip leaves its slot silent (with a warning) instead of failing.
    public var allowMissing: Bool

    public init(
        cacheDirectory: String = ClipCache.defaultDirectory(),
        voice: String = RenderOptions.defaultVoice,
        speed: Double = 1.0,
        seed: UInt64? = nil,
        sampleRate: Int? = nil,
        channels: Int = 1,
        bellPath: String? = nil,
        sampleFormat: SampleFormat = .pcm16,
        allowMissing: Bool = false
    ) {
        self.cacheDirectory = cacheDirectory
        self.voice = voice
        self.speed = speed
        self.seed = seed
        self.sampleRate = sampleRate
        self.channels = channels
        self.bellPath = bellPath
        self.sampleFormat = sampleFormat
        self.allowMissing = allowMissing
    }

    /// One line per option whose value cannot be used; empty if all are fine.
    public var problems: [String] {
        var problems: [String] = []
        if !speed.isFinite || !Self.speedRange.contains(speed) {
            problems.append("--speed: \(speed) is outside \(Self.speedRange.lowerBound)…\(Self.speedRange.upperBound)")
        }
        if let sampleRate, !Self.sampleRateRange.contains(sampleRate) {
            problems.append("--sample-rate: \(sampleRate) Hz is outside \(Self.sampleRateRange.lowerBound)…\(Self.sampleRateRange.upperBound) Hz")
        }
        if !Self.channelRange.contains(channels) {
            problems.append("--channels: \(channels) is outside \(Self.channelRange.lowerBound)…\(Self.channelRange.upperBound)")
        }
        if voice.isEmpty {
            problems.append("--voice: the voice id is empty")
        }
        return problems
    }
}

/// Reads script files, naming the file in every problem it reports.
public enum ScriptFile {
    /// Reads and validates the script at `path`.
    /// - Throws: ``SessionError`` with one line per problem: `path: location: rule`.
    public static func load(_ path: String) throws(SessionError) -> Script {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw SessionError(.unreadableScript, "\(path): cannot read the script: \(FileProblem.describe(error, path: path))")
        }
        do {
            return try Script(json: data)
        } catch {
            throw SessionError(.invalidScript, lines: error.problems.map { "\(path): \($0)" })
        }
    }
}

extension ScriptFile {
    /// The script files `paths` name: files as given, folders as every `*.json` file directly in
    /// them, sorted by name.
    /// - Throws: ``SessionError`` for a path that does not exist or a folder that cannot be read.
    public static func scriptPaths(in paths: [String]) throws(SessionError) -> [String] {
        var result: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw SessionError(.unreadableScript, "\(path): no such file or folder")
            }
            guard isDirectory.boolValue else {
                result.append(path)
                continue
            }
            do {
                let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".json") }.sorted()
                result += names.map { (path as NSString).appendingPathComponent($0) }
            } catch {
                throw SessionError(.unreadableScript, "\(path): cannot list the folder: \(FileProblem.describe(error, path: path))")
            }
        }
        return result
    }
}

/// Turns a script into a timeline: finds its clips in the cache, measures them, makes the
/// random choices and places everything in frames. Decodes no audio.
public enum SessionPlanner {
    /// Plans the script at `scriptPath` with `options`.
    public static func plan(scriptAt scriptPath: String, options: RenderOptions, warn: (String) -> Void = { _ in }) throws(SessionError) -> Timeline {
        try plan(script: ScriptFile.load(scriptPath), options: options, warn: warn)
    }

    /// Plans `script` with `options`.
    ///
    /// Every text the script can need must be in the cache: all missing clips are reported
    /// together, before any audio is opened. Then the clips actually chosen are measured
    /// (exact decoded lengths), and unusable ones are again reported together. With
    /// ``RenderOptions/allowMissing``, a missing or unusable chosen clip is left out instead,
    /// its slot silent, and `warn` is told.
    public static func plan(script: Script, options: RenderOptions, warn: (String) -> Void = { _ in }) throws(SessionError) -> Timeline {
        let optionProblems = options.problems
        guard optionProblems.isEmpty else { throw SessionError(.invalidOption, lines: optionProblems) }

        let cache = ClipCache(directory: options.cacheDirectory)
        if !options.allowMissing {
            let missing = cache.missing(script.allTexts, voice: options.voice, speed: options.speed)
            guard missing.isEmpty else {
                throw SessionError(.missingClips, lines: missing.map(ClipCache.describeMissing))
            }
        }

        let seed = options.seed ?? SeededGenerator.randomSeed()
        let interjections = script.resolveInterjections(seed: seed)
        let entries = (script.segments.map(\.text) + interjections.map(\.text)).map {
            cache.entry(text: $0, voice: options.voice, speed: options.speed)
        }
        var measured: [String: Result<SourcedClip, AudioError>] = [:]
        for entry in entries where measured[entry.key] == nil {
            do {
                let measurement = try AudioFileDecoder.measure(path: entry.path)
                measured[entry.key] = .success(SourcedClip(key: entry.key, source: AudioSourceInfo(
                    path: entry.path, sampleRate: measurement.sampleRate,
                    frameCount: Frames(measurement.frameCount), gapless: measurement.gapless)))
            } catch {
                measured[entry.key] = .failure(error)
            }
        }
        var problems: [String] = []
        var reported = Set<String>()
        let clips: [SourcedClip?] = entries.map { entry in
            switch measured[entry.key] {
            case .success(let clip): return clip
            case .failure(let error):
                if reported.insert(entry.key).inserted {
                    problems.append("Clip for \(quoted(entry.text)) (key \(entry.key)): \(error)")
                }
                return nil
            case nil: preconditionFailure("every entry is measured")
            }
        }
        if options.allowMissing {
            for problem in problems { warn(problem + "; its slot stays silent") }
        } else if !problems.isEmpty {
            throw SessionError(.unusableClips, lines: problems)
        }

        guard let rateHertz = options.sampleRate ?? clips[0]?.source.sampleRate ?? clips.lazy.compactMap({ $0 }).first?.source.sampleRate else {
            throw SessionError(.invalidOption, "No clip is available to take the sample rate from; choose one with --sample-rate")
        }
        guard let sampleRate = SampleRate(rateHertz), RenderOptions.sampleRateRange.contains(rateHertz) else {
            throw SessionError(.invalidOption, "The first segment's clip is at \(rateHertz) Hz, outside \(RenderOptions.sampleRateRange.lowerBound)…\(RenderOptions.sampleRateRange.upperBound) Hz; choose a rate with --sample-rate")
        }
        let bell = try measureBell(options.bellPath, sampleRate: sampleRate)
        return Timeline.plan(
            script: script, seed: seed, sampleRate: sampleRate, channels: options.channels,
            segmentClips: Array(clips[..<script.segments.count]),
            interjections: interjections,
            interjectionClips: Array(clips[script.segments.count...]),
            bell: bell)
    }

    private static func measureBell(_ path: String?, sampleRate: SampleRate) throws(SessionError) -> AudioSourceInfo {
        guard let path else {
            return AudioSourceInfo(path: nil, sampleRate: sampleRate.hertz,
                                   frameCount: Frames(BuiltinBell.frameCount(sampleRate: sampleRate.hertz)), gapless: false)
        }
        do {
            let measurement = try AudioFileDecoder.measure(path: path)
            return AudioSourceInfo(path: path, sampleRate: measurement.sampleRate,
                                   frameCount: Frames(measurement.frameCount), gapless: measurement.gapless)
        } catch {
            throw SessionError(.unusableBell, "Bell: \(error)")
        }
    }
}

/// Plain words for file-system errors from Foundation.
enum FileProblem {
    static func describe(_ error: any Error, path: String) -> String {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) { return "no such file" }
        if isDirectory.boolValue { return "it is a directory" }
        if !FileManager.default.isReadableFile(atPath: path) { return "permission denied" }
        return (error as NSError).localizedDescription
    }
}
