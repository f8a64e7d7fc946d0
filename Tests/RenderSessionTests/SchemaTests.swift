import Foundation
import TestSupport
import Testing

/// Why Debian's JSON Schema validator cannot be run here, or `nil` when it can.
private let validatorMissing = BrowserSupport.pythonMissing(
    "import jsonschema; jsonschema.Draft202012Validator",
    install: "no jsonschema with draft 2020-12 (apt-get install python3-jsonschema)"
)

/// Holds JSON files to docs/timeline.schema.json and docs/queue.schema.json with a validator we did
/// not write (Debian's python3-jsonschema, draft 2020-12): `validate TIMELINE_SCHEMA QUEUE_SCHEMA
/// FILE…` checks both schemas, then each file against the queue's schema if its `kind` is `queue`,
/// else the timeline's; it prints each problem as `FILE: PATH: MESSAGE` and exits 1 on any.
private let validate = """
    import json, sys, jsonschema
    from jsonschema import Draft202012Validator as Validator
    schemas = {}
    for path in sys.argv[1:3]:
        with open(path, encoding="utf-8") as file:
            schema = json.load(file)
        Validator.check_schema(schema)
        schemas[schema["$id"]] = schema
    try:
        from referencing import Registry, Resource
        registry = Registry().with_resources((key, Resource.from_contents(value)) for key, value in schemas.items())
        def validator(schema):
            return Validator(schema, registry=registry, format_checker=Validator.FORMAT_CHECKER)
    except ImportError:
        # Debian 12's jsonschema 4.10 resolves references with a RefResolver.
        def validator(schema):
            resolver = jsonschema.RefResolver.from_schema(schema, store=schemas)
            return Validator(schema, resolver=resolver, format_checker=Validator.FORMAT_CHECKER)
    timeline, queue = (validator(schema) for schema in schemas.values())
    problems = 0
    for path in sys.argv[3:]:
        with open(path, encoding="utf-8") as file:
            document = json.load(file)
        chosen = queue if document.get("kind") == "queue" else timeline
        for error in sorted(chosen.iter_errors(document), key=lambda error: list(map(str, error.absolute_path))):
            problems += 1
            print(f"{path}: {'/'.join(map(str, error.absolute_path))}: {error.message[:400]}")
    sys.exit(1 if problems else 0)
    """

@Suite(
    "JSON Schemas: every timeline and queue.json the command writes follows docs/*.schema.json",
    .serialized,
    .enabled(if: validatorMissing == nil, Comment(rawValue: validatorMissing ?? ""))
)
struct SchemaTests {
    static let schemas = ["timeline", "queue"].map {
        Repository.root.appendingPathComponent("docs/\($0).schema.json").path
    }

    /// The fixture sessions of every kind: guided scripts, a meditation, the five session kinds,
    /// a stretching session and a workout.
    static let fixtures = [
        "scripts/edge-cases.json", "scripts/ten-minute-session.json", "meditations/reactivity-01.json",
        "sessions/breathing.json", "sessions/offen.json", "sessions/stretch.json", "sessions/timer.json",
        "sessions/workout.json", "stretches/back-and-neck.json", "workouts/remaining-time.json",
    ]

    /// Sounds that make every overlay field appear (the bed's loop, fades and ducking, a gong's
    /// strike) and a bell that is not found (`skippedSounds` and the paths it was looked for at).
    static let layers = [
        "--ambience", "rain", "--duck", "6", "--start-gong", "gong", "--interval-gong", "gong", "--interval-minutes",
        "2", "--lead-in", "3", "--bell", "no-such-bell", "--allow-missing-sounds",
    ]

    /// Runs the validator on `files`.
    static func validation(_ files: [String]) async throws -> ProcessOutcome {
        try await ChildProcess.run(BrowserSupport.python, ["-c", validate] + schemas + files)
    }

