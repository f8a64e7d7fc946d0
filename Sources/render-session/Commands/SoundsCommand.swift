import ArgumentParser
import Foundation
import SessionKit
import SessionTimeline

struct SoundsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sounds",
        abstract: "List a sound library: each sound's id, name, gain, loop and file.",
        discussion: """
            Prints one line per sound, its fields separated by tabs: id, name, gain (- if \
            unset), loop (yes, no, or - if unset), and the file found or "missing (looked for \
            …)" with every path tried. A name is looked for as {file}.caf, .wav, .flac, .mp3, \
            .ogg, .m4a, .mp4, .aac, in that order. Without --sounds, lists the default library, made on \
            first use in $XDG_CACHE_HOME/render-session/sounds/v5 (else ~/.cache/render-session/sounds/v5): \
            gongs, beds (rain, drone, forest, and silent: the timer app's keepalive, digital \
            silence), and the cues of breathing and workout sessions, synthesized. A missing \
            sound makes the exit status 1. The format is in docs/sound.md.

            Example:
              render-session sounds
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @Option(
        help: ArgumentHelp(
            "A sound library: a folder of sound files, with or without a sounds.json (default: the built-in library).",
            valueName: "dir"
        ),
        completion: Completions.folder
    )
    var sounds: String?

    func run() async throws {
        let folder = sounds
        try await runCommand { _ in
            let library = try SoundLibrary.open(folder: folder)
            for line in library.warnings { Console.warning(line) }
            let listing = library.listing()
            Console.printRows(listing.map(Self.fields))
            let missing = listing.filter { if case .missing = $0.lookup { true } else { false } }.map(\.entry.id)
            if !missing.isEmpty {
                throw SessionError(
                    .invalidSoundLibrary,
                    "\(missing.count) of the \(listing.count) sounds in \(library.folder) \(missing.count == 1 ? "is" : "are") missing: \(missing.joined(separator: ", "))"
                )
            }
        }
    }

    /// `rain⇥Rain⇥0.15⇥yes⇥/path/rain.flac`, as fields.
    static func fields(_ item: SoundListing) -> [String] {
        let gain = item.entry.gain.map { SessionTimeline.formatted($0) } ?? "-"
        let loop = item.entry.loop.map { $0 ? "yes" : "no" } ?? "-"
        let file =
            switch item.lookup {
            case .found(let path, _): path
            case .missing(let tried): "missing (looked for \(tried.joined(separator: ", ")))"
            }
        return [item.entry.id, item.entry.name, gain, loop, file]
    }

}
