/// A stretching session (seed 001): stretches one after another, each begun by its description
/// spoken, with a cue at its half ("Now switch to the other side." for a bilateral stretch,
/// "You're halfway through this stretch." otherwise), and a closing line at the end.
///
/// The stretches are listed, or drawn from the backend's regions (`StretchRegion`): `perRegion`
/// of each region, at random with the session's seed, as the app's `selectRandomStretch` does.
public struct StretchSession: Sendable, Equatable {
    /// A stretch's length when its definition gives none (the backend's definitions do not).
    package static let defaultDurationSeconds = 60.0

    /// One stretch (the backend's `StretchDefinition`, with a length).
    public struct Stretch: Sendable, Equatable {
        public var id: String
        public var name: String
        /// The instruction spoken at the stretch's start.
        public var description: String
        /// Whether both sides are stretched: the half cue then says to switch sides.
        public var bilateral: Bool
        public var durationSeconds: Double
        /// Whether the file gave the length (the stretch's own, or its region's); a length it did
        /// not give is ``StretchSession/defaultDurationSeconds`` until the command sets one.
        package var hasGivenDuration: Bool

        package init(
            id: String,
            name: String,
            description: String,
            bilateral: Bool,
            durationSeconds: Double,
            hasGivenDuration: Bool = true
        ) {
            self.id = id
            self.name = name
            self.description = description
            self.bilateral = bilateral
            self.durationSeconds = durationSeconds
            self.hasGivenDuration = hasGivenDuration
        }
    }

    /// A body region and its stretches (the backend's `StretchRegion`).
    public struct Region: Sendable, Equatable {
        public var id: String
        public var region: String
        public var displayName: String
        public var stretches: [Stretch]

        package init(id: String, region: String, displayName: String, stretches: [Stretch]) {
            self.id = id
            self.region = region
            self.displayName = displayName
            self.stretches = stretches
        }
    }

    /// Seed 001's shared cue texts.
    package struct CueTexts: Sendable, Equatable {
        package var switchSides: String
        package var halfway: String
        package var sessionComplete: String

        package init(
            switchSides: String = "Now switch to the other side.",
            halfway: String = "You're halfway through this stretch.",
            sessionComplete: String = "Great work! Your stretching session is complete."
        ) {
            self.switchSides = switchSides
            self.halfway = halfway
            self.sessionComplete = sessionComplete
        }
    }

    /// Where the stretches come from.
    public enum Source: Sendable, Equatable {
        /// These stretches, in order.
        case stretches([Stretch])
        /// `perRegion` stretches drawn from each region, regions in order.
        case regions([Region], perRegion: Int)
    }

    public var source: Source
    package var cueTexts: CueTexts

    package init(source: Source, cueTexts: CueTexts = CueTexts()) {
        self.source = source
        self.cueTexts = cueTexts
    }

    /// The stretches a session with `seed` does: the list, or `perRegion` distinct stretches of
    /// each region drawn by a partial Fisher–Yates shuffle with ``SeededGenerator``.
    public func stretches(seed: UInt64) -> [Stretch] {
        switch source {
        case .stretches(let stretches):
            return stretches
        case .regions(let regions, let perRegion):
            var generator = SeededGenerator(seed: seed)
            return regions.flatMap { region in
                var pool = region.stretches
                let count = min(perRegion, pool.count)
                for index in 0..<count {
                    let pick = index + Int(generator.uniform(below: UInt64(pool.count - index)))
                    pool.swapAt(index, pick)
                }
                return pool.prefix(count)
            }
        }
    }

    /// Every stretch whose length the file did not give lasting `seconds` instead of
    /// ``defaultDurationSeconds`` (`--stretch-seconds`).
    package func lasting(_ seconds: Double) -> StretchSession {
        func set(_ stretches: [Stretch]) -> [Stretch] {
            stretches.map { stretch in
                var stretch = stretch
                if !stretch.hasGivenDuration { stretch.durationSeconds = seconds }
                return stretch
            }
        }
        var session = self
        switch source {
        case .stretches(let stretches): session.source = .stretches(set(stretches))
        case .regions(let regions, let perRegion):
            session.source = .regions(
                regions.map { region in
                    var region = region
                    region.stretches = set(region.stretches)
                    return region
                },
                perRegion: perRegion
            )
        }
        return session
    }

