import ArgumentParser
import SessionKit
import SessionTimeline

/// What a shell completes each value with (`render-session --generate-completion-script bash`):
/// files of the kind an option reads or writes, folders, the fixed values an option takes, and
/// the voices and sounds this machine has, asked of the tool itself when the user presses tab.
enum Completions {
    /// A script: JSON (or `-` for standard input, typed by hand).
    static let script = CompletionKind.file(extensions: ["json"])
    /// A Markdown file of meditations.
    static let markdown = CompletionKind.file(extensions: ["md"])
    /// A timeline or queue JSON file.
    static let json = CompletionKind.file(extensions: ["json"])
    /// An audio file in a format the tool writes and reads.
    static let audio = CompletionKind.file(extensions: AudioFileFormat.allCases.map(\.fileExtension))
    /// A folder.
    static let folder = CompletionKind.directory
    /// What `--format` takes.
    static let format = CompletionKind.list(AudioFileFormat.allCases.map(\.rawValue))
    /// What `--loudness` takes besides a number: `off` and the presets.
    static let loudness = CompletionKind.list(["off"] + LoudnessPreset.allCases.map(\.rawValue))
    /// An on/off switch's values.
    static let onOff = CompletionKind.list(["on", "off"])

    /// The voices of ``VoiceCatalog`` on this machine (eSpeak NG's, Piper's models in the default
    /// folders), by id.
    static let voice = CompletionKind.custom { _, _, prefix in
        VoiceCatalog().voices.map(\.id).filter { $0.hasPrefix(prefix) }
    }

    /// The default sound library's names (made on first use), then files: a sound option takes
    /// either.
    static let sound = CompletionKind.custom { _, _, prefix in
        let names = (try? SoundLibrary.builtin())?.entries.map(\.id) ?? []
        return names.filter { $0.hasPrefix(prefix) }
    }
}
