import Foundation
internal import SessionAudio
internal import SessionTimeline

/// What a clip's marks sidecar, `{key}.marks.json` beside `{key}.mp3`, records: where the clip's
/// words and sentences are, as the engine that spoke it said (``SpeechResult/marks``), and the
/// size and SHA-256 of the exact bytes they describe, so that marks are never trusted for
/// another clip (one replaced, or swapped in by hand).
///
/// ```json
/// {
///   "bytes" : 14421,
///   "sentences" : [ { "frameCount" : 30102, "startFrame" : 2210, "text" : "Notice the breath." } ],
///   "sha256" : "9c1e…",
///   "sampleRate" : 22050,
///   "version" : 1,
///   "words" : [ { "frameCount" : 8820, "startFrame" : 2210, "text" : "Notice" }, … ]
/// }
/// ```
/// docs/cache.md describes when it is written and trusted.
struct MarksSidecar: ClipSidecar, Equatable {
    /// The format's version; a sidecar with another is not read.
    static let version = 1
    /// The largest sidecar read: a clip of a 5,000-character text has about a thousand words.
    static let maximumBytes = 4 << 20

    var version: Int
    /// The clip file's size in bytes.
    var bytes: Int
    /// Lowercase hex SHA-256 of the clip file.
    var sha256: String
    var sampleRate: SampleRate
    var words: [SpeechMark]
    var sentences: [SpeechMark]

    init(_ marks: SpeechMarks, of clip: ClipFingerprint) {
        version = Self.version
        bytes = clip.bytes
        sha256 = clip.sha256
        sampleRate = marks.sampleRate
        words = marks.words
        sentences = marks.sentences
    }

    /// The marks it records.
    var marks: SpeechMarks { SpeechMarks(sampleRate: sampleRate, words: words, sentences: sentences) }
}

/// A sidecar beside a clip in the cache, in JSON, of a format with a version: read only from a
/// regular file of a bounded size in its own version, written atomically or not at all.
protocol ClipSidecar: Codable {
    /// The format's version; a sidecar with another is not read.
    static var version: Int { get }
    /// The largest sidecar read.
    static var maximumBytes: Int { get }
    var version: Int { get }
    /// Whether the values read are ones a measurement can give; a sidecar whose are not is not
    /// read (true unless a sidecar says otherwise).
    var isPlausible: Bool { get }
}

extension ClipSidecar {
    var isPlausible: Bool { true }

    /// The sidecar at `path`, if it is a regular file of at most ``maximumBytes`` in this format
    /// (a FIFO is not waited on, a link not followed).
    static func read(from path: String) -> Self? {
        guard let file = try? FileDescriptor.open(path, .readOnly, options: [.noFollow, .nonBlocking]),
            (try? file.kind()) == .regularFile,
            let data = try? file.readToEnd(limit: maximumBytes),
            let sidecar = try? JSONDecoder().decode(Self.self, from: data),
            sidecar.version == version, sidecar.isPlausible
        else { return nil }
        return sidecar
    }

    /// Writes the sidecar atomically, or nothing if the folder cannot be written: a sidecar only
    /// saves work (or says what would otherwise be unknown, never guessed).
    func write(to path: String) {
        let file = AtomicFile(destination: path, removingStaleTemporaries: false)
        do {
            try CanonicalJSON.encode(self).write(to: URL(fileURLWithPath: file.temporaryPath))
            try file.commit()
        } catch {
            file.discard()
        }
    }
}

extension ClipCache {
    /// Where the marks sidecar of the clip with `key` is stored: `{key}.marks.json`.
    package func marksPath(forKey key: String) -> String {
        (directory as NSString).appendingPathComponent("\(key).marks.json")
    }

    /// The marks of the entry's clip, measured as `clip`: from its sidecar, when there is one that
    /// describes the clip's exact bytes and whose marks fit the clip (its rate, and every mark
    /// inside it, in order); `nil` otherwise. Only a clip with a sidecar is read to be hashed.
    func marks(of entry: Entry, measured clip: AudioSourceInfo) -> SpeechMarks? {
        let path = marksPath(forKey: entry.key)
        guard FileManager.default.fileExists(atPath: path), let sidecar = MarksSidecar.read(from: path),
            let fingerprint = ClipFingerprint(path: entry.path),
            sidecar.bytes == fingerprint.bytes, sidecar.sha256 == fingerprint.sha256,
            sidecar.marks.problem(forClipOf: clip.frameCount, at: clip.sampleRate) == nil
        else { return nil }
        return sidecar.marks
    }

    /// The marks of the entry's clip, spoken before by the embedded voice in `language` at `speed`
    /// without its marks being kept (a cache from before marks, or the `espeak-ng` command's):
    /// recovered by speaking the text again and aligning it with the clip
    /// (``EmbeddedVoice/recoveredMarks(text:voice:speed:clipAt:)``), and kept in the clip's
    /// sidecar for next time. `nil` when the clip is not that speech of its text, eSpeak NG cannot
    /// be had, or the clip changed meanwhile: its words are then unknown, never guessed.
    func recoveredMarks(
        of entry: Entry,
        measured clip: AudioSourceInfo,
        language: String,
        speed: Double
    ) -> SpeechMarks? {
        guard let before = ClipFingerprint(path: entry.path),
            let marks = try? EmbeddedVoice.recoveredMarks(
                text: entry.text,
                voice: language,
                speed: speed,
                clipAt: entry.path
            ),
            marks.problem(forClipOf: clip.frameCount, at: clip.sampleRate) == nil,
            ClipFingerprint(path: entry.path) == before
        else { return nil }
        MarksSidecar(marks, of: before).write(to: marksPath(forKey: entry.key))
        return marks
    }
}
