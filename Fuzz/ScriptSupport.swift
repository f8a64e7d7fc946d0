// Shared by the script and markdown targets (compiled into both; see scripts/fuzz).

/// Checks that an accepted script, written as `import` writes it, reads back unchanged.
func checkRoundTrip(_ script: Script) {
    let json = MeditationMarkdown.json(script)
    do {
        let again = try Script(json: json)
        expect(
            again == script,
            "script \(script.id) changed on a round trip through JSON:\n\(String(decoding: json, as: UTF8.self))"
        )
    } catch {
        fatalError(
            "script \(script.id) was accepted but its JSON is refused: \(error)\n\(String(decoding: json, as: UTF8.self))"
        )
    }
}
