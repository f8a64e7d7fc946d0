import ArgumentParser
import Foundation
import SessionAudio
import SessionKit
import SessionServer

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Render sessions to order over HTTP.",
        discussion: """
            POST /v1/renders with {"script": {…}, "options": {"format": "m4a", "seed": 7}} \
            renders and answers with the URLs of the audio, its timeline and captions; GET \
            /v1/renders/ID.EXT serves them with byte ranges. GET /livez and /readyz are for \
            probes. The clip, voice, sound and speech options are the render command's, for \
            every render. One JSON line per request goes to standard error; SIGTERM or SIGINT \
            stops accepting, lets what runs finish, and exits 0 (docs/serve.md).

            Example:
              render-session serve --cache Fixtures/cache --offline --out out/renders
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @Option(help: ArgumentHelp("The address to listen on.", valueName: "address"))
    var host = "127.0.0.1"

    @Option(help: ArgumentHelp("The port to listen on; 0 takes a free one, named on standard error.", valueName: "n"))
    var port = 8080

    @Option(help: ArgumentHelp("The folder renders are written to, each named by its id.", valueName: "dir"))
    var out: String

    @Option(help: ArgumentHelp("Renders at once; as many again wait, more are answered 503.", valueName: "n"))
    var maxRenders = 2

    @Option(
        help: ArgumentHelp(
            "The longest a render request waits for its render, queueing included; then 503, and a render no other request waits for is cancelled.",
            valueName: "s"
        )
    )
    var renderTimeout: Double = 300

    @Option(
        help: ArgumentHelp(
            "A file holding the bearer token every /v1 request must carry (Authorization: Bearer …).",
            valueName: "file"
        )
    )
    var tokenFile: String?

    @OptionGroup var clip: ClipOptions

    @OptionGroup var plan: PlanOptions

    @OptionGroup var source: ProviderOptions

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port: \(port) is outside 0…65535") }
        guard renderTimeout.isFinite, (0.1...86_400).contains(renderTimeout) else {
            throw ValidationError("--render-timeout: \(renderTimeout) is outside 0.1…86400")
        }
        guard (1...64).contains(maxRenders) else {
            throw ValidationError("--max-renders: \(maxRenders) is outside 1…64")
        }
    }

    func run() async throws {
        let options = PipelineOptions(clip: clip, plan: plan, source: source, seed: nil, output: OutputSettings())
        try options.validate()
        let token = try tokenFile.map(Self.readToken)
        do {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        } catch {
            Console.error("\(out): cannot create the output folder: \(error.localizedDescription)")
            throw ExitCode.failure
        }
        let pool = BlockingPool.shared
        let settings = ServerSettings(
            host: host,
            port: port,
            pipeline: try options.pipeline(observer: PipelineObserver(), pool: pool),
            outputFolder: out,
            maximumRenders: maxRenders,
            token: token,
            renderDeadline: .milliseconds(Int64((renderTimeout * 1_000).rounded()))
        )
        try await RenderServer.run(settings) { line in
            Console.writeStandardError(line + "\n")
        } listening: { host, port in
            Console.status(
                "listening on http://\(host):\(port)",
                event: "listening",
                fields: Listening(host: host, port: port)
            )
        }
    }

    /// What the `listening` record of a JSON log carries.
    private struct Listening: Encodable, Sendable {
        var host: String
        var port: Int
    }

    /// The token in `path`: its first line, without blanks; the file at most 4 KiB, and the token
    /// not empty. No error says any of the file's contents.
    private static func readToken(_ path: String) throws -> String {
        let data: Data
        do {
            data = try FileDescriptor.open(path, .readOnly).readToEnd(limit: 4_096)
        } catch let error as BoundedReadError {
            switch error {
            case .tooLarge(let limit): Console.error("\(path): the token file is larger than \(limit) bytes")
            case .failed(let error): Console.error("\(path): cannot read the token file: \(error.description)")
            }
            throw ExitCode.failure
        } catch {
            Console.error("\(path): cannot read the token file: \(error)")
            throw ExitCode.failure
        }
        let firstLine = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first
        let token = firstLine.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard !token.isEmpty else {
            Console.error("\(path): the token file holds no token")
            throw ExitCode.failure
        }
        return token
    }
}
