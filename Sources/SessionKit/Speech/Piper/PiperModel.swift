internal import Foundation
internal import SessionAudio

/// A Piper voice: its ONNX network (`NAME.onnx`) and the configuration beside it
/// (`NAME.onnx.json`: sample rate, phoneme map, eSpeak voice, inference scales).
/// Its voice is ``Voice/piper(model:)``: `piper:NAME`, such as `piper:en_US-joe-medium`.
package struct PiperModel: Sendable, Equatable {
    /// The model's name: its file name without `.onnx`.
    package let name: String
    /// The `.onnx` file.
    package let modelPath: String
    /// The `.onnx.json` file.
    package let configPath: String

    /// Its voice: `piper:NAME`.
    package var voice: Voice { .piper(model: name) }

    /// Where the copy of the model with Piper's alignment output is kept (``PiperBridge``):
    /// `$XDG_DATA_HOME/render-session/piper-aligned/NAME-BYTES-MTIME.onnx`, named by the model
    /// file's size and modification time, so a model replaced in place gets a copy of its own.
    /// The folder is made if missing; `nil` when it cannot be, or the model cannot be read
    /// (its words are then unavailable, and the bridge says so).
    package func alignedCopyPath(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: modelPath),
            let bytes = attributes[.size] as? Int, let modified = attributes[.modificationDate] as? Date
        else { return nil }
        let folder = PiperInstallation.defaultEnvironmentFolder(environment: environment) + "-aligned"
        guard (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil
        else { return nil }
        let stamp = Int64((modified.timeIntervalSince1970 * 1_000_000).rounded())
        return "\(folder)/\(name)-\(bytes)-\(stamp).onnx"
    }

    /// Why the model's files cannot be loaded as they are, `nil` when both are regular files
    /// (links to them followed): a FIFO planted as either would keep the worker waiting for a
    /// writer forever, and a device would be read without end. Each is opened without waiting
    /// (`O_NONBLOCK`) and its kind read from the open file.
    var fileProblem: String? {
        for path in [modelPath, configPath] {
            let kind: FileKind?
            do {
                kind = try FileDescriptor.open(path, .readOnly, options: [.nonBlocking]).kind()
            } catch {
                return "cannot read \(path): \(FileProblem.describe(error, path: path))"
            }
            switch kind {
            case .regularFile: continue
            case .directory: return "\(path) is a directory, not a file"
            default: return "\(path) is not a regular file (a FIFO, a device or a socket)"
            }
        }
        return nil
    }

    /// Whether `name` can be a model's name: a plain file name (letters, digits, `_`, `-`, `.`,
    /// not starting with a dot), never a path.
    static func isModelName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first != ".", name.utf8.count <= 255 else { return false }
        return name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "_-.".unicodeScalars.contains($0)
        }
    }

    /// The embedded voice that stands in for `voice` when it cannot be had: eSpeak NG in the
    /// model's language, read from its name as Piper names models (`en_US-joe-medium` → `espeak:en-us`),
    /// the language alone (`de`) when eSpeak has no voice for the region, and `espeak:en-us` for a
    /// name that carries no language.
    /// - Parameter languages: the languages eSpeak NG speaks (`en-us`, `de`, …).
    package static func fallbackVoice(for voice: Voice, languages: Set<String>) -> Voice {
        guard case .piper(let name) = voice, let tag = name.split(separator: "-").first,
            tag.range(of: #"^[a-z]{2,3}_[A-Z]{2}$"#, options: .regularExpression) != nil
        else { return .defaultVoice }
        let regional = tag.replacingOccurrences(of: "_", with: "-").lowercased()
        let language = String(regional.prefix { $0 != "-" })
        if languages.contains(regional) { return .espeak(language: regional) }
        if languages.contains(language) { return .espeak(language: language) }
        return .defaultVoice
    }

    /// The models in `folder`: every `NAME.onnx` with a `NAME.onnx.json` beside it, by name.
    static func models(in folder: String) -> [PiperModel] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let names = Set(files)
        return files.filter { $0.hasSuffix(".onnx") && names.contains($0 + ".json") }.sorted().map { file in
            let path = (folder as NSString).appendingPathComponent(file)
            return PiperModel(name: String(file.dropLast(".onnx".count)), modelPath: path, configPath: path + ".json")
        }
    }
}

/// What a model's `.onnx.json` says that the tool shows: its rate, language and quality.
package struct PiperModelDescription: Sendable, Equatable {
    /// The rate the model speaks at.
    package let sampleRate: Int?
    /// The language code, such as `en_US`.
    package let language: String?
    /// Piper's quality name: `x_low`, `low`, `medium`, `high`.
    package let quality: String?

    /// Reads `model`'s configuration; fields it lacks (or a file that is not JSON) are `nil`.
    package init(_ model: PiperModel) {
        struct Config: Decodable {
            struct Audio: Decodable {
                let sample_rate: Int?
                let quality: String?
            }
            struct Language: Decodable { let code: String? }
            let audio: Audio?
            let language: Language?
        }
        // A FIFO planted as the config is not waited on, nor a huge file read (configs are under 100 KiB).
        let bytes = try? AudioFileDecoder.contentsOfRegularFile(
            model.configPath,
            noun: "a voice's config",
            limit: 4 << 20
        )
        let config = bytes.flatMap { try? JSONDecoder().decode(Config.self, from: $0) }
        sampleRate = config?.audio?.sample_rate
        language = config?.language?.code
        quality = config?.audio?.quality
    }
}
