internal import Crypto
package import Foundation
package import SessionKit
package import SessionTimeline

/// One `POST /v1/renders` body, read and checked: `{"script": {…}, "options": {…}}`.
///
/// The options are the render command's, by their JSON names (docs/serve.md): `format`, `seed`,
/// `bitrate`, `quality`. Everything that decides the bytes (the script as canonical JSON, the
/// options, the server's voice, cache and sounds, the tool's version) goes into ``id``, so the
/// same request is the same URL, and a URL's bytes never change.
package struct RenderRequest: Sendable {
    /// The script, validated.
    package var script: Script
    /// The audio format; WAV unless asked.
    package var format: AudioFileFormat
    /// The seed of the script's random choices: the one asked for, else one drawn from the
    /// script's own digest, so that an unseeded request still names one file.
    package var seed: UInt64
    /// A constant bit rate in kb/s, for a lossy format.
    package var bitrate: Int?
    /// A variable-rate quality, for a lossy format.
    package var quality: Double?
    /// The script as canonical JSON (sorted keys): what the digest covers.
    private var canonicalScript: Data

    /// The option names a request may carry.
    package static let optionNames: Set<String> = ["format", "seed", "bitrate", "quality"]

    /// Reads `body`. A problem is thrown as ``RenderRequest/Problem``, one line per rule broken,
    /// each naming its JSON path (`options.format: …`, `script.segments[0].text: …`).
    package init(body: Data) throws(Problem) {
        let fields: [String: JSONValue]
        do {
            guard case .object(let object) = try JSONDecoder().decode(JSONValue.self, from: body) else {
                throw Problem(["the body is not a JSON object with \"script\" and \"options\""])
            }
            fields = object
        } catch let problem as Problem {
            throw problem
        } catch {
            throw Problem(["the body is not JSON"])
        }
        var problems = fields.keys.filter { $0 != "script" && $0 != "options" }.sorted().map {
            "\($0): not a field of a render request (script, options)"
        }
        guard let scriptValue = fields["script"], case .object = scriptValue else {
            throw Problem(problems + ["script: missing, or not a JSON object"])
        }
        guard case .object(let options) = fields["options"] ?? .object([:]) else {
            throw Problem(problems + ["options: not a JSON object"])
        }
        problems += options.keys.filter { !Self.optionNames.contains($0) }.sorted().map {
            "options.\($0): not an option of a render (\(Self.optionNames.sorted().joined(separator: ", ")))"
        }
        var format = AudioFileFormat.wav
        if let value = options["format"] {
            if case .string(let name) = value, let named = AudioFileFormat(fileExtension: name) {
                format = named
            } else {
                problems.append("options.format: not a format (wav, flac, mp3, opus, ogg, m4a, m4b)")
            }
        }
        var seed: UInt64?
        if let value = options["seed"] {
            if let whole = value.wholeNumber, (0...Self.largestSeed).contains(whole) {
                seed = UInt64(whole)
            } else {
                problems.append("options.seed: not a whole number from 0 to \(Self.largestSeed)")
            }
        }
        if let value = options["bitrate"] {
            if let whole = value.wholeNumber, (1...1_000).contains(whole) {
                bitrate = Int(whole)
            } else {
                problems.append("options.bitrate: not a whole number of kb/s from 1 to 1000")
            }
        }
        if let value = options["quality"] {
            if let number = value.number, number.isFinite {
                quality = number
            } else {
                problems.append("options.quality: not a number")
            }
        }
        let canonical: Data
        do {
            canonical = try SortedJSON.encode(scriptValue)
        } catch {
            throw Problem(problems + ["script: cannot be written back as JSON"])
        }
        do {
            script = try Script(json: canonical)
        } catch {
            throw Problem(problems + error.problems.map { $0.location.isEmpty ? "script: \($0.rule)" : "script.\($0)" })
        }
        guard problems.isEmpty else { throw Problem(problems) }
        self.format = format
        canonicalScript = canonical
        self.seed = seed ?? SHA256.hash(data: canonical).prefix(8).reduce(0) { $0 << 8 | UInt64($1) } % 1_000_000_000
    }

    /// The largest seed a request may give: JSON's numbers are exact to 2^53.
    package static let largestSeed: Int64 = 1 << 53

    /// The render's id: 32 hexadecimal digits of the SHA-256 of everything that decides its bytes.
    package func id(pipeline: SessionPipeline) -> String {
        var hash = SHA256()
        hash.update(data: Data("render-session \(SessionKitVersion.current)\n".utf8))
        hash.update(data: canonicalScript)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let settings = Settings(
            format: format.fileExtension,
            seed: seed,
            bitrate: bitrate,
            quality: quality,
            clips: pipeline.clips,
            plan: pipeline.plan
        )
        hash.update(data: (try? encoder.encode(settings)) ?? Data())
        return hash.finalize().prefix(16).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// What the digest covers besides the script.
    private struct Settings: Encodable {
        var format: String
        var seed: UInt64
        var bitrate: Int?
        var quality: Double?
        var clips: ClipIdentity
        var plan: PlanSettings
    }

    /// Why a request body cannot be rendered: one line per rule broken.
    package struct Problem: Error, Sendable {
        package var lines: [String]
        init(_ lines: [String]) { self.lines = lines }
    }
}

extension String {
    /// The string with `0`s before it, to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
