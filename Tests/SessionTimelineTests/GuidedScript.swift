import SessionTimeline
import Testing

extension Script {
    /// A guided script's segments and interjections; for a script of another kind, none, and the
    /// test fails.
    var guided: GuidedSession {
        guard case .guided(let session) = kind else {
            Issue.record("\(id) is a \(kind.name) session, not a guided script")
            return GuidedSession(segments: [])
        }
        return session
    }
}
