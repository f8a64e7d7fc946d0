internal import Crypto
internal import Foundation
internal import SessionAudio
package import SessionTimeline

/// How a batch renders a folder of scripts.
package struct BatchOptions: Sendable {
    /// Where `{id}.wav`, `{id}.wav.timeline.json` and `manifest.json` go.
    package var outputFolder: String
    /// The settings every session shares; each session's seed and outputs replace the plan's seed
    /// and the output destinations (see ``baseSeed``).
    package var pipeline: SessionPipeline
    /// The seed each session's seed is derived from (`SeededGenerator.derive(base:label:)`).
    package var baseSeed: UInt64
    /// How many versions of each script with different interjection draws; 0 renders one, unnumbered.
    package var variants: Int
    /// How many sessions render at once.
    package var jobs: Int
    /// Whether to render sessions whose output is up to date anyway.
    package var force: Bool
    /// The share of the sessions to render, when several processes split the batch; `nil` for all.
    package var shard: BatchShard?
    /// Whether to write a preview page beside each session's audio and `index.html`, each
    /// session's file verified against its timeline (``BatchPreview``).
    package var writesPreviews = false
    /// The captions each session gets beside its audio, `{id}.{ext}.vtt` (with
    /// `{id}.{ext}.chapters.vtt`), `.srt` or `.json`; `nil` for none.
    package var captions: CaptionFormat?

    package init(
        outputFolder: String,
        pipeline: SessionPipeline,
        baseSeed: UInt64 = 0,
        variants: Int = 0,
        jobs: Int = ProcessInfo.processInfo.activeProcessorCount,
        force: Bool = false,
        shard: BatchShard? = nil
    ) {
        self.outputFolder = outputFolder
        self.pipeline = pipeline
        self.baseSeed = baseSeed
        self.variants = variants
        self.jobs = max(1, jobs)
        self.force = force
        self.shard = shard
    }
}

/// One session of a batch: a script, which variant, its seed and where it goes.
package struct BatchSession: Sendable {
    /// The output's name without extension: `reactivity-01` or `reactivity-01-v2`.
    package let name: String
    package let scriptPath: String
    package let script: Script
    package let seed: UInt64
    package let outputPath: String
    package let timelinePath: String
    /// Where its captions go (``BatchOptions/captions``), if it has them.
    package var captionsPath: String? = nil

    /// Every file the session writes: the audio, the timeline, and its captions (and their chapters).
    var outputPaths: [String] {
        [outputPath, timelinePath]
            + [captionsPath, captionsPath.flatMap(CaptionFormat.chaptersPath(forCaptionsAt:))]
            .compactMap { $0 }
    }
}

/// How late a batch session's speech starts: what the manifest records and the summary counts.
package struct BatchLateness: Sendable, Equatable, Codable {
    /// How many clips start after their planned start.
    package var lateClips: Int
    /// How late the latest starts, in seconds (to the millisecond); `nil` when none is late.
    package var worstSeconds: Double?

    package init(lateClips: Int, worstSeconds: Double?) {
        self.lateClips = lateClips
        self.worstSeconds = worstSeconds
    }

    /// `timeline`'s lateness.
    package init(_ timeline: Timeline) {
        let late = timeline.lateness
        lateClips = late.lateCount
        worstSeconds = late.worst.map { (timeline.sampleRate.seconds(of: $0.frames) * 1_000).rounded() / 1_000 }
    }
}