    /// Only the regions named in `names` (by id or region), in the order named, drawing
    /// `perRegion` of each; a list of stretches is kept as it is.
    /// - Throws: ``ScriptError`` naming each region that is not in the file.
    package func selecting(regions names: [String]?, perRegion: Int?) throws(ScriptError) -> StretchSession {
        guard case .regions(let regions, let current) = source else { return self }
        var chosen = regions
        if let names {
            var problems: [ScriptProblem] = []
            chosen = []
            for name in names {
                if let region = regions.first(where: { $0.id == name || $0.region == name }) {
                    chosen.append(region)
                } else {
                    problems.append(
                        ScriptProblem(
                            location: SettingReference.regions.marker,
                            rule:
                                "\(quoted(name)) is not a region of the file; it has \(regions.map(\.id).joined(separator: ", "))"
                        )
                    )
                }
            }
            if !problems.isEmpty { throw ScriptError(.brokenRule, problems: problems) }
        }
        var session = self
        session.source = .regions(chosen, perRegion: perRegion ?? current)
        return session
    }

    /// Every text a session can speak: every description that can be drawn, and the cue texts in use.
    var allTexts: [String] {
        var texts: [String]
        var halves: [Bool]
        switch source {
        case .stretches(let stretches):
            texts = stretches.map(\.description)
            halves = stretches.map(\.bilateral)
        case .regions(let regions, _):
            texts = regions.flatMap { $0.stretches.map(\.description) }
            halves = regions.flatMap { $0.stretches.map(\.bilateral) }
        }
        if halves.contains(true) { texts.append(cueTexts.switchSides) }
        if halves.contains(false) { texts.append(cueTexts.halfway) }
        texts.append(cueTexts.sessionComplete)
        var seen = Set<String>()
        return texts.filter { seen.insert($0).inserted }
    }

    /// The longest the session can be: the sum of its stretches (for regions, the longest draws).
    package var totalSeconds: Double {
        switch source {
        case .stretches(let stretches):
            return stretches.reduce(0) { $0 + $1.durationSeconds }
        case .regions(let regions, let perRegion):
            return regions.reduce(0) { sum, region in
                sum + region.stretches.map(\.durationSeconds).sorted(by: >).prefix(perRegion).reduce(0, +)
            }
        }
    }

    /// Stretch i starts at s(i) = Σ earlier durations: its description at s(i), its half cue at
    /// s(i) + d(i)/2 (later if the description runs past it), the closing line at the end.
    func score(sound: SoundSettings, seed: UInt64) -> SessionScore {
        let stretches = stretches(seed: seed)
        let end = stretches.reduce(0) { $0 + $1.durationSeconds }
        var score = SessionScore(endSeconds: end, endSound: sound.bell)
        score.gongs(sound, start: 0, end: end)
        var start = 0.0
        for stretch in stretches {
            score.phases.append(ScorePhase(name: stretch.id, startSeconds: start))
            score.spoken.append(
                SpokenCue(
                    name: stretch.id,
                    text: stretch.description,
                    atSeconds: start,
                    phase: stretch.id,
                    cue: TimelineCue(role: "description", stretchId: stretch.id)
                )
            )
            let (name, text) =
                stretch.bilateral ? ("switch-sides", cueTexts.switchSides) : ("halfway", cueTexts.halfway)
            score.spoken.append(
                SpokenCue(
                    name: name,
                    text: text,
                    atSeconds: start + stretch.durationSeconds / 2,
                    phase: stretch.id,
                    cue: TimelineCue(role: name, stretchId: stretch.id)
                )
            )
            start += stretch.durationSeconds
        }
        score.phases.append(ScorePhase(name: "complete", startSeconds: end))
        score.spoken.append(
            SpokenCue(
                name: "session-complete",
                text: cueTexts.sessionComplete,
                atSeconds: end,
                phase: "complete",
                cue: TimelineCue(role: "complete")
            )
        )
        return score
    }
}
