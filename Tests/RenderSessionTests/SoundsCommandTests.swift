import Foundation
import TestSupport
import Testing

@Suite("sounds", .serialized)
struct SoundsCommandTests {
    @Test("sounds lists the default library, made once even by two processes at once")
    func defaultLibrary() async throws {
        let folder = try TemporaryFolder()
        let environment = ["XDG_CACHE_HOME": folder.path("cache"), "HOME": folder.path("home")]
        // Both start at once, whatever other tests' children are running: the race is the point.
        async let first = renderSession(["sounds"], environment: environment, waitsForTurn: false)
        async let second = renderSession(["sounds"], environment: environment, waitsForTurn: false)
        let results = try await [first, second]
        let library = folder.path("cache/render-session/sounds/v5")
        let expected = """
            gong\tGong\t-\tno\t\(library)/gong.flac
            triple-gong\tTriple gong\t-\tno\t\(library)/triple-gong.flac
            completion\tCompletion gong\t-\tno\t\(library)/completion.flac
            rain\tRain\t0.15\tyes\t\(library)/rain.flac
            drone\tDrone\t0.15\tyes\t\(library)/drone.flac
            forest\tForest\t0.15\tyes\t\(library)/forest.flac
            silent\tSilent\t0.15\tyes\t\(library)/silent.flac
            gong-dreimal\tTriple gong\t-\tno\t\(library)/triple-gong.flac
            gong-ende\tCompletion gong\t-\tno\t\(library)/completion.flac
            einatmen\tBreathe in\t-\tno\t\(library)/einatmen.flac
            halten-ein\tHold after breathing in\t-\tno\t\(library)/halten-ein.flac
            ausatmen\tBreathe out\t-\tno\t\(library)/ausatmen.flac
            halten-aus\tHold after breathing out\t-\tno\t\(library)/halten-aus.flac
            auftakt\tGet ready\t-\tno\t\(library)/auftakt.flac
            kurz\tShort beep\t-\tno\t\(library)/kurz.flac
            lang\tLong beep\t-\tno\t\(library)/lang.flac
            last-round\tLast round\t-\tno\t\(library)/last-round.flac
            ausklang\tClosing chime\t-\tno\t\(library)/ausklang.flac

            """
        for result in results {
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardError == "")
            #expect(result.standardOutput == expected)
        }
    }

    @Test("sounds --sounds lists a library's entries, missing ones with every path tried, and exits 1")
    func ownLibrary() async throws {
        let folder = try TemporaryFolder()
        try Data(
            #"[{"id": "forest", "name": "Forest", "file": "forest-ambience", "gain": 0.15, "loop": true}, {"id": "bell", "file": "bell.wav"}]"#
                .utf8
        ).write(to: URL(fileURLWithPath: folder.path("sounds.json")))
        try Data().write(to: URL(fileURLWithPath: folder.path("forest-ambience.ogg")))
        let result = try await renderSession(["sounds", "--sounds", folder.url.path])
        let tried = ["wav", "caf", "flac", "mp3", "ogg", "m4a", "mp4", "aac"].map { folder.path("bell.\($0)") }
            .joined(separator: ", ")
        #expect(
            result.standardOutput == """
                forest\tForest\t0.15\tyes\t\(folder.path("forest-ambience.ogg"))
                bell\tbell\t-\t-\tmissing (looked for \(tried))

                """
        )
        #expect(result.standardError == "error: 1 of the 2 sounds in \(folder.url.path) is missing: bell\n")
        #expect(result.status == 65)
    }

    @Test("sounds with a broken sounds.json prints one error line per problem and nothing else")
    func brokenLibrary() async throws {
        let folder = try TemporaryFolder()
        try Data(#"[{"id": "a", "file": "a", "gain": -1}, {"id": "a", "file": "b"}]"#.utf8)
            .write(to: URL(fileURLWithPath: folder.path("sounds.json")))
        let result = try await renderSession(["sounds", "--sounds", folder.url.path])
        #expect(result.status == 65)
        #expect(result.standardOutput == "")
        #expect(
            result.standardError == """
                error: \(folder.path("sounds.json")): [0].gain: -1 must be 0 or more
                error: \(folder.path("sounds.json")): [1].id: "a" is already the id of [0]

                """
        )
        let missing = try await renderSession(["sounds", "--sounds", folder.path("none")])
        #expect(missing.status == 65)
        #expect(
            missing.standardError == "error: Cannot open the sound library \(folder.path("none")): no such folder\n"
        )
    }
}
