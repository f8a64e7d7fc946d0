import ArgumentParser
import Foundation
import SessionKit
import SessionTimeline

struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Write a script as the app's play queue: clip files, 8 kHz silences and queue.json.",
        discussion: """
            The on-device form of a session (an AVQueuePlayer's items): each clip copied from the \
            cache under a numbered name (001-opening.mp3, the cache's bytes), the bell likewise, \
            and between them silences as 16-bit mono 8 kHz WAV files, one per length. queue.json \
            lists the items in order with their exact lengths, and the overlays (ambience bed, \
            gongs) with their start times for the app to schedule. Each silence's length comes \
            from the rounded running end, so the queue never drifts more than half an 8 kHz frame \
            from the rendered session. Loudness is planned as the render plans it (--loudness, \
            −16 LUFS by default): each item and overlay in queue.json carries the gain the render \
            plays it at (gain, gainDb, and volume for AVPlayer, every gain lowered by \
            masterGainDb), so that the app's mix sounds like the render. With --reencode every \
            clip is rendered at the session's rate and gain (its gain in queue.json then 1), as \
            WAV or the --format chosen. The folder appears only when complete; an \
            existing folder is replaced only if it is empty or exactly an earlier export (its \
            queue.json and the files it lists, nothing else), and -n refuses any existing folder. \
            Clips are copied as bytes, never as links. Prints the path of queue.json. Schema: \
            docs/queue.md.

            Examples:
              render-session queue Fixtures/scripts/ten-minute-session.json \\
                -o out/queue --cache Fixtures/cache --seed 7
              render-session queue Fixtures/scripts/ten-minute-session.json \\
                -o out/queue-mp3 --cache Fixtures/cache --seed 7 --reencode --format mp3
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @OptionGroup var session: SessionOptions

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp("The folder to write the queue into.", valueName: "dir"),
        completion: Completions.folder
    )
    var output: String

    @Flag(
        help:
            "Render every clip and the bell at the session's rate and gain (loudness on by default) as WAV or --format, instead of copying the cache's files."
    )
    var reencode = false

    @OptionGroup var encoding: EncodingOptions

    @OptionGroup var overwrite: OverwriteOption

    var options: PipelineOptions {
        session.options(output: encoding.settings(audio: nil, replaceExisting: !overwrite.noOverwrite))
    }

    func validate() throws {
        if output == "-" {
            throw ValidationError("--output: a queue is a folder of files; standard output cannot hold one")
        }
        if !reencode {
            if let flag = encoding.givenFlag {
                throw ValidationError("\(flag): the queue's clips are the cache's files; add --reencode to encode them")
            }
        }
        try options.validate()
    }

    /// Where the queue's levels are, for the summary: in queue.json's gains, in the files, or
    /// nowhere (loudness off).
    static func levels(of queue: SessionQueue) -> String {
        guard let loudness = queue.loudness else {
            return "clips at their own levels (--loudness off)"
        }
        if loudness.inFiles { return "leveled clips (--reencode)" }
        let target = String(format: "%g", loudness.target).replacingOccurrences(of: "-", with: "−")
        let master = queue.masterGainDecibels > 0 ? String(format: ", masterGainDb %.2f", queue.masterGainDecibels) : ""
        return "gains in queue.json (the render's, \(loudness.anchor.rawValue) \(target) LUFS\(master))"
    }

    func run() async throws {
        let (options, folder, reencode) = (options, output, reencode)
        let scriptPath = session.scriptPath
        try await runCommand { pool in
            let clock = ContinuousClock()
            let started = clock.now
            let pipeline = try options.pipeline(pool: pool)
            let script = try ScriptFile.load(scriptPath, strict: options.plan.sound.strict, warn: Console.warning)
            let progress = ProgressLine(counting: "files") { done, total, _ in "\(done)/\(total) files" }
            let (queue, _) = try await pipeline.writeQueue(script, to: folder, reencode: reencode) { done, total in
                progress.update(Int64(done), total: Int64(total))
            }
            progress.finish()
            let files = Set(queue.items.map(\.file) + queue.overlays.map(\.file)).count
            Console.status(
                "Wrote the queue of \(queue.scriptId): \(queue.items.count) items in \(files) files, \(Console.duration(queue.durationSeconds)), \(Self.levels(of: queue)), drift at most \(String(format: "%.3f", queue.worstDriftSeconds * 1_000)) ms, seed \(queue.seed), in \(Console.seconds(clock.now - started)) → \(folder)"
            )
            Console.printWritten([.path((folder as NSString).appendingPathComponent(QueueWriter.descriptionFileName))])
        }
    }
}
