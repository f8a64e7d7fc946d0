package import Foundation
internal import SessionAudio
internal import SessionTimeline

/// Every voice the tool can speak in on this machine, as `render-session voices` lists them:
/// eSpeak NG's (always there), the Piper models on the search path (and Piper's default voice,
/// installed or not), and the two servers' voices with whether they are set up.
package struct VoiceCatalog: Sendable, Encodable {
    /// One voice.
    package struct Voice: Sendable, Encodable, Equatable {
        /// The voice id `--voice` takes.
        package let id: String
        /// `espeak`, `piper`, `proxy` or `openai`.
        package let provider: String
        /// The language it speaks, as its provider names it (`en-us`, `en_US`); `nil` when not known.
        package let language: String?
        /// Whether it can speak now, without installing or configuring anything.
        package let available: Bool
        /// What else to know: the model file, what is missing, or what it needs.
        package let detail: String
    }

    /// The Piper engine: where it is looked for and whether it is there.
    package struct PiperEngine: Sendable, Encodable, Equatable {
        package let python: String
        package let installed: Bool
        package let modelFolders: [String]
    }

    package let voices: [Voice]
    package let piper: PiperEngine

    /// The voices on this machine: Piper's models in `piperModelFolders` first (`nil` for the
    /// default search path), and the servers judged by what is set up: the proxy at `proxyURL`
    /// (`nil`: none), an OpenAI-compatible server's `model` with its key in `apiKeyVariable`.
    package init(
        piperModelFolders: [String]? = nil,
        proxyURL: URL? = nil,
        model: String = OpenAISpeechProvider.defaultModel,
        apiKeyVariable: String = OpenAISpeechProvider.defaultAPIKeyVariable,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        let installation = PiperInstallation.located(modelFolders: piperModelFolders, environment: environment)
        piper = PiperEngine(
            python: installation.python,
            installed: installation.engineInstalled,
            modelFolders: installation.modelFolders
        )
        var voices: [Voice] = []
        let models = installation.models
        for model in models {
            let description = PiperModelDescription(model)
            let rate = description.sampleRate.map { "\($0) Hz" } ?? "rate unknown"
            voices.append(
                Voice(
                    id: model.voice.id,
                    provider: "piper",
                    language: description.language,
                    available: installation.engineInstalled,
                    detail: installation.engineInstalled
                        ? "\(model.modelPath) (\(rate))"
                        : "\(model.modelPath); no Piper engine at \(installation.python)"
                )
            )
        }
        if !models.contains(where: { $0.voice == .piperDefault }) {
            voices.append(
                Voice(
                    id: SessionKit.Voice.piperDefault.id,
                    provider: "piper",
                    language: "en_US",
                    available: false,
                    detail: "not installed (scripts/setup-piper installs the engine and this voice)"
                )
            )
        }
        let embedded = (try? EmbeddedVoice.voices()) ?? []
        var seen = Set<String>()
        for voice in embedded {
            guard let language = voice.languages.first, seen.insert(language).inserted else { continue }
            voices.append(
                Voice(
                    id: SessionKit.Voice.espeak(language: language).id,
                    provider: "espeak",
                    language: language,
                    available: true,
                    detail: voice.name
                )
            )
        }
        voices.append(
            Voice(
                id: ProviderKind.proxy.defaultVoice.id,
                provider: "proxy",
                language: "en-US",
                available: proxyURL != nil,
                detail: proxyURL != nil
                    ? "the proxy at \(proxyURL.map(redacted) ?? "") chooses the voice"
                    : "needs \(SettingReference.proxyProvider.marker) (the backend chooses the voice)"
            )
        )
        let keySet = !(environment[apiKeyVariable] ?? "").isEmpty
        for name in Self.openAIVoices {
            voices.append(
                Voice(
                    id: name,
                    provider: "openai",
                    language: nil,
                    available: keySet,
                    detail: keySet ? "model \(model)" : "needs an API key in $\(apiKeyVariable)"
                )
            )
        }
        self.voices = voices
    }

    /// The voices of OpenAI's speech API (`/v1/audio/speech`).
    package static let openAIVoices = [
        "alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer",
    ]
}
