public import Foundation
public import SessionTimeline
internal import SessionAudio
internal import Crypto

/// How a batch renders a folder of scripts.
public struct BatchOptions: Sendable {
    /// Where `{id}.wav`, `{id}.timeline.json` and `manifest.json` go.
    public var outputFolder: String
    /// The render settings every session shares (their `seed` is ignored: see ``baseSeed``).
    public var render: RenderOptions
    /// The seed each session's seed is derived from (`SeededGenerator.derive(base:label:)`).
    public var baseSeed: UInt64
    /// How many versions of each script with different interjection draws; 0 renders one, unnumbered.
    public var variants: Int
    /// How many sessions render at once.
    public var jobs: Int
    /// Whether to render sessions whose output is up to date anyway.
    public var force: Bool

    public init(outputFolder: String, render: RenderOptions, baseSeed: UInt64 = 0, variants: Int = 0,
                jobs: Int = ProcessInfo.processInfo.activeProcessorCount, force: Bool = false) {
        self.outputFolder = outputFolder
        self.render = render
        self.baseSeed = baseSeed
        self.variants = variants
        self.jobs = max(1, jobs)
        self.force = force
    }
}

/// One session of a batch: a script, which variant, its seed and where it goes.
public struct BatchSession: Sendable {
    /// The output's name without extension: `reactivity-01` or `reactivity-01-v2`.
    public let name: String
    public let scriptPath: String
    public let script: Script
    public let seed: UInt64
    public let outputPath: String
    public let timelinePath: String
}

/// What became of a batch session.
public enum BatchResult: Sendable, Equatable {
    /// Rendered now.
    case rendered
    /// Its output was already up to date.
    case upToDate
    /// It failed, and why (one line per problem).
    case failed([String])
}

/// Renders many sessions, several at once, skipping those whose output is up to date.
///
/// `manifest.json` in the output folder records, per output, a SHA-256 of everything that
/// determines its bytes: the tool's version, the script file, the voice, speed and output
/// settings, the bell, the seed, and each clip's key, size and modification time. A session whose
/// hash matches and whose files exist is skipped. The manifest is rewritten (atomically) after each
/// session, so an interrupted batch resumes where it stopped. One failing session does not stop
/// the others. Batches into one output folder take turns: the second waits for the first's lock.
public enum BatchRenderer {
    /// The sessions of `library` under `options`, in script order, each script's variants together.
    public static func sessions(of library: ScriptLibrary, options: BatchOptions) -> [BatchSession] {
        library.entries.flatMap { entry -> [BatchSession] in
            let variants: [Int?] = options.variants > 0 ? (1...options.variants).map { $0 } : [nil]
            return variants.map { variant in
                let name = variant.map { "\(entry.script.id)-v\($0)" } ?? entry.script.id
                let folder = options.outputFolder as NSString
                return BatchSession(
                    name: name, scriptPath: entry.path, script: entry.script,
                    seed: SeededGenerator.derive(base: options.baseSeed, label: variant.map { "\(entry.script.id)#v\($0)" } ?? entry.script.id),
                    outputPath: folder.appendingPathComponent("\(name).wav"),
                    timelinePath: folder.appendingPathComponent("\(name).timeline.json"))
            }
        }
    }

