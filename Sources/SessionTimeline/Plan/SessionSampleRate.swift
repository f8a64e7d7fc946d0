extension SampleRate {
    /// The one rule for the rate a session is rendered at: the rate asked for (a setting, or the
    /// rate the output format needs: 48 kHz for Opus), else the rate of the first clip the session
    /// speaks, in the order it speaks them; `nil` when there is neither (a guided session then
    /// cannot be planned; a session of sounds alone takes the sounds' rate).
    ///
    /// - Parameters:
    ///   - requested: the rate asked for, if any.
    ///   - clipRates: each spoken clip's own rate, in speaking order; `nil` for a clip not had.
    package static func forSession(requested: SampleRate?, clipRates: some Sequence<SampleRate?>) -> SampleRate? {
        requested ?? clipRates.lazy.compactMap { $0 }.first
    }
}