/// What became of a batch session.
package enum BatchResult: Sendable {
    /// Rendered now, to this outcome.
    case rendered(RenderOutcome)
    /// Its output was already up to date, with the lateness recorded when it was rendered.
    case upToDate(BatchLateness?)
    /// `rendered`, `upToDate`, `failed` or `lacksClips`: the case's name, as `batch --json` gives it.
    package var name: String {
        switch self {
        case .rendered: "rendered"
        case .upToDate: "upToDate"
        case .failed: "failed"
        case .lacksClips: "lacksClips"
        }
    }

    /// How late its speech starts, when that is known: a session rendered now, or one up to date
    /// whose manifest recorded it.
    package var lateness: BatchLateness? {
        switch self {
        case .rendered(let outcome): BatchLateness(outcome.timeline)
        case .upToDate(let lateness): lateness
        case .failed, .lacksClips: nil
        }
    }

    /// It failed, and why (one line per problem; the settings a line mentions still marked, for
    /// the caller to name: ``namingSettings(in:_:)``).
    case failed([String])
    /// It needed this many clips that could not be synthesized, which ``BatchReport/clips``
    /// reports once for the whole batch.
    case lacksClips(Int)
}

/// How far a batch has got, as ``BatchRenderer/run(_:options:progress:)`` tells it.
package enum BatchProgress: Sendable {
    /// Every clip is ready: `total` sessions render now.
    case rendering(total: Int)
    /// A session ended, the `done`-th of `total` to end, as `result`, after `elapsed`.
    case finished(BatchSession, BatchResult, elapsed: Duration, done: Int, total: Int)
}

/// What a batch did: its sessions and what became of each, and the clips it prepared.
package struct BatchReport: Sendable {
    /// The sessions it took (its shard's, or all), in script order, each script's variants together.
    package let sessions: [BatchSession]
    /// How many sessions the whole batch has, over all shards.
    package let totalCount: Int
    /// The share it took, if it took one.
    package let shard: BatchShard?
    /// What became of each session, aligned with ``sessions``.
    package let results: [BatchResult]
    /// The clips every session drew on, prepared once for all.
    package let clips: PreparedClips
    /// Each session's row of the preview index, in ``sessions``' order, when previews were asked for.
    package var previews: [BatchPreview.Row]?
}

