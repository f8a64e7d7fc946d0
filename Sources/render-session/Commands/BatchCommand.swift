import ArgumentParser
import Foundation
import SessionKit
import SessionTimeline

struct BatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Render every script in a folder.",
        discussion: """
            Prepares every clip first (one pass, shared texts made once), then renders several \
            sessions at once, writing {id}.wav and {id}.wav.timeline.json ({id}.mp3 and \
            {id}.mp3.timeline.json with --format mp3, and so on). A session whose output is up \
            to date (manifest.json in the output folder) is skipped; --force renders it anyway. One \
            failing script does not stop the others; the exit status is 1 if any failed, or if \
            there is no script at all. Seeds are derived from --seed and each session's name, so a \
            batch is reproducible.

            --preview writes a page for each session beside its audio ({id}.html: the picture, \
            a player, click to seek; see show) and index.html, a row per session with its kind, \
            length, speech and program loudness, late items and what verify finds; a session \
            verify faults counts as failed.

            --shard I/N renders only the I-th of N shares of the sessions (by a hash of each \
            output name), so N processes or machines can share one batch and one output folder; \
            --shard auto takes I from a Kubernetes Indexed Job's JOB_COMPLETION_INDEX (0-based) \
            and N from --shards or RENDER_SESSION_SHARDS.

            Examples:
              render-session batch Fixtures/scripts -o out/sessions --cache Fixtures/cache
              render-session batch Fixtures/scripts -o out/daily \\
                --cache Fixtures/cache --variants 3 --seed 20261122
              render-session batch Fixtures/scripts -o out/shared \\
                --cache Fixtures/cache --shard 2/3
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @Argument(
        help: ArgumentHelp("The folder of script JSON files (or script files).", valueName: "folder"),
        completion: Completions.script
    )
    var paths: [String]

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp("The output folder (created if needed).", valueName: "dir"),
        completion: Completions.folder
    )
    var output: String

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("How many sessions render at once, 1 to 64. (default: the number of cores)", valueName: "n"),
        transform: { try Parse.number($0, as: Int.self, in: 1...64, what: "a number of sessions") }
    )
    var jobs: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Render this many versions of each script with different interjection draws, 0 to 1000: {id}-v1.wav …",
            valueName: "k"
        ),
        transform: { try Parse.number($0, as: Int.self, in: 0...1_000, what: "a number of variants") }
    )
    var variants: Int = 0

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("The base seed every session's seed is derived from, 0 to 2^64 − 1.", valueName: "n"),
        transform: { try Parse.number($0, as: UInt64.self, what: "a seed") }
    )
    var seed: UInt64 = 0

    @Flag(
        help:
            "Write a preview page beside each session's audio ({id}.html) and index.html in the output folder, a row per session with its loudness, late items and what verify finds."
    )
    var preview = false

    @Option(
        help: ArgumentHelp(
            "Also write each session's captions beside its audio: {id}.{ext}.vtt (each word timed, the phases in {id}.{ext}.chapters.vtt), .srt or .json (a Podcasting 2.0 transcript).",
            valueName: "vtt|srt|json"
        ),
        transform: { text in
            guard let format = CaptionFormat(rawValue: text) else {
                throw ValidationError("--captions: \(printable(text, limit: 40)) is not vtt, srt or json")
            }
            return format
        }
    )
    var captions: CaptionFormat?

    @Flag(help: "Render sessions whose output is up to date too.")
    var force = false

    @Flag(help: "Print one JSON object on standard output with what the summary line says, session by session.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "Render only share I of N (1 ≤ I ≤ N ≤ 1000) of the sessions; auto: I from JOB_COMPLETION_INDEX + 1.",
            valueName: "I/N|auto"
        ),
        transform: { try ShardChoice.parse($0) }
    )
    var shard: ShardChoice?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "With --shard auto: the number of shares, 1 to 1000. (default: RENDER_SESSION_SHARDS)",
            valueName: "n"
        ),
        transform: { try Parse.number($0, as: Int.self, in: 1...BatchShard.maximumCount, what: "a number of shards") }
    )
    var shards: Int?

    @OptionGroup var encoding: EncodingOptions

    @OptionGroup var clip: ClipOptions

    @OptionGroup var plan: PlanOptions

    @OptionGroup var source: ProviderOptions

    var options: PipelineOptions {
        PipelineOptions(clip: clip, plan: plan, source: source, seed: nil, output: encoding.settings(audio: nil))
    }

    func validate() throws {
        try options.validate()
        switch shard {
        case .share(let share) where shards != nil:
            throw ValidationError("--shards goes with --shard auto; --shard \(share) names its count")
        case nil where shards != nil:
            throw ValidationError("--shards goes with --shard auto")
        default:
            break
        }
    }

    func run() async throws {
        let (paths, folder, shard, shards, json, preview, captions) = (
            paths, output, shard, shards, json, preview, captions
        )
        let (pipelineOptions, seed, variants, force) = (options, seed, variants, force)
        let offlineHint = plan.offline ? clip.offlineHint(for: paths) : nil
        let jobs = jobs ?? ProcessInfo.processInfo.activeProcessorCount
        // One thread of the pool for each session rendered at once.
        try await runCommand(threads: jobs) { pool in
            var options = BatchOptions(
                outputFolder: folder,
                pipeline: try pipelineOptions.pipeline(pool: pool),
                baseSeed: seed,
                variants: variants,
                jobs: jobs,
                force: force
            )
            options.writesPreviews = preview
            options.captions = captions
            switch shard {
            case .share(let share): options.shard = share
            case .auto: options.shard = try BatchShard.fromEnvironment(count: shards)
            case nil: break
            }
            let clock = ContinuousClock()
            let started = clock.now
            let library = try ScriptLibrary(paths: paths, strict: plan.sound.strict, warn: Console.warning)
            for problem in library.problems {
                for line in problem.error.flagLines { Console.error(line) }
            }
            let progress = ProgressLine(counting: "sessions") { done, total, elapsed in
                let eta = done > 0 ? Console.duration(elapsed / Double(done) * Double(total - done)) : "?"
                return "\(done)/\(total) sessions, ETA \(eta)"
            }
            let report = try await BatchRenderer.run(library, options: options) { event in
                switch event {
                case .rendering(let total):
                    progress.update(0, total: Int64(total))
                case .finished(let session, let result, let elapsed, let done, let total):
                    Self.tell(session, result, elapsed: elapsed, done: done, total: total)
                    progress.update(Int64(done), total: Int64(total))
                }
            }
            progress.finish()
            // Clips that could not be made: once for the batch, not once per session.
            let clipProblems = report.clips.problemLines()
            for line in clipProblems {
                if options.pipeline.plan.allowMissing { Console.warning(line) } else { Console.error(line) }
            }
            if let offlineHint, !clipProblems.isEmpty, !options.pipeline.plan.allowMissing {
                Console.error(offlineHint)
            }
            var previewText = ""
            var unverified: [String: String] = [:]
            if let rows = report.previews {
                // A session verify faults, or whose page cannot be made, failed though it rendered:
                // it counts as failed, not as rendered or up to date (BatchSummary).
                for row in rows where row.isRendered && !row.isClean {
                    Console.error("\(row.name): \(row.verification)")
                    unverified[row.name] = row.verification
                }
                let index = (folder as NSString).appendingPathComponent("index.html")
                previewText = ", previews in \(index) (\(rows.count { $0.isClean }) verified clean)"
            }
            let elapsed = clock.now - started
            let summary = BatchSummary(
                report: report,
                folder: folder,
                invalidScripts: library.problems.map { problem in
                    // Each line without the path the entry names already.
                    let prefix = problem.path + ": "
                    let lines = problem.error.lines.map {
                        $0.hasPrefix(prefix) ? String($0.dropFirst(prefix.count)) : $0
                    }
                    return BatchSummary.InvalidScript(path: problem.path, problems: lines)
                },
                unverified: unverified,
                elapsed: elapsed
            )
            // Each session's problems were printed as it ended (``tell``); the line counts them.
            let failedNames =
                summary.invalidScripts.map(\.path) + summary.sessions.filter(\.isFailed).map(\.name)
            let failedText =
                failedNames.isEmpty
                ? "0 failed" : "\(failedNames.count) failed (\(failedNames.joined(separator: ", ")))"
            let sessions = "\(report.sessions.count) session\(report.sessions.count == 1 ? "" : "s")"
            let invalid =
                library.problems.isEmpty
                ? ""
                : " and \(library.problems.count) invalid script\(library.problems.count == 1 ? "" : "s")"
            // rendered + up to date + failed = the sessions + the invalid scripts.
            let share =
                (report.shard.map { "\(report.sessions.count) of \(report.totalCount) sessions (shard \($0))" }
                    ?? sessions) + invalid
            let worst = summary.sessions.compactMap(\.worstLateSeconds).max()
            let lateText =
                summary.lateSessions == 0
                ? ""
                : ", \(summary.lateSessions) with late speech (worst \(String(format: "%.1f", worst ?? 0)) s)"
            Console.status(
                "Batch of \(share) into \(folder): \(summary.rendered) rendered, \(summary.upToDate) up to date, \(failedText)\(lateText)\(previewText), in \(Console.seconds(elapsed))",
                event: "summary",
                fields: summary
            )
            if json { Console.printJSON(summary) }
            if !failedNames.isEmpty { throw ExitCode.failure }
        }
    }
}

extension BatchCommand {
    /// Says that `session` ended, as `result`, the `done`-th of `total`: a line (a `sessionDone`
    /// record in a JSON log), then its problems, each an error. In a long batch, a log then shows
    /// each session as it ends, not only at the end.
    static func tell(_ session: BatchSession, _ result: BatchResult, elapsed: Duration, done: Int, total: Int) {
        let entry = BatchSummary.Session(session, result)
        let what =
            switch result {
            case .rendered(let outcome):
                "rendered \(Console.duration(outcome.timeline.sampleRate.seconds(of: outcome.timeline.totalFrames))) in \(Console.seconds(elapsed))"
                    + Self.lateText(entry)
            case .upToDate: "up to date"
            case .failed: "failed"
            case .lacksClips(let count):
                "not rendered: \(count) clip\(count == 1 ? "" : "s") could not be had (listed at the end)"
            }
        Console.status(
            "\(session.name): \(what) (\(done)/\(total))",
            event: "sessionDone",
            fields: SessionDone(entry: entry, done: done, total: total, elapsed: elapsed)
        )
        if case .failed = result {
            for line in entry.problems ?? [] { Console.error("\(session.name): \(line)") }
        }
    }

    /// `, 2 clips late (worst 2.9 s)`, or nothing when no clip is late.
    private static func lateText(_ entry: BatchSummary.Session) -> String {
        guard let count = entry.lateClips, count > 0 else { return "" }
        let worst = String(format: "%.1f", entry.worstLateSeconds ?? 0)
        return ", \(count) clip\(count == 1 ? "" : "s") late (worst \(worst) s)"
    }

    /// A `sessionDone` record's fields: the session as `--json` lists it (its name also as
    /// `session`, the key every record of a session has), and how far the batch is.
    private struct SessionDone: Encodable, Sendable {
        var entry: BatchSummary.Session
        var done: Int
        var total: Int
        var elapsed: Duration

        private enum CodingKeys: String, CodingKey {
            case session, done, total, elapsedSeconds
        }

        func encode(to encoder: any Encoder) throws {
            try entry.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(entry.name, forKey: .session)
            try container.encode(done, forKey: .done)
            try container.encode(total, forKey: .total)
            try container.encode(elapsed.roundedSeconds, forKey: .elapsedSeconds)
        }
    }
}

/// What `batch --json` prints: the summary line's counts, and each session with its files, what
/// became of it and how late its speech starts.
struct BatchSummary: Encodable, Sendable {
    struct Session: Encodable, Sendable {
        var name: String
        /// The audio and timeline written; absent when the session failed and wrote none.
        var audio: String?
        var timeline: String?
        /// Its captions, with `--captions`.
        var captions: String?
        /// `rendered`, `upToDate`, `failed` or `lacksClips`.
        var result: String
        var problems: [String]?
        var lateClips: Int?
        var worstLateSeconds: Double?

        /// Whether it failed: it could not be rendered, or verify faulted it.
        var isFailed: Bool { result == "failed" || result == "lacksClips" }

        /// `session`, which ended as `result`: its files unless it failed, its problems if it did.
        init(_ session: BatchSession, _ result: BatchResult) {
            name = session.name
            self.result = result.name
            lateClips = result.lateness?.lateClips
            worstLateSeconds = result.lateness?.worstSeconds
            switch result {
            case .failed(let lines):
                problems = lines.map { namingSettings(in: $0, PipelineOptions.flag) }
            case .lacksClips(let count):
                problems = ["\(count) clip\(count == 1 ? "" : "s") could not be had (listed once for the batch)"]
            case .rendered, .upToDate:
                (audio, timeline, captions) = (session.outputPath, session.timelinePath, session.captionsPath)
            }
        }
    }

    var folder: String
    var shard: String?
    var rendered: Int
    var upToDate: Int
    var failed: Int
    var lateSessions: Int
    var invalidScripts: [InvalidScript]
    var sessions: [Session]
    var elapsedSeconds: Double

    /// A script that could not be read, with why: one line per problem, as on standard error.
    struct InvalidScript: Encodable, Sendable {
        var path: String
        var problems: [String]
    }

    /// `rendered + upToDate + failed` is every session and invalid script: a session whose
    /// preview verify faulted (`unverified`, its name and the first problem) is `failed`.
    init(
        report: BatchReport,
        folder: String,
        invalidScripts: [InvalidScript],
        unverified: [String: String] = [:],
        elapsed: Duration
    ) {
        self.folder = folder
        shard = report.shard.map { "\($0)" }
        self.invalidScripts = invalidScripts
        sessions = zip(report.sessions, report.results).map { session, result in
            var entry = Session(session, result)
            if let problem = unverified[session.name] {
                entry.result = "failed"
                entry.problems = [problem]
            }
            return entry
        }
        rendered = sessions.count { $0.result == "rendered" }
        upToDate = sessions.count { $0.result == "upToDate" }
        failed = sessions.count(where: \.isFailed) + invalidScripts.count
        lateSessions = sessions.count { ($0.lateClips ?? 0) > 0 }
        elapsedSeconds = elapsed.roundedSeconds
    }
}

/// What `--shard` names: one share of the batch, or `auto`, the share a Kubernetes Indexed Job's
/// environment names when the batch starts.
enum ShardChoice: Equatable, ExpressibleByArgument {
    case share(BatchShard)
    case auto

    init?(argument: String) {
        guard let choice = try? Self.parse(argument) else { return nil }
        self = choice
    }

    /// `auto` or `I/N`; anything else is an error naming the rule it breaks.
    static func parse(_ text: String) throws -> ShardChoice {
        if text == "auto" { return .auto }
        switch BatchShard.read(text) {
        case .success(let share): return .share(share)
        case .failure(let rule): throw ValidationError(rule.description)
        }
    }
}