    /// Renders `sessions`, at most `options.jobs` at a time.
    ///
    /// - Parameters:
    ///   - warn: told of clips left out under `allowMissing` and of an unreadable manifest.
    ///   - progress: called as each session finishes, with the results so far.
    /// - Throws: ``SessionError`` only if the output folder cannot be created or written.
    public static func run(
        _ sessions: [BatchSession],
        options: BatchOptions,
        warn: @escaping @Sendable (String) -> Void = { _ in },
        progress: @escaping @Sendable (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) async throws(SessionError) -> [BatchResult] {
        do {
            try FileManager.default.createDirectory(atPath: options.outputFolder, withIntermediateDirectories: true)
        } catch {
            throw SessionError(.cannotWrite, "Cannot create the output folder \(options.outputFolder): \(FileProblem.describe(error, path: options.outputFolder))")
        }
        try SessionRenderer.checkWritableFolder(of: (options.outputFolder as NSString).appendingPathComponent("manifest.json"))
        // One batch at a time per output folder: a second one waits, then finds the work done.
        let lock: FolderLock
        do {
            lock = try FolderLock(folder: options.outputFolder) {
                warn("another batch is writing \(options.outputFolder); waiting for it to finish")
            }
        } catch {
            throw SessionError(.cannotWrite, "\(error)")
        }
        defer { withExtendedLifetime(lock) {} }
        let manifest = Manifest(folder: options.outputFolder, warn: warn)

        var results = [BatchResult?](repeating: nil, count: sessions.count)
        await withTaskGroup(of: (Int, BatchResult).self) { group in
            var next = 0
            func startNext() {
                guard next < sessions.count else { return }
                let index = next
                next += 1
                group.addTask { (index, render(sessions[index], options: options, manifest: manifest, warn: warn)) }
            }
            for _ in 0..<options.jobs { startNext() }
            var done = 0
            while let (index, result) = await group.next() {
                results[index] = result
                done += 1
                progress(done, sessions.count)
                startNext()
            }
        }
        return results.map { $0 ?? .failed(["not run"]) }
    }

    private static func render(_ session: BatchSession, options: BatchOptions, manifest: Manifest, warn: @Sendable (String) -> Void) -> BatchResult {
        if Interruption.isRequested { return .failed(["interrupted"]) }
        var renderOptions = options.render
        renderOptions.seed = session.seed
        let hash = inputsHash(session, options: renderOptions)
        let outputs = [session.outputPath, session.timelinePath]
        if !options.force, manifest.hash(for: session.name) == hash, outputs.allSatisfy(FileManager.default.fileExists) {
            return .upToDate
        }
        do {
            let timeline = try SessionPlanner.plan(script: session.script, options: renderOptions) { warn("\(session.name): \($0)") }
            try SessionRenderer.render(timeline, to: session.outputPath, format: renderOptions.sampleFormat, timelinePath: session.timelinePath)
            manifest.record(session.name, hash: hash, seed: session.seed)
            return .rendered
        } catch {
            return .failed(error.lines)
        }
    }

    /// The SHA-256 of everything that determines a session's output bytes.
    static func inputsHash(_ session: BatchSession, options: RenderOptions) -> String {
        var hasher = SHA256()
        func add(_ line: String) { hasher.update(data: Data((line + "\n").utf8)) }
        add("render-session \(SessionKitVersion.current)")
        add("script \(fileDigest(session.scriptPath))")
        add("voice \(options.voice) speed \(options.speed) seed \(session.seed)")
        add("rate \(options.sampleRate.map(String.init) ?? "first-clip") channels \(options.channels) format \(options.sampleFormat.rawValue) allow-missing \(options.allowMissing)")
        add("bell \(options.bellPath.map { "\($0) \(fileDigest($0))" } ?? "builtin")")
        let cache = ClipCache(directory: options.cacheDirectory)
        for text in session.script.allTexts {
            let entry = cache.entry(text: text, voice: options.voice, speed: options.speed)
            let attributes = try? FileManager.default.attributesOfItem(atPath: entry.path)
            let size = (attributes?[.size] as? NSNumber)?.int64Value ?? -1
            let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            add("clip \(entry.key) \(size) \(modified)")
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    private static func fileDigest(_ path: String) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "unreadable" }
        return SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }
}

/// `manifest.json`: per output name, the inputs hash and seed it was rendered with.
final class Manifest: Sendable {
    struct Record: Codable, Equatable {
        let inputsHash: String
        let seed: UInt64
    }

    private struct File: Codable {
        var version = 1
        var outputs: [String: Record] = [:]
    }

    private let path: String
    private let file: Locked<File>

    init(folder: String, warn: @Sendable (String) -> Void) {
        path = (folder as NSString).appendingPathComponent("manifest.json")
        var loaded = File()
        if let data = FileManager.default.contents(atPath: path) {
            if let decoded = try? JSONDecoder().decode(File.self, from: data), decoded.version == 1 {
                loaded = decoded
            } else {
                warn("\(path) is not a manifest this version reads; every session will be rendered")
            }
        }
        file = Locked(loaded)
    }

    func hash(for name: String) -> String? {
        file.withLock { $0.outputs[name]?.inputsHash }
    }

    /// Records an output and rewrites the manifest atomically.
    func record(_ name: String, hash: String, seed: UInt64) {
        file.withLock { file in
            file.outputs[name] = Record(inputsHash: hash, seed: seed)
            // A manifest that cannot be written only costs re-rendering next time.
            try? AtomicFile.write(CanonicalJSON.encode(file), to: path)
        }
    }
}
