import ArgumentParser
import Foundation
import SessionKit
import SessionTimeline

/// `render-session position`: maps a time in a session to its item and offset, and back, for resuming.
struct PositionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "position",
        abstract: "Map a time in a session to its item and offset, or an item and offset to a time.",
        discussion: """
            For resuming a session where it stopped. FILE is a timeline JSON (render --timeline) \
            or an on-device queue JSON ("kind": "queue"), whose items play at their own rates; - \
            reads standard input.

            --at prints the item playing that many seconds in and how far into it, as one line \
            of JSON: {"itemIndex", "kind", "offsetFrames", "offsetSeconds", "phase"}, and \
            "timelineIndex" for a queue. A time inside a gong or the bed is in the narration \
            item under it; a time is taken to the item's nearest frame, and one that rounds to an \
            item's end is the next item's start (docs/position.md). --item with --offset prints \
            the time there: {"elapsedSeconds"}, and "elapsedFrames" for a timeline. An item and \
            offset mapped to a time and back come back exactly.

            Exit statuses: 0 done; 1 the file cannot be read, or a value lies outside the \
            session (the line gives the range); 64 a usage error.

            Examples:
              render-session position \\
                Fixtures/positions/five-seconds.timeline.json --at 3.6
              render-session position Fixtures/positions/queue.json \\
                --item 1 --offset 2.5
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @Argument(
        help: ArgumentHelp("The timeline or queue JSON; - for standard input.", valueName: "file.json"),
        completion: Completions.json
    )
    var file: String

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("A time from the session's start: seconds, m:ss or h:mm:ss.", valueName: "[[h:]m:]s"),
        transform: { try Parse.clockTime($0, what: "a time") }
    )
    var at: Double?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("An item's index, from 0; with --offset.", valueName: "n"),
        transform: { try Parse.number($0, as: Int.self, what: "an item index") }
    )
    var item: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "A time from the item's start: seconds, m:ss or h:mm:ss; with --item.",
            valueName: "[[h:]m:]s"
        ),
        transform: { try Parse.clockTime($0, what: "an offset") }
    )
    var offset: Double?

    func validate() throws {
        switch (at, item, offset) {
        case (.some, nil, nil), (nil, .some, .some): return
        case (.some, _, _): throw ValidationError("Give either --at or --item with --offset, not both")
        case (nil, .some, nil): throw ValidationError("--item needs --offset, the time into the item")
        case (nil, nil, .some): throw ValidationError("--offset needs --item, the item it is into")
        case (nil, nil, nil): throw ValidationError("Give --at SECONDS, or --item N with --offset SECONDS")
        }
    }

    func run() async throws {
        let (path, at, item, offset) = (file, at, item, offset)
        try await runCommand { _ in
            let file = try PlaybackFile.read(path)
            let answer: any Encodable
            do throws(ScriptError) {
                if let at {
                    answer = try file.map.locate(seconds: at)
                } else {
                    answer = try file.map.elapsed(itemIndex: item!, offsetSeconds: offset!)
                }
            } catch {
                throw SessionError(
                    .positionOutOfRange,
                    lines: error.problems.map { "\(file.name): \(Self.flag($0.location)): \($0.rule)" },
                    underlyingError: error
                )
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            Console.writeStandardOutput(Console.printableJSON(try encoder.encode(answer)) + Data("\n".utf8))
        }
    }

    /// The option a ``PlaybackMap/Argument`` came from.
    static func flag(_ location: String) -> String {
        switch PlaybackMap.Argument(rawValue: location) {
        case .seconds: "--at"
        case .itemIndex: "--item"
        case .offset: "--offset"
        case nil: location
        }
    }
}