    /// A folder with a clip cache holding the fixture clips (the others are spoken into it by the
    /// embedded voice) and an environment whose sound library is made in it.
    static func workplace() throws -> (TemporaryFolder, cache: String, environment: [String: String]) {
        let folder = try TemporaryFolder()
        let cache = folder.path("cache")
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: Repository.cache.path)
        where !name.hasSuffix(".loudness.json") {
            try FileManager.default.copyItem(
                atPath: Repository.cache.appendingPathComponent(name).path,
                toPath: (cache as NSString).appendingPathComponent(name)
            )
        }
        return (folder, cache, LayeredCommandTests.environment(folder))
    }

    /// Every string in `json`, with the path to it.
    static func strings(in json: Any, at path: String = "") -> [(String, String)] {
        switch json {
        case let text as String: [(path, text)]
        case let array as [Any]: array.enumerated().flatMap { strings(in: $1, at: "\(path)[\($0)]") }
        case let object as [String: Any]: object.flatMap { strings(in: $1, at: "\(path).\($0)") }
        default: []
        }
    }

    static func object(_ path: String) throws -> [String: Any] {
        try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any],
            "\(path) is a JSON object"
        )
    }

    @Test(
        "Every fixture kind's timeline, a layered one, a render's (encoding, audioFile, measured loudness) and a queue's follow the schemas; one phase name per item; no machine path"
    )
    func everyOutputFollowsTheSchemas() async throws {
        let (folder, cache, environment) = try Self.workplace()
        var files: [String] = []
        func run(_ arguments: [String]) async throws -> CommandResult {
            let result = try await renderSession(arguments, environment: environment)
            #expect(result.status == 0, "\(arguments.joined(separator: " ")): \(result.standardError)")
            return result
        }
        for fixture in Self.fixtures {
            let script = Repository.fixtures.appendingPathComponent(fixture).path
            let result = try await run(["timeline", script, "--cache", cache, "--seed", "7"])
            let file = folder.path(fixture.replacingOccurrences(of: "/", with: "-"))
            try Data(result.standardOutputBytes).write(to: URL(fileURLWithPath: file))
            files.append(file)
        }
        let script = Repository.script("ten-minute-session").path
        let layered = try await run(["timeline", script, "--cache", cache, "--seed", "7"] + Self.layers)
        try Data(layered.standardOutputBytes).write(to: URL(fileURLWithPath: folder.path("layered.json")))
        _ = try await run(
            [
                "render", Repository.script("edge-cases").path, "--cache", cache, "--seed", "7", "-o",
                folder.path("r.mp3"),
            ]
                + Self.layers
        )
        _ = try await run(["queue", script, "--cache", cache, "--seed", "7", "-o", folder.path("q")] + Self.layers)
        files += [folder.path("layered.json"), folder.path("r.mp3.timeline.json"), folder.path("q/queue.json")]

        let outcome = try await Self.validation(files)
        #expect(outcome.termination.status == 0, "\(outcome.standardOutputText)\(outcome.standardErrorText)")

        let render = try Self.object(folder.path("r.mp3.timeline.json"))
        #expect(render["encoding"] != nil && render["audioFile"] != nil, "a render's timeline has what a plan lacks")
        let skipped = try #require(try Self.object(folder.path("layered.json"))["skippedSounds"] as? [[String: Any]])
        #expect(skipped.first?["name"] as? String == "no-such-bell", "the missing bell is in skippedSounds")

        for file in files {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(!text.contains(folder.url.path), "\(file) names the folder it was made in")
            let json = try JSONSerialization.jsonObject(with: Data(text.utf8))
            for (path, value) in Self.strings(in: json) where value.hasPrefix("/") {
                Issue.record("\(file): \(path) is a machine's path, \(value)")
            }
        }

        // One phase name per item: a spoken item's `phase` is the phase of `phases` it starts in
        // (an interjection's too), and a queue item's is its timeline item's.
        for file in files.dropLast() {
            let timeline = try Self.object(file)
            let phases = try #require(timeline["phases"] as? [[String: Any]])
            for item in try #require(timeline["items"] as? [[String: Any]]) {
                guard let phase = item["phase"] as? String, let start = item["startFrame"] as? Int else { continue }
                let within = phases.last { ($0["startFrame"] as? Int ?? .max) <= start }?["name"] as? String
                #expect(phase == within, "\(file): item \(item["index"] ?? "?") is in phase \(within ?? "none")")
            }
        }
        let queue = try Self.object(folder.path("q/queue.json"))
        let timelineItems = try #require(try Self.object(folder.path("layered.json"))["items"] as? [[String: Any]])
        let queueItems = try #require(queue["items"] as? [[String: Any]])
        #expect(queueItems.contains { $0["kind"] as? String == "interjection" })
        for item in queueItems where item["kind"] as? String != "silence" {
            let index = try #require(item["timelineIndex"] as? Int)
            #expect(item["phase"] as? String == timelineItems[index]["phase"] as? String, "queue item \(item)")
        }
    }

    @Test(
        "The schemas refuse what no timeline holds: an unknown kind, a negative frame, an unknown key, a machine's path"
    )
    func schemasRefuse() async throws {
        let (folder, cache, environment) = try Self.workplace()
        let result = try await renderSession(
            ["timeline", Repository.script("edge-cases").path, "--cache", cache, "--seed", "7"],
            environment: environment
        )
        #expect(result.status == 0, "\(result.standardError)")
        let good = folder.path("good.json")
        try Data(result.standardOutputBytes).write(to: URL(fileURLWithPath: good))
        let accepted = try await Self.validation([good])
        #expect(accepted.termination.status == 0, "\(accepted.standardOutputText)")

        let mistakes: [(String, String, (inout [String: Any], inout [[String: Any]]) -> Void)] = [
            ("unknown-kind", "items/0/kind", { _, items in items[0]["kind"] = "music" }),
            ("negative-frame", "items/1/startFrame", { _, items in items[1]["startFrame"] = -1 }),
            ("unknown-key", "items/0", { _, items in items[0]["colour"] = "red" }),
            ("machine-path", "items/0/source", { _, items in items[0]["source"] = "/home/me/.cache/x.mp3" }),
            ("later-version", "schemaVersion", { timeline, _ in timeline["schemaVersion"] = 4 }),
        ]
        for (name, place, change) in mistakes {
            var timeline = try Self.object(good)
            var items = try #require(timeline["items"] as? [[String: Any]])
            change(&timeline, &items)
            timeline["items"] = items
            let file = folder.path("\(name).json")
            try JSONSerialization.data(withJSONObject: timeline).write(to: URL(fileURLWithPath: file))
            let refused = try await Self.validation([file])
            #expect(refused.termination.status == 1, "\(name) is refused: \(refused.standardErrorText)")
            #expect(refused.standardOutputText.contains("\(file): \(place)"), "\(name): \(refused.standardOutputText)")
        }
    }
}
