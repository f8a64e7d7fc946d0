/// A guided session (seed 000): spoken parts at planned seconds, and windows in which one of
/// several short texts is spoken at a random second.
public struct GuidedSession: Sendable, Equatable {
    /// The spoken parts, each at a planned start; at least one in a validated script.
    public var segments: [Script.Segment]
    /// Windows in which one of several short texts is spoken at a random second.
    public var interjections: [Script.Interjection]

    public init(segments: [Script.Segment], interjections: [Script.Interjection] = []) {
        self.segments = segments
        self.interjections = interjections
    }

    /// Every text a render of this session can need: the segments' texts and every interjection
    /// option, in script order, each once.
    var allTexts: [String] {
        var seen = Set<String>()
        let texts = segments.map(\.text) + interjections.flatMap(\.textOptions)
        return texts.filter { seen.insert($0).inserted }
    }
}
