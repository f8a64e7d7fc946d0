/// The known names closest to `name`, for "did you mean" in a message: those within an edit
/// distance of a third of the name's length (at least 1, at most 3), nearest first, at most `limit`.
///
/// Letter case does not count. The distance is Damerau–Levenshtein's (a swap of two neighbouring
/// letters is one edit), so `gnog` finds `gong` and `meduim` finds `medium`.
package func nearestNames(to name: String, among known: some Sequence<String>, limit: Int = 3) -> [String] {
    let wanted = Array(name.lowercased())
    let bound = min(3, max(1, wanted.count / 3))
    var scored: [(distance: Int, name: String)] = []
    for candidate in Set(known) {
        let distance = editDistance(wanted, Array(candidate.lowercased()), bound: bound)
        if distance <= bound { scored.append((distance, candidate)) }
    }
    return scored.sorted { ($0.distance, $0.name) < ($1.distance, $1.name) }.prefix(limit).map(\.name)
}

/// `" (did you mean "a" or "b"?)"`, or nothing when no known name is near; each name shown
/// after `prefix` (`espeak:` before a language).
package func didYouMean(_ name: String, among known: some Sequence<String>, prefix: String = "") -> String {
    let names = nearestNames(to: name, among: known).map { "\"\(prefix)\($0)\"" }
    guard let last = names.last else { return "" }
    let list = names.count == 1 ? last : names.dropLast().joined(separator: ", ") + " or " + last
    return " (did you mean \(list)?)"
}

/// The optimal-string-alignment distance between `a` and `b`, or `bound + 1` once it must exceed `bound`.
private func editDistance(_ a: [Character], _ b: [Character], bound: Int) -> Int {
    if abs(a.count - b.count) > bound { return bound + 1 }
    if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
    var before = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        var rowMinimum = i
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { value = min(value, before[j - 2] + 1) }
            current[j] = value
            rowMinimum = min(rowMinimum, value)
        }
        if rowMinimum > bound { return bound + 1 }
        (before, previous, current) = (previous, current, before)
    }
    return previous[b.count]
}
