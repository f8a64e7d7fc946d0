import Foundation
import TestSupport
import Testing

/// FFmpeg's and cairo's libraries are opened on first use, not linked (issue 43, item 1): what
/// each run maps is read from the dynamic loader's own account of it (`LD_DEBUG=files`).
@Suite("Libraries loaded on first use")
struct LazyLibraryTests {
    /// The shared libraries a run of `arguments` mapped, by file name (`libavformat.so.59`), as
    /// the dynamic loader reports them on standard error under `LD_DEBUG=files`; and the run.
    static func loaded(
        _ arguments: [String],
        environment extra: [String: String] = [:]
    ) async throws -> (libraries: Set<String>, result: CommandResult) {
        var environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "LD_DEBUG": "files"]
        environment.merge(extra) { $1 }
        let result = try await renderSession(arguments, environment: environment)
        // `   1234:     file=libavformat.so.59 [0];  dynamically loaded by …`
        let names = result.standardError.matches(of: /file=([^ \[]+) \[/).map { String($0.output.1) }
        return (Set(names.map { ($0 as NSString).lastPathComponent }), result)
    }

    /// Whether `libraries` holds FFmpeg's, cairo's or the X11 client's.
    static func heavy(_ libraries: Set<String>) -> [String] {
        libraries.filter { name in
            ["libavformat", "libavcodec", "libavutil", "libcairo", "libX11", "libfontconfig", "libx264", "libx265"]
                .contains { name.hasPrefix($0 + ".") || name.hasPrefix($0 + "-") }
        }
        .sorted()
    }

    @Test(
        "--help and a WAV render map no FFmpeg, cairo or X11 library; an M4A render maps FFmpeg's, a WAV's PNG cairo alone"
    )
    func onlyWhatIsUsed() async throws {
        let folder = try TemporaryFolder()
        let render = ["render", "Fixtures/scripts/edge-cases.json", "--cache", "Fixtures/cache", "--seed", "1"]

        let help = try await Self.loaded(["--help"])
        #expect(help.result.status == 0)
        #expect(!help.libraries.isEmpty, "LD_DEBUG reported nothing: \(help.result.standardError.prefix(300))")
        #expect(Self.heavy(help.libraries).isEmpty, "\(Self.heavy(help.libraries))")

        let wav = try await Self.loaded(render + ["-o", folder.path("a.wav")])
        #expect(wav.result.status == 0)
        #expect(Self.heavy(wav.libraries).isEmpty, "\(Self.heavy(wav.libraries))")
        #expect(wav.libraries.count < help.libraries.count + 10, "\(wav.libraries.sorted())")

        let m4a = try await Self.loaded(render + ["-o", folder.path("a.m4a")])
        #expect(m4a.result.status == 0, "\(m4a.result.standardError.suffix(500))")
        #expect(m4a.libraries.isSuperset(of: ["libavformat.so.59", "libavcodec.so.59", "libavutil.so.57"]))
        // (Debian's libavcodec itself depends on librsvg, and so on cairo: an M4A maps cairo too.)

        let png = try await Self.loaded(["show", folder.path("a.wav"), "-o", folder.path("a.png")])
        #expect(png.result.status == 0, "\(png.result.standardError.suffix(500))")
        #expect(png.libraries.contains("libcairo.so.2"))
        #expect(!png.libraries.contains { $0.hasPrefix("libavcodec.") }, "a WAV's picture decodes without FFmpeg")
    }

    @Test(
        "A library that cannot be loaded is one error naming it and the package to install, exit 74 for an M4A; the WAV render beside it is unaffected"
    )
    func unloadable() async throws {
        let folder = try TemporaryFolder()
        // A file of FFmpeg's name the loader finds first, and cannot load.
        let libraries = folder.path("lib")
        try FileManager.default.createDirectory(atPath: libraries, withIntermediateDirectories: true)
        try Data("not a library".utf8).write(to: URL(fileURLWithPath: libraries + "/libavformat.so.59"))
        let environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "LD_LIBRARY_PATH": libraries,
        ]
        let render = ["render", "Fixtures/scripts/edge-cases.json", "--cache", "Fixtures/cache", "--seed", "1"]

        let m4a = try await renderSession(render + ["-o", folder.path("a.m4a")], environment: environment)
        #expect(m4a.status == 74, "\(m4a.standardError)")
        let errors = m4a.standardError.split(separator: "\n").filter { $0.hasPrefix("error: ") }
        #expect(errors.count == 1, "\(errors)")
        #expect(
            errors.first?.contains(
                "cannot load libavformat.so.59 (apt-get install libavformat59): \(libraries)/libavformat.so.59: file too short"
            ) == true,
            "\(errors)"
        )
        #expect(!FileManager.default.fileExists(atPath: folder.path("a.m4a")))

        let wav = try await renderSession(render + ["-o", folder.path("a.wav")], environment: environment)
        #expect(wav.status == 0, "\(wav.standardError)")

        let version = try await renderSession(["--version"], environment: environment)
        #expect(version.status == 0)
        #expect(version.standardOutput.contains("libavcodec not loadable: cannot load libavformat.so.59"))
    }
}
