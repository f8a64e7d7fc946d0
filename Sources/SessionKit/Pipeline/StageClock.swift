/// Times the stages of a run one after another, for the observer's `-v` lines: each ``lap()`` is
/// the time since the one before (or since the clock was made).
struct StageClock {
    private let clock = ContinuousClock()
    private var started: ContinuousClock.Instant

    init() {
        started = clock.now
    }

    /// The time the stage that just ended took; the next starts now.
    mutating func lap() -> Duration {
        let now = clock.now
        defer { started = now }
        return now - started
    }
}
