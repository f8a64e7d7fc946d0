public import SessionTimeline

/// What a render came to: everything a caller prints, records or checks afterwards, from the one
/// call that made it (``SessionPipeline/run(_:)``).
public struct RenderOutcome: Sendable {
    /// The timeline as rendered: every item at its frame, with how the audio was encoded and the
    /// output's measured loudness once audio is written.
    public var timeline: Timeline
    /// How each clip was had: found in the cache, synthesized, or not.
    public var clips: PreparedClips
    /// Every warning told while it ran, in order (the observer heard each as it came).
    public var warnings: [String]
    /// The written file decoded and checked against its timeline, when the output asked for it
    /// (``OutputSettings/verifies``).
    public var verification: VerificationReport?

    /// How the audio file was encoded; `nil` when no audio was written.
    public var encoding: AudioEncoding? { timeline.encoding }
    /// The loudness target and the output's measurement; `nil` when loudness is off.
    public var loudness: TimelineLoudness? { timeline.loudness }

    package init(
        timeline: Timeline,
        clips: PreparedClips,
        warnings: [String] = [],
        verification: VerificationReport? = nil
    ) {
        self.timeline = timeline
        self.clips = clips
        self.warnings = warnings
        self.verification = verification
    }
}