/// Renders many sessions through one pipeline, several at once, skipping those whose output is
/// up to date.
///
/// Every clip of every script is prepared (and measured) once, before any session renders.
/// `manifest.json` in the output folder records, per output, a SHA-256 of everything that
/// determines its bytes: the tool's version, the script file, the voice, speed and output
/// settings, the bell, the seed, and each clip's key, size and modification time; and, per output
/// file, the size and SHA-256 it was written with. A session whose hash matches and whose files are
/// still those bytes is skipped; one whose file is missing, cut short or changed is rendered again. The manifest is rewritten (atomically) after each
/// session, so an interrupted batch resumes where it stopped. One failing session does not stop
/// the others. Batches into one output folder take turns: the second waits for the first's lock.
///
/// With a ``BatchOptions/shard``, only that share of the sessions is prepared and rendered, and
/// only that shard's lock is taken: the shards of a batch run at once, in as many processes or
/// hosts, into one folder, and end with the same files and the same manifest as one batch.
package enum BatchRenderer {
    /// The sessions of `library` under `options`, in script order, each script's variants together.
    package static func sessions(of library: ScriptLibrary, options: BatchOptions) -> [BatchSession] {
        library.entries.flatMap { entry -> [BatchSession] in
            let variants: [Int?] = options.variants > 0 ? (1...options.variants).map { $0 } : [nil]
            return variants.map { variant in
                let name = variant.map { "\(entry.script.id)-v\($0)" } ?? entry.script.id
                let folder = options.outputFolder as NSString
                let audioExtension = options.pipeline.output.resolvedFormat.fileExtension
                var session = BatchSession(
                    name: name,
                    scriptPath: entry.path,
                    script: entry.script,
                    seed: SeededGenerator.derive(
                        base: options.baseSeed,
                        label: variant.map { "\(entry.script.id)#v\($0)" } ?? entry.script.id
                    ),
                    outputPath: folder.appendingPathComponent(
                        "\(name).\(options.pipeline.output.resolvedFormat.fileExtension)"
                    ),
                    // The audio file's name and .timeline.json: batches of two formats into one
                    // folder keep a timeline each, where verify looks for it.
                    timelinePath: folder.appendingPathComponent("\(name).\(audioExtension).timeline.json")
                )
                // Named after the audio file too: two formats' batches in one folder keep theirs.
                session.captionsPath = options.captions.map {
                    folder.appendingPathComponent("\(name).\(audioExtension).\($0.rawValue)")
                }
                return session
            }
        }
    }

    /// Prepares the clips of the scripts in `library` (those of the shard's sessions, with a shard),
    /// then renders the sessions, at most `options.jobs` at a time.
    ///
    /// - Parameter progress: told once the clips are ready, then as each session ends, in the
    ///   order they end, one call at a time.
    /// - Throws: ``SessionError`` if the library holds no script at all, the output folder cannot be
    ///   created or written, or the task is cancelled.
    package static func run(
        _ library: ScriptLibrary,
        options: BatchOptions,
        progress: @escaping @Sendable (BatchProgress) -> Void = { _ in }
    ) async throws(SessionError) -> BatchReport {
        // On the pool: reading manifests and scripts, waiting for the folder's lock, and each
        // session's render (the task group's children run there too).
        try await options.pipeline.pool.run { () async throws(SessionError) in
            try await renderAll(library, options: options, progress: progress)
        }
    }

    private static func renderAll(
        _ library: ScriptLibrary,
        options: BatchOptions,
        progress: @escaping @Sendable (BatchProgress) -> Void
    ) async throws(SessionError) -> BatchReport {
        var stages = StageClock()
        let observer = options.pipeline.observer
        func finished(_ stage: String) { observer.finishedStage(stage, stages.lap()) }
        guard !library.entries.isEmpty || !library.problems.isEmpty else {
            throw SessionError(
                .noScripts,
                "No scripts to render: \(library.paths.joined(separator: ", ")) holds no *.json file"
            )
        }
        // The batch owns its output folder: every output in it is replaced when out of date, and
        // a link planted there is refused, never written through.
        var pipeline = options.pipeline
        pipeline.output.replaceExisting = true
        pipeline.output.inOwnedFolder = true
        let job = try RenderJob(pipeline)
        try job.checkVoices(of: library.entries.map(\.script))
        let folder = options.outputFolder
        let all = sessions(of: library, options: options)
        guard !all.isEmpty else {
            // Every script failed to load: nothing to render, so nothing is created (no folder, no lock).
            return BatchReport(
                sessions: [],
                totalCount: 0,
                shard: options.shard,
                results: [],
                clips: PreparedClips(entries: [])
            )
        }
        // A session named `index` would have its preview page overwritten by the batch's index.
        if options.writesPreviews, let index = all.first(where: { $0.name == BatchPreview.indexName }) {
            throw SessionError(
                .invalidSetting,
                "\(index.scriptPath): the id \"\(BatchPreview.indexName)\" would give this session's preview page the name of the batch's \(BatchPreview.indexName).html; give the script another id, or make no previews"
            )
        }
        let manifestPath = (folder as NSString).appendingPathComponent("manifest.json")
        _ = try OutputTarget.resolve(.path(manifestPath), replaceExisting: true, inOwnedFolder: true)
        // One batch (or one shard of it) at a time per output folder: a second one waits, then
        // finds the work done.
        let part = options.shard.map(FolderLock.Part.shard) ?? .whole
        let lock = try FolderLock(folder: folder, part: part) {
            let which = options.shard.map { "shard \($0) of a batch" } ?? "batch"
            options.pipeline.observer.warning("another \(which) is writing \(folder); waiting for it to finish")
        }
        defer { withExtendedLifetime(lock) {} }
        let manifest = BatchManifest(folder: folder, warn: options.pipeline.observer.warning)

        let sessions = options.shard.map { shard in all.filter { shard.contains($0.name) } } ?? all
        // Only the clips of the scripts this batch renders; a script's variants share them.
        let scriptPaths = Set(sessions.map(\.scriptPath))
        let scripts = library.entries.filter { scriptPaths.contains($0.path) }.map(\.script)
        try job.checkSounds(of: scripts)
        finished("check")
        let clips = try await job.prepare(scripts: scripts)
        finished("prepare")
        let adopted = job.adopting(clips)
        // Every clip is made: rendering starts now, and with it the clock of the sessions' ETA.
        progress(.rendering(total: sessions.count))
        var results = [BatchResult?](repeating: nil, count: sessions.count)
        await withTaskGroup(of: (Int, BatchResult, Duration).self) { group in
            var next = 0
            func startNext() {
                guard next < sessions.count, !Task.isCancelled else { return }
                let index = next
                next += 1
                // Each render blocks a thread of the pool for as long as it takes (the batch runs
                // on the pool, and its child tasks with it): as many at once as it has threads.
                group.addTask {
                    let started = ContinuousClock.now
                    let result = render(
                        sessions[index],
                        clips: clips,
                        job: adopted,
                        force: options.force,
                        manifest: manifest
                    )
                    return (index, result, ContinuousClock.now - started)
                }
            }
            for _ in 0..<options.jobs { startNext() }
            var done = 0
            while let (index, result, elapsed) = await group.next() {
                results[index] = result
                done += 1
                progress(.finished(sessions[index], result, elapsed: elapsed, done: done, total: sessions.count))
                startNext()
            }
        }
        finished("sessions")
        if Task.isCancelled { throw SessionError.cancelled }
        var report = BatchReport(
            sessions: sessions,
            totalCount: all.count,
            shard: options.shard,
            results: results.map { $0 ?? .failed(["not run"]) },
            clips: clips
        )
        if options.writesPreviews {
            let sources = SourceFolders(
                clips: pipeline.clips.cacheFolder,
                sounds: pipeline.plan.soundLibrary ?? SoundLibrary.defaultFolder()
            )
            report.previews = try BatchPreview.write(
                report,
                names: all.map(\.name),
                folder: folder,
                manifest: manifest,
                sources: sources
            )
            finished("preview")
        }
        return report
    }

    private static func render(
        _ session: BatchSession,
        clips: PreparedClips,
        job batch: RenderJob,
        force: Bool,
        manifest: BatchManifest
    ) -> BatchResult {
        let observer = batch.pipeline.observer
        // Its warnings name it, its stages are its own, its audio's progress is the batch's line,
        // not one of its own; settings are named as the batch's observer names them.
        var told = PipelineObserver(warning: { observer.warning("\(session.name): \($0)") })
        told.settingName = observer.settingName
        let job = batch.observed(by: told)
        var stages = StageClock()
        func finished(_ stage: String) { observer.finishedSessionStage(session.name, stage, stages.lap()) }
        var pipeline = job.pipeline
        pipeline.plan.seed = session.seed
        // The texts are asked once: for a kind other than guided, asking reads the sound library.
        let texts = (try? job.texts(of: session.script)) ?? session.script.allTexts
        let hash = inputsHash(session, texts: texts, pipeline: pipeline)
        let outputs = session.outputPaths
        // The manifest's record of this output: by its audio file, so another format's is another.
        let record = (session.outputPath as NSString).lastPathComponent
        if !force, manifest.hash(for: record) == hash {
            // The files must still be the ones recorded, byte for byte: one cut short or changed is rendered again.
            if let change = manifest.change(of: record, outputs: outputs) {
                observer.warning("\(session.name): \(change); rendering it again")
            } else {
                return .upToDate(manifest.lateness(of: record))
            }
        }
        // Clips that could not be had (made, found under --offline, or read) were reported once,
        // for the whole batch: the session only counts them.
        let failed = Set(clips.problems.map(\.entry.key))
        let identity = pipeline.clips(for: session.script)
        let needed = texts.filter { failed.contains(identity.entry(for: $0).key) }
        if !needed.isEmpty && !pipeline.plan.allowMissing { return .lacksClips(needed.count) }
        do {
            let timeline = try job.plan(session.script, clips: clips, seed: session.seed)
            finished("plan")
            let targets = try job.resolveOutputs(
                audio: .path(session.outputPath),
                timeline: .path(session.timelinePath),
                captions: session.captionsPath.map { .path($0) }
            )
            let rendered = try job.render(timeline, to: targets)
            finished("render")
            manifest.record(
                hash: hash,
                seed: session.seed,
                file: record,
                format: pipeline.output.resolvedFormat,
                outputs: outputs,
                known: rendered.audioFile.map { [session.outputPath: $0] } ?? [:],
                lateness: BatchLateness(rendered)
            )
            return .rendered(RenderOutcome(timeline: rendered, clips: clips, warnings: job.warnings.all))
        } catch {
            return .failed(error.lines { $0.marker })
        }
    }

    /// The SHA-256 of everything that determines a session's output bytes.
    /// `texts` are the session's (``SessionPipeline/texts(of:)``): each one's clip is part of it.
    static func inputsHash(_ session: BatchSession, texts: [String], pipeline: SessionPipeline) -> String {
        var hasher = SHA256()
        func add(_ line: String) { hasher.update(data: Data((line + "\n").utf8)) }
        let clips = pipeline.clips(for: session.script)
        add("render-session \(SessionKitVersion.current)")
        add("script \(fileDigest(session.scriptPath))")
        add("seed \(session.seed)")
        if let captions = session.captionsPath { add("captions \((captions as NSString).lastPathComponent)") }
        // Every setting that shapes the output, as one value: a setting added to ClipIdentity,
        // PlanSettings or EncoderSettings is part of the hash without a line here.
        var plan = pipeline.plan
        let sound = plan.sound.overriding(session.script.sound)
        plan.sound = sound
        let settings = HashedSettings(
            clips: clips,
            plan: plan,
            encoder: try? pipeline.output.encoder(),
            album: pipeline.output.album,
            artist: pipeline.output.artist
        )
        add("settings \(String(decoding: CanonicalJSON.encode(settings), as: UTF8.self))")
        let names = [sound.ambience, sound.startGong, sound.effectiveIntervalGong, sound.bell].compactMap { $0 }
        // Other kinds always play the library's cue sounds.
        let isGuided = if case .guided = session.script.kind { true } else { false }
        if !names.isEmpty || !isGuided {
            // Sounds by name: the library's files as they are now; sounds by path: their bytes.
            let folder = plan.soundLibrary ?? SoundLibrary.defaultFolder()
            let files = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.sorted() ?? []
            for file in files { add("library \(file) \(stamp(folder + "/" + file))") }
            for name in names where name.contains("/") { add("sound file \(name) \(fileDigest(name))") }
        }
        for text in texts {
            let entry = clips.entry(for: text)
            add("clip \(entry.key) \(stamp(entry.path))")
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// The settings a session's output bytes depend on, hashed as their canonical JSON.
    private struct HashedSettings: Encodable {
        let clips: ClipIdentity
        let plan: PlanSettings
        /// `nil` when the format does not take the settings, and the render fails.
        let encoder: EncoderSettings?
        let album: String?
        let artist: String?
    }

    /// `size modified` of the file at `path` (`-1 0` if there is none): a change to it without reading it.
    private static func stamp(_ path: String) -> String {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        let size = (attributes?[.size] as? NSNumber)?.int64Value ?? -1
        let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        return "\(size) \(modified)"
    }

    /// The SHA-256 of the regular file at `path`; `unreadable` for anything else (a FIFO is not waited on).
    private static func fileDigest(_ path: String) -> String {
        guard case .success(let stamp) = BatchManifest.stamp(path, followingLinks: true) else { return "unreadable" }
        return stamp.sha256
    }
}
