import Foundation
import TestSupport
import Testing

/// A script read from standard input that cannot be read is one line and exit 65, never a crash.
@Suite("Standard input that is not a script")
struct StandardInputCommandTests {
    @Test("render - with a folder on standard input: one error line, exit 65 (it used to trap in Foundation, 132)")
    func folderOnStandardInput() async throws {
        let folder = try TemporaryFolder()
        let run = try await ChildProcess.run(
            "/bin/sh",
            [
                "-c", "exec \"$0\" render - -o \"$1\" 2>&1 < \"$2\"", Repository.binary.path,
                folder.path("out.wav"), folder.url.path,
            ]
        )
        let printed = run.standardOutputText
        #expect(run.termination == .exited(65), "\(printed)")
        #expect(printed.hasPrefix("error: ") && printed.split(separator: "\n").count == 1, "\(printed)")
        #expect(try folder.contents() == [])
    }
}
