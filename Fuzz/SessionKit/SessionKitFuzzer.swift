// libFuzzer targets for what SessionKit reads from others, built by SwiftPM with the fuzzer and
// address sanitizers (`RENDER_SESSION_FUZZ=1`, see Package.swift and scripts/fuzz), since
// SessionKit needs SwiftNIO and swift-crypto, which only SwiftPM builds. One binary; the target is
// chosen by `RENDER_SESSION_FUZZ_TARGET`. Internal API through `@testable import` (a debug build).
//
// - `sounds`: the bytes as a library's `sounds.json` (`SoundLibrary.entries(json:name:)`).
//   A rejection is `invalidSoundLibrary`, every line naming the file; an accepted entry has a
//   valid, unique id, a file that is a relative name with no `..` component, a finite gain ≥ 0.
// - `sidecar`: the bytes as the loudness sidecar of a real clip (the fixture cache's shortest),
//   ("Breathe in.", 0.85 s) read through `ClipCache.measureWithLoudness`. Whatever the sidecar says, the result has the
//   clip's own rate, length and gapless flag (from a scan), and a loudness that is nil or within
//   −70…+10 LUFS.
// - `provider`: the bytes as a TTS server's answer: the proxy's JSON (`ProxySpeechProvider.audio`)
//   and, as they are, an OpenAI server's MP3 body, each stored as the clip of "Breathe in." with
//   the length limit (`ClipCache.store`); and the first line as a `Retry-After` header and as an
//   error body. A clip that is stored decodes to its measured length within the limit; a
//   Retry-After is nil or a finite delay ≥ 0; the printed error text holds no control character
//   and at most 300 characters (each escape counted as one). The SwiftPM binary runs without leak
//   detection: Foundation keeps a 4 KiB buffer of an empty file it read and DateFormatter's
//   character sets (the first runs' only reports, not ours).
import Foundation
import SessionAudio
import SessionTimeline

@testable import SessionKit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    switch target {
    case "sounds": fuzzSounds(bytes)
    case "sidecar": fuzzSidecar(bytes)
    case "provider": fuzzProvider(bytes)
    default: fatalError("RENDER_SESSION_FUZZ_TARGET must be sounds, sidecar or provider, not '\(target)'")
    }
    return 0
}

private let target = ProcessInfo.processInfo.environment["RENDER_SESSION_FUZZ_TARGET"] ?? ""

/// `precondition` that keeps its message in any build: the finding's one-line summary.
func expect(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String = "", line: UInt = #line) {
    if !condition() { fatalError("broken promise: \(message())", line: line) }
}

// MARK: - sounds.json

private func fuzzSounds(_ bytes: Data) {
    let entries: [SoundEntry]
    do {
        entries = try SoundLibrary.entries(json: bytes, name: "sounds.json")
    } catch {
        expect(error.code == .invalidSoundLibrary, "\(error.code)")
        expect(error.lines.allSatisfy { $0.hasPrefix("sounds.json: ") }, "\(error.lines)")
        return
    }
    expect(Set(entries.map(\.id)).count == entries.count, "duplicate ids accepted")
    for entry in entries {
        expect(ScriptRules.isValidIdentifier(entry.id), "id \(entry.id)")
        expect(
            !entry.file.hasPrefix("/") && !entry.file.split(separator: "/").contains(".."),
            "a file outside the library accepted: \(entry.file)"
        )
        if let gain = entry.gain { expect(gain.isFinite && gain >= 0, "gain \(gain)") }
    }
}

// MARK: - Loudness sidecars

/// A scratch cache in /dev/shm holding one real clip, made once per process.
private let scratch: (cache: ClipCache, entry: ClipCache.Entry, truth: AudioMeasurement) = {
    let folder = "/dev/shm/render-session-fuzz-\(getpid())"
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let cache = ClipCache(directory: folder)
    let entry = cache.entry(text: "Breathe in.", voice: "espeak:en-us", speed: 1)
    let fixture =
        ProcessInfo.processInfo.environment["RENDER_SESSION_FUZZ_CLIP"]
        ?? "Fixtures/cache/512214808b21cc16f2827048f91cec31a3019c599508f74b8c193ee04f9852a6.mp3"
    guard let clip = FileManager.default.contents(atPath: fixture) else {
        fatalError("no clip at \(fixture): run from the repository's folder, or set RENDER_SESSION_FUZZ_CLIP")
    }
    _ = FileManager.default.createFile(atPath: entry.path, contents: clip)
    guard let truth = try? AudioFileDecoder.measureLoudness(path: entry.path) else {
        fatalError("the clip does not decode")
    }
    atexit { try? FileManager.default.removeItem(atPath: "/dev/shm/render-session-fuzz-\(getpid())") }
    return (cache, entry, truth)
}()

private func fuzzSidecar(_ bytes: Data) {
    let (cache, entry, truth) = scratch
    _ = FileManager.default.createFile(atPath: cache.loudnessPath(forKey: entry.key), contents: bytes)
    guard let source = try? cache.measureWithLoudness(entry) else {
        expect(false, "the clip stopped being measurable because of its sidecar")
        return
    }
    expect(source.sampleRate == truth.sampleRate, "rate \(source.sampleRate) for a \(truth.sampleRate) clip")
    expect(source.frameCount == truth.frameCount, "\(source.frameCount) frames for a \(truth.frameCount)-frame clip")
    expect(source.gapless == truth.gapless, "gapless \(source.gapless)")
    if let loudness = source.loudness {
        expect(LoudnessSidecar.plausibleLoudness.contains(loudness), "loudness \(loudness)")
    }
}

// MARK: - Provider answers

private func fuzzProvider(_ bytes: Data) {
    let (cache, _, _) = scratch
    let text = "Breathe in."
    let limit = ClipLengthLimit(text: text, speed: 1)
    let entry = cache.entry(text: text, voice: "fuzz", speed: 1)
    var answers = [bytes]
    if let audio = try? ProxySpeechProvider.audio(inAnswer: bytes) { answers.append(audio) }
    for audio in answers {
        if let stored = try? cache.store(audio, for: entry, replacingExisting: true, lengthLimit: limit) {
            expect(limit.problem(stored.frameCount, at: stored.sampleRate) == nil, "a clip past the limit stored")
            let again = try? AudioFileDecoder.measureLoudness(path: entry.path)
            expect(
                again?.frameCount == stored.frameCount,
                "a stored clip decodes to \(String(describing: again?.frameCount)), not \(stored.frameCount)"
            )
            try? FileManager.default.removeItem(atPath: entry.path)
        }
        expect(!FileManager.default.fileExists(atPath: entry.path), "a refused answer left a file")
    }
    let line = String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
    if let delay = HTTPTransport.retryAfterSeconds(line) {
        expect(delay.isFinite && delay >= 0, "Retry-After \(line) is \(delay) s")
    }
    // 300 characters, each control character shown as an escape of at most 6, and an ellipsis.
    let shown = HTTPTransport.errorText(bytes)
    expect(shown.count <= 300 * 6 + 1, "\(shown.count) characters of error text")
    expect(
        !shown.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
        "a control character in error text"
    )
}
