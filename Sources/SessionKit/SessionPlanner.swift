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

    public init(
        cacheDirectory: String = ClipCache.defaultDirectory(),
        voice: String = RenderOptions.defaultVoice,
        speed: Double = 1.0,
        seed: UInt64? = nil,
        sampleRate: Int? = nil,
        channels: Int = 1,
        bellPath: String? = nil,
        sampleFormat: SampleFormat = .pcm16
    ) {
        self.cacheDirectory = cacheDirectory
        self.voice = voice
        self.speed = speed
        self.seed = seed
        self.sampleRate = sampleRate
        self.channels = channels
        self.bellPath = bellPath
        self.sampleFormat = sampleFormat
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

/// Turns a script into a timeline: finds its clips in the cache, measures them, makes the
/// random choices and places everything in frames. Decodes no audio.
public enum SessionPlanner {
    /// Plans the script at `scriptPath` with `options`.
    public static func plan(scriptAt scriptPath: String, options: RenderOptions) throws(SessionError) -> Timeline {
        try plan(script: ScriptFile.load(scriptPath), options: options)
    }

    /// Plans `script` with `options`.
    ///
    /// Every text the script can need must be in the cache: all missing clips are reported
    /// together, before any audio is opened. Then the clips actually chosen are measured
    /// (exact decoded lengths), and unusable ones are again reported together.
    public static func plan(script: Script, options: RenderOptions) throws(SessionError) -> Timeline {
        let optionProblems = options.problems
        guard optionProblems.isEmpty else { throw SessionError(.invalidOption, lines: optionProblems) }

        let cache = ClipCache(directory: options.cacheDirectory)
        let missing = cache.missing(script.allTexts, voice: options.voice, speed: options.speed)
        guard missing.isEmpty else {
            throw SessionError(.missingClips, lines: missing.map(ClipCache.describeMissing))
        }

        let seed = options.seed ?? SeededGenerator.randomSeed()
        let interjections = script.resolveInterjections(seed: seed)
        let entries = (script.segments.map(\.text) + interjections.map(\.text)).map {
            cache.entry(text: $0, voice: options.voice, speed: options.speed)
        }
        var measured: [String: SourcedClip] = [:]
        var problems: [String] = []
        for entry in entries where measured[entry.key] == nil {
            do {
                let measurement = try AudioFileDecoder.measure(path: entry.path)
                measured[entry.key] = SourcedClip(key: entry.key, source: AudioSourceInfo(
                    path: entry.path, sampleRate: measurement.sampleRate,
                    frameCount: Frames(measurement.frameCount), gapless: measurement.gapless))
            } catch {
                problems.append("Clip for \(quoted(entry.text)) (key \(entry.key)): \(error)")
                measured[entry.key] = SourcedClip(key: entry.key, source: AudioSourceInfo(path: nil, sampleRate: 0, frameCount: .zero, gapless: false))
            }
        }
        guard problems.isEmpty else { throw SessionError(.unusableClips, lines: problems) }
        let clips = entries.map { measured[$0.key]! }

        let rateHertz = options.sampleRate ?? clips[0].source.sampleRate
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
