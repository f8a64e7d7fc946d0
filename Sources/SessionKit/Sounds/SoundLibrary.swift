package import Foundation
internal import SessionAudio
internal import SessionTimeline

/// A sound a library's `sounds.json` names: an id to ask for it by, the file that holds it, and
/// how it is meant to be played.
package struct SoundEntry: Sendable, Equatable {
    /// What a script or an option asks for: 1…128 of `[A-Za-z0-9._-]`.
    package var id: String
    /// A name for people; the id when `sounds.json` gives none.
    package var name: String
    /// The file in the library's folder, with or without its extension (see ``SoundLibrary/candidates(for:)``).
    package var file: String
    /// A linear gain, 0 or more, if the entry sets one.
    package var gain: Double?
    /// Whether the sound is meant to be looped, if the entry says.
    package var loop: Bool?

    package init(id: String, name: String? = nil, file: String, gain: Double? = nil, loop: Bool? = nil) {
        self.id = id
        self.name = name ?? id
        self.file = file
        self.gain = gain
        self.loop = loop
    }
}

/// Where a sound was found, or every path where it was looked for.
package enum SoundLookup: Sendable, Equatable {
    /// The file, and the entry that named it, if one did.
    case found(path: String, entry: SoundEntry?)
    /// Every path tried, in the order tried.
    case missing(lookedFor: [String])
}

/// One line of a library's listing: an entry (or, in a folder without `sounds.json`, a file) and
/// where its sound is.
package struct SoundListing: Sendable, Equatable {
    package var entry: SoundEntry
    package var lookup: SoundLookup

    package init(entry: SoundEntry, lookup: SoundLookup) {
        self.entry = entry
        self.lookup = lookup
    }
}

