// Shared by the three libFuzzer targets (compiled into each; see scripts/fuzz).

/// `precondition` that keeps its message in optimized builds: the finding's one-line summary.
func expect(
    _ condition: @autoclosure () -> Bool,
    _ message: @autoclosure () -> String = "",
    file: StaticString = #file,
    line: UInt = #line
) {
    if !condition() { fatalError("broken promise: \(message())", file: file, line: line) }
}
