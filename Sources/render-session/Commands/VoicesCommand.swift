import ArgumentParser
import Foundation
import SessionKit
import SessionTimeline

struct VoicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "voices",
        abstract: "List every voice the tool can speak in: eSpeak NG, Piper models, the servers.",
        discussion: """
            Prints one line per voice, its fields separated by tabs: the voice id --voice takes, \
            the provider, the language (- if unknown), available or unavailable, and the model \
            file, the eSpeak voice's name, or what it needs. Piper models are looked for in \
            --piper-models, else $RENDER_SESSION_PIPER_MODELS, else the voice packages installed \
            with the engine (scripts/setup-piper); Piper's default voice is listed even when not \
            installed. The proxy counts as set up with --provider proxy --tts-url, OpenAI's \
            voices when their API key variable is set. --json prints the same as one JSON object.

            Examples:
              render-session voices
              render-session voices --json --piper-models ~/voices
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @OptionGroup var piper: PiperModelOptions

    @Option(help: ArgumentHelp("Judge the proxy as set up with this provider and --tts-url.", valueName: "name"))
    var provider: ProviderKind = .espeak

    @Option(name: .customLong("tts-url"), help: ArgumentHelp("The proxy's base URL.", valueName: "url"))
    var ttsURL: String?

    @Option(
        name: .customLong("api-key-env"),
        help: ArgumentHelp("The environment variable holding the OpenAI API key.", valueName: "name")
    )
    var apiKeyVariable: String = "OPENAI_API_KEY"

    @Flag(help: "Print one JSON object: the voices and where the Piper engine and models are looked for.")
    var json = false

    func run() async throws {
        let (folders, json) = (piper.folders, json)
        let proxyURL = provider == .proxy ? ttsURL.flatMap(URL.init(string:)) : nil
        let apiKeyVariable = apiKeyVariable
        // eSpeak NG's list and the model folders are read on the pool, as every command's work is.
        try await runCommand { _ in
            Self.list(
                VoiceCatalog(piperModelFolders: folders, proxyURL: proxyURL, apiKeyVariable: apiKeyVariable),
                json: json
            )
        }
    }

    /// Prints `catalog`: one voice a line, its fields tab-separated, or one JSON object.
    static func list(_ catalog: VoiceCatalog, json: Bool) {
        if json {
            let encoder = JSONEncoder()
            // One line, keys sorted, as every command's --json (Console.printJSON).
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let data = (try? encoder.encode(catalog)) ?? Data()
            let json = namingSettings(in: String(decoding: data, as: UTF8.self), PipelineOptions.flag)
            Console.writeStandardOutput(Console.printableJSON(Data(json.utf8)) + Data("\n".utf8))
            return
        }
        Console.printRows(
            catalog.voices.map { voice in
                [
                    voice.id, voice.provider, voice.language ?? "-", voice.available ? "available" : "unavailable",
                    namingSettings(in: voice.detail, PipelineOptions.flag),
                ]
            }
        )
    }
}