/// A folder of sound files, with a `sounds.json` that names them:
/// `[{"id": "forest", "name": "Forest", "file": "forest-ambience", "gain": 0.15, "loop": true}, …]`.
///
/// `name`, `gain` and `loop` may be left out; keys other than these five are ignored, so an app's
/// own `sounds.json` may carry more. A folder without `sounds.json` is a library of bare file
/// names. docs/sound.md describes the format and the lookup rules.
package struct SoundLibrary: Sendable {
    /// The file extensions tried after a bare name, in order of priority.
    package static let extensions = ["caf", "wav", "flac", "mp3", "ogg", "m4a", "mp4", "aac"]
    /// The name of a library's index.
    package static let indexName = "sounds.json"

    /// The library's folder.
    package let folder: String
    /// The entries of `sounds.json`, in its order; empty when there is none.
    package let entries: [SoundEntry]
    /// Whether the folder has a `sounds.json`.
    package let hasIndex: Bool
    /// Keys of `sounds.json` entries that mean nothing, each a line naming the file, the entry's
    /// path and the nearest key (`lib/sounds.json: [0].gian: is not a field of a sound (did you
    /// mean "gain"?); it is ignored`), for whoever opens the library to say.
    package private(set) var warnings: [String] = []

    /// Opens the library in `folder`, reading `folder/sounds.json` if there is one.
    /// - Throws: ``SessionError`` (``SessionError/Code/invalidSoundLibrary``) when the folder cannot
    ///   be read, or with one line per problem in `sounds.json`, naming the file and the JSON path:
    ///   `lib/sounds.json: [2].gain: -1 must be 0 or more`.
    package init(folder: String) throws(SessionError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) else {
            throw SessionError(.invalidSoundLibrary, "Cannot open the sound library \(folder): no such folder")
        }
        guard isDirectory.boolValue else {
            throw SessionError(
                .invalidSoundLibrary,
                "Cannot open the sound library \(folder): it is a file, not a folder"
            )
        }
        let index = (folder as NSString).appendingPathComponent(Self.indexName)
        self.folder = folder
        guard FileManager.default.fileExists(atPath: index) else {
            entries = []
            hasIndex = false
            return
        }
        let data: Data
        do {
            // A FIFO or device planted as sounds.json is refused, never waited on.
            data = try AudioFileDecoder.contentsOfRegularFile(
                index,
                noun: "a sounds.json file",
                limit: ScriptRules.maximumFileBytes
            )
        } catch {
            throw SessionError(
                .invalidSoundLibrary,
                "\(index): cannot read the file: \(error.reason)",
                underlyingError: error
            )
        }
        entries = try Self.entries(json: data, name: index, warnings: &warnings)
        hasIndex = true
        try checkInside(index: index)
    }

    /// Refuses an entry whose file, once links are resolved, is outside the library's folder (a
    /// link in the folder that points out of it): a library's files stay inside its folder.
    /// - Throws: ``SessionError`` with one line per such entry, naming `sounds.json` and the JSON path.
    private func checkInside(index: String) throws(SessionError) {
        guard let root = FileSystem.resolvedPath(folder) else { return }
        var problems: [String] = []
        for (position, entry) in entries.enumerated() {
            for candidate in candidates(for: entry.file) {
                guard let resolved = FileSystem.resolvedPath(candidate) else { continue }
                if !FileSystem.isInside(resolved, root) {
                    problems.append(
                        "\(index): [\(position)].file: \(quoted(entry.file)) leads to \(resolved), outside the library's folder; a library's files must stay inside its folder"
                    )
                    break
                }
            }
        }
        guard problems.isEmpty else { throw SessionError(.invalidSoundLibrary, lines: problems) }
    }

    /// A library of `entries` in `folder`, as if read from its `sounds.json`.
    package init(folder: String, entries: [SoundEntry]) {
        self.folder = folder
        self.entries = entries
        hasIndex = true
    }

    // MARK: - sounds.json

    /// The entries in the `sounds.json` bytes `data`; `name` stands for the file in errors.
    /// - Throws: ``SessionError`` with one line per problem: `name: [2].gain: -1 must be 0 or more`.
    package static func entries(json data: Data, name: String) throws(SessionError) -> [SoundEntry] {
        var warnings: [String] = []
        return try entries(json: data, name: name, warnings: &warnings)
    }

    /// The keys an entry of `sounds.json` has: ours, and the app's own (seed 002: `filename` for
    /// `file`, `volume` for `gain`, a localized `name` and `description`, `iconName`).
    static let entryKeys = ["id", "name", "file", "gain", "loop", "filename", "volume", "description", "iconName"]

    /// ``entries(json:name:)``, adding to `warnings` a line for each key an entry does not have.
    package static func entries(
        json data: Data,
        name: String,
        warnings: inout [String]
    ) throws(SessionError) -> [SoundEntry] {
        // The scripts' parser, the project's one JSON reader: a key twice in one object is an
        // error at its line and place, a byte-order mark is skipped, and a value's kind is what
        // the text says (Foundation's reader makes `true` a number and keeps the last of two keys).
        let root: JSONValue
        do {
            root = try JSONValue.parse(data)
        } catch {
            throw SessionError(
                .invalidSoundLibrary,
                lines: error.problems.map { "\(name): \($0)" },
                underlyingError: error
            )
        }
        guard case .array(let items) = root else {
            throw SessionError(
                .invalidSoundLibrary,
                "\(name): (top level): expected an array of sounds, found \(root.kindName)"
            )
        }
        var problems: [String] = []
        var entries: [SoundEntry] = []
        var firstIndex: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let path = "[\(index)]"
            func report(_ key: String?, _ rule: String) {
                problems.append("\(name): \(path)\(key.map { ".\($0)" } ?? ""): \(rule)")
            }
            guard case .object(let object) = item else {
                report(nil, "expected an object, found \(item.kindName)")
                continue
            }
            // An app's own keys (icons, translations) are welcome; one that is a letter or two
            // from a key of ours is a typo, whose value would silently not apply.
            for key in object.keys.sorted() where !entryKeys.contains(key) {
                let nearest = didYouMean(key, among: entryKeys)
                guard !nearest.isEmpty else { continue }
                warnings.append("\(name): \(path).\(key): is not a field of a sound\(nearest); it is ignored")
            }
            func string(_ key: String, required: Bool) -> String? {
                guard let value = object[key], value != .null else {
                    if required { report(key, "is required but missing") }
                    return nil
                }
                guard case .string(let text) = value else {
                    report(key, "expected a string, found \(value.kindName)")
                    return nil
                }
                guard !text.isEmpty else {
                    report(key, "must not be empty")
                    return nil
                }
                return text
            }
            let id = string("id", required: true)
            if let id {
                if !ScriptRules.isValidIdentifier(id) {
                    report(
                        "id",
                        "\(quoted(id)) may contain only letters, digits, '.', '_' and '-' (1 to \(ScriptRules.maximumIdLength) of them), not '.' or '..'"
                    )
                } else if let first = firstIndex[id] {
                    report("id", "\(quoted(id)) is already the id of [\(first)]")
                } else {
                    firstIndex[id] = index
                }
            }
            // A name is a string, or the app's localized names (`{"en": "Forest", "de": "Wald"}`):
            // English, else the first language in order.
            var displayName: String?
            if case .object(let names)? = object["name"] {
                let language = names["en"] != nil ? "en" : names.keys.sorted().first
                if let language {
                    if case .string(let text)? = names[language], !text.isEmpty {
                        displayName = text
                    } else {
                        report("name.\(language)", "expected a non-empty string, found \(names[language]!.kindName)")
                    }
                }
            } else {
                displayName = string("name", required: false)
            }
            // The file as we name it (`file`) or as the app does (`filename`), not both.
            var file: String?
            switch (object["file"], object["filename"]) {
            case (nil, nil), (.null?, nil), (nil, .null?), (.null?, .null?):
                report("file", "is required but missing (or \"filename\", as an app's sounds.json names it)")
            case (_, nil), (_, .null?): file = string("file", required: true)
            case (nil, _), (.null?, _): file = string("filename", required: true)
            default: report("filename", "names the file a second time, after \"file\"; give one of them")
            }
            let fileKey = object["file"] == nil || object["file"] == .null ? "filename" : "file"
            if let file, file.hasPrefix("/") {
                report(fileKey, "\(quoted(file)) must be a name in the library's folder, not an absolute path")
            } else if let file, file.split(separator: "/", omittingEmptySubsequences: false).contains("..") {
                report(
                    fileKey,
                    "\(quoted(file)) must name a file inside the library's folder, not climb out of it with '..'"
                )
            }
            // The gain as we name it (`gain`) or as the app does (`volume`), not both.
            var gain: Double?
            let gainKeys = ["gain", "volume"].filter { object[$0] != nil && object[$0] != .null }
            if gainKeys.count == 2 { report("volume", "sets the gain a second time, after \"gain\"; give one of them") }
            if gainKeys.count == 1, let key = gainKeys.first, let value = object[key] {
                if case .number(let number) = value {
                    if !number.isFinite {
                        report(key, "the number is too large to represent")
                    } else if number < 0 {
                        report(key, "\(formatted(number)) must be 0 or more")
                    } else {
                        gain = number
                    }
                } else {
                    report(key, "expected a number, found \(value.kindName)")
                }
            }
            var loop: Bool?
            if let value = object["loop"], value != .null {
                if case .bool(let flag) = value {
                    loop = flag
                } else {
                    report("loop", "expected true or false, found \(value.kindName)")
                }
            }
            if let id, let file {
                entries.append(SoundEntry(id: id, name: displayName, file: file, gain: gain, loop: loop))
            }
        }
        guard problems.isEmpty else { throw SessionError(.invalidSoundLibrary, lines: problems) }
        return entries
    }

    /// `entries` as a `sounds.json`: one entry a line, keys in the order id, name, file, gain, loop.
    package static func json(_ entries: [SoundEntry]) -> Data {
        let lines = entries.map { entry in
            var fields = [
                "\"id\": \(jsonString(entry.id))", "\"name\": \(jsonString(entry.name))",
                "\"file\": \(jsonString(entry.file))",
            ]
            if let gain = entry.gain { fields.append("\"gain\": \(formatted(gain))") }
            if let loop = entry.loop { fields.append("\"loop\": \(loop)") }
            return "  {" + fields.joined(separator: ", ") + "}"
        }
        return Data(("[\n" + lines.joined(separator: ",\n") + "\n]\n").utf8)
    }

    // MARK: - Lookup

    /// Finds a sound: a path (only when `pathsAllowed`: a name the command line gave), an entry's
    /// id, or a bare file name in the folder.
    ///
    /// With `pathsAllowed`, an argument containing `/`, or naming an existing file, is a path,
    /// used as it is. Without it (a name a script gave), nothing outside the library is looked
    /// at, not even a file of that name in the working folder, and a name with `/` is never found.
    /// Otherwise it is an entry's id (the entry's `file` is looked for, see ``candidates(for:)``),
    /// else a bare file name, looked for the same way (with the first entry whose `file` it is).
    /// Names match regardless of case, as the apps' own lookups do (seed 003 asks for
    /// `gong-ende` and ships `gong-Ende.caf`): an exact match wins, then the first that differs
    /// only in case.
    package func resolve(_ nameOrPath: String, pathsAllowed: Bool = true) -> SoundLookup {
        if pathsAllowed, nameOrPath.contains("/") || Self.isFile(nameOrPath) {
            return Self.isFile(nameOrPath) ? .found(path: nameOrPath, entry: nil) : .missing(lookedFor: [nameOrPath])
        }
        if ScriptRules.soundNameProblem(nameOrPath) != nil { return .missing(lookedFor: []) }
        let folded = nameOrPath.lowercased()
        if let entry = entries.first(where: { $0.id == nameOrPath })
            ?? entries.first(where: { $0.id.lowercased() == folded })
        {
            return lookup(entry)
        }
        let tried = candidates(for: nameOrPath)
        if let path = firstFileInside(tried) {
            return .found(path: path, entry: entries.first { $0.file.lowercased() == folded })
        }
        return .missing(lookedFor: tried)
    }

    /// The first of `paths` that is a file inside the folder, by its exact name or another case of
    /// it. A link that leads out of the folder is passed over, for an entry's file and a bare name
    /// alike: a name never reaches a file outside the library.
    private func firstFileInside(_ paths: [String]) -> String? {
        let root = FileSystem.resolvedPath(folder)
        let inside = { (path: String) in
            guard let root, let resolved = FileSystem.resolvedPath(path) else { return true }
            return FileSystem.isInside(resolved, root)
        }
        if let path = paths.first(where: { Self.isFile($0) && inside($0) }) { return path }
        if let path = caseInsensitiveMatch(among: paths), inside(path) { return path }
        return nil
    }

    /// Where `entry`'s file is, or every path tried. A file that is outside the folder (through
    /// `..` or a link out of it) is never found; a file whose name differs only in case is.
    package func lookup(_ entry: SoundEntry) -> SoundLookup {
        let tried = candidates(for: entry.file)
        if let path = firstFileInside(tried) { return .found(path: path, entry: entry) }
        return .missing(lookedFor: tried)
    }

    /// The first of `paths` (in their order) that exists under another case of its file name,
    /// as that file's path: `…/gong-Ende.caf` for `…/gong-ende.caf`.
    func caseInsensitiveMatch(among paths: [String]) -> String? {
        var listings: [String: [String]] = [:]
        for path in paths {
            let parent = (path as NSString).deletingLastPathComponent
            let folded = (path as NSString).lastPathComponent.lowercased()
            if listings[parent] == nil {
                listings[parent] = ((try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []).sorted()
            }
            if let match = listings[parent]?.first(where: { $0.lowercased() == folded }) {
                let candidate = (parent as NSString).appendingPathComponent(match)
                if Self.isFile(candidate) { return candidate }
            }
        }
        return nil
    }

    /// The paths tried for `file`, in order: `folder/file.caf`, `.wav`, `.flac`, `.mp3`, `.ogg`;
    /// a `file` that already ends in one of these extensions is tried as it is first, then its
    /// stem with the others.
    package func candidates(for file: String) -> [String] {
        let base = (folder as NSString).appendingPathComponent(file)
        let fileExtension = (file as NSString).pathExtension
        if Self.extensions.contains(fileExtension.lowercased()) {
            let stem = String(base.dropLast(fileExtension.count + 1))
            return [base] + Self.extensions.map { "\(stem).\($0)" }.filter { $0 != base }
        }
        return Self.extensions.map { "\(base).\($0)" }
    }

    /// What the library holds: each entry of `sounds.json` in order; without one, each sound file
    /// in the folder (by stem, sorted, the stem as id and name).
    package func listing() -> [SoundListing] {
        if hasIndex {
            return entries.map { SoundListing(entry: $0, lookup: lookup($0)) }
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let stems = Set(
            names.filter { Self.extensions.contains(($0 as NSString).pathExtension.lowercased()) }
                .map { ($0 as NSString).deletingPathExtension }
        )
        return stems.sorted().map { stem in
            SoundListing(entry: SoundEntry(id: stem, file: stem), lookup: resolve(stem))
        }
    }

    /// Whether `path` is a file (or a link to one), not a folder.
    static func isFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }

    // MARK: - The default library

    /// `$XDG_CACHE_HOME/render-session/sounds/v5`, else `~/.cache/render-session/sounds/v5`: beside
    /// the clip cache. `v5` changes whenever the synthesized sounds do, so that a library made by
    /// an older version (`v1` had no cues, `v2` no `forest` or `silent`, `v3` bowls that died in 9 s,
    /// `v4` beds that were looped files, not the first 24 s of the bed a session plays) is never
    /// taken for this one.
    package static func defaultFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let cache = (ClipCache.defaultDirectory(environment: environment) as NSString).deletingLastPathComponent
        return cache + "/sounds/v5"
    }

    /// The default library's entries: the gongs and beds (seed 002's `forest` and `silent` under
    /// its app's ids and volume), the names a meditation timer uses for two of them
    /// (`gong-dreimal`, `gong-ende`), then the cues under the names its breathing and workout
    /// screens ask for (seed 003).
    package static let builtinEntries: [SoundEntry] = [
        SoundEntry(id: "gong", name: "Gong", file: "gong", loop: false),
        SoundEntry(id: "triple-gong", name: "Triple gong", file: "triple-gong", loop: false),
        SoundEntry(id: "completion", name: "Completion gong", file: "completion", loop: false),
        SoundEntry(id: "rain", name: "Rain", file: "rain", gain: 0.15, loop: true),
        SoundEntry(id: "drone", name: "Drone", file: "drone", gain: 0.15, loop: true),
        SoundEntry(id: "forest", name: "Forest", file: "forest", gain: 0.15, loop: true),
        SoundEntry(id: "silent", name: "Silent", file: "silent", gain: 0.15, loop: true),
        SoundEntry(id: "gong-dreimal", name: "Triple gong", file: "triple-gong", loop: false),
        SoundEntry(id: "gong-ende", name: "Completion gong", file: "completion", loop: false),
        SoundEntry(id: "einatmen", name: "Breathe in", file: "einatmen", loop: false),
        SoundEntry(id: "halten-ein", name: "Hold after breathing in", file: "halten-ein", loop: false),
        SoundEntry(id: "ausatmen", name: "Breathe out", file: "ausatmen", loop: false),
        SoundEntry(id: "halten-aus", name: "Hold after breathing out", file: "halten-aus", loop: false),
        SoundEntry(id: "auftakt", name: "Get ready", file: "auftakt", loop: false),
        SoundEntry(id: "kurz", name: "Short beep", file: "kurz", loop: false),
        SoundEntry(id: "lang", name: "Long beep", file: "lang", loop: false),
        SoundEntry(id: "last-round", name: "Last round", file: "last-round", loop: false),
        SoundEntry(id: "ausklang", name: "Closing chime", file: "ausklang", loop: false),
    ]

    /// The library in `folder`, or the default one (made on first use) when `folder` is `nil`.
    package static func open(
        folder: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(SessionError) -> SoundLibrary {
        if let folder { return try SoundLibrary(folder: folder) }
        return try builtin(environment: environment)
    }

    /// The default library in ``defaultFolder(environment:)``, made on first use.
    ///
    /// The first use synthesizes every `SynthesizedSound` and writes each as a
    /// 24-bit FLAC file, `{id}.flac`, then `sounds.json`, each atomically, under a lock on the
    /// folder so that two processes starting at once make it once. Later uses find `sounds.json`
    /// and every file in place and only read `sounds.json`. A missing file (one deleted by hand) is
    /// made again.
    package static func builtin(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(SessionError) -> SoundLibrary {
        let folder = defaultFolder(environment: environment)
        if !isBuiltinComplete(folder) {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw SessionError(
                    .cannotWrite,
                    "Cannot create the sound library folder \(folder): \(FileProblem.describe(error, path: folder))",
                    underlyingError: error
                )
            }
            let lock = try FolderLock(folder: folder, waiting: {})
            try withExtendedLifetime(lock) { () throws(SessionError) in
                if !isBuiltinComplete(folder) { try materialize(in: folder) }
            }
        }
        return try SoundLibrary(folder: folder)
    }

    /// The synthesized bed the file at `path` is, when it is one of the default library's beds
    /// (rain, drone, forest): such a bed is made for as long as the session plays it
    /// (`SynthesizedBed`) rather than looped, so it never repeats. A copy of the file elsewhere is
    /// a user's bed and loops. `silent` loops: its zeros cannot repeat audibly.
    static func synthesizedBed(
        at path: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> SynthesizedSound? {
        let folder = defaultFolder(environment: environment)
        let standardized = (path as NSString).standardizingPath
        return [SynthesizedSound.rain, .drone, .forest].first {
            (builtinPath($0, in: folder) as NSString).standardizingPath == standardized
        }
    }

    private static func isBuiltinComplete(_ folder: String) -> Bool {
        isFile((folder as NSString).appendingPathComponent(indexName))
            && SynthesizedSound.allCases.allSatisfy { isFile(builtinPath($0, in: folder)) }
    }

    private static func builtinPath(_ sound: SynthesizedSound, in folder: String) -> String {
        (folder as NSString).appendingPathComponent("\(sound.rawValue).flac")
    }

    /// Writes the sound files the folder lacks, each a default sound's mono samples as 24-bit FLAC
    /// at the default compression level, then `sounds.json`.
    private static func materialize(in folder: String) throws(SessionError) {
        for sound in SynthesizedSound.allCases {
            let path = builtinPath(sound, in: folder)
            guard !isFile(path) else { continue }
            var samples = SampleFrames(sound.samples(), sampleRate: SynthesizedSound.sampleRate, channelCount: .mono)
            let written: WrittenAudio
            do {
                written = try AudioOutput.write(
                    &samples,
                    to: OutputTarget(destination: .path(path), kind: .replace(path: path)),
                    encoder: .flac24,
                    metadata: AudioMetadata()
                )
            } catch {
                guard let cause = error.underlyingError as? AudioError else { throw error }
                // The AudioError whose reason is the line: the SessionError caught only carried it here.
                throw SessionError(
                    .cannotWrite,
                    "Cannot write the default sound \(path): \(cause.reason)",
                    underlyingError: cause
                )
            }
            try written.pending?.commit()
        }
        try AtomicFile.write(json(builtinEntries), to: (folder as NSString).appendingPathComponent(indexName))
    }
}

/// `text` as a JSON string.
private func jsonString(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": result += "\\\""
        case "\\": result += "\\\\"
        case "\n": result += "\\n"
        case "\t": result += "\\t"
        case "\r": result += "\\r"
        case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result + "\""
}
