/// Reading the timer, breathing, workout and stretching kinds: the same rules as a guided
/// script's, every problem at once with its JSON path.
extension ScriptValidator {
    /// A session of the kind named by `kind` in `root`.
    mutating func session(kind: JSONValue, _ root: [String: JSONValue]) -> Script? {
        guard case .string(let name) = kind, SessionKind.names.contains(name) else {
            let found = if case .string(let name) = kind { quoted(name) } else { kind.kindName }
            report(
                "kind",
                "\(found) is not a kind of session; the kinds are \(SessionKind.names.joined(separator: ", "))"
            )
            return nil
        }
        let id = string(root, "id", at: "")
        if let id, let problem = ScriptRules.identifierProblem(id) {
            report("id", problem)
        }
        let title = label(root, "title", at: "", required: true)
        let category = label(root, "category", at: "", required: false) ?? name
        let subtitle = label(root, "subtitle", at: "", required: false) ?? ""
        let orderIndex = wholeNumber(root, "orderIndex", at: "") ?? 0
        let voice = root["voice"] == nil ? nil : label(root, "voice", at: "", required: true)
        var known = ["kind", "id", "title", "category", "subtitle", "orderIndex", "voice", "sound"]
        let block = soundSettings(root)

        var sessionKind: SessionKind?
        var sound: SoundSettings?
        var total: Double?
        let before = problems.count
        switch name {
        case "timer":
            known += ["countdownSeconds", "durationSeconds", "ambienceRingsOut", "intervalGongsEnabled"]
            known += Self.timerSoundKeys.map(\.key) + ["backgroundSoundId"]
            let countdown = seconds(root, "countdownSeconds", at: "", default: TimerSession.defaultCountdownSeconds)
            let duration = positiveSeconds(root, "durationSeconds", at: "")
            sound = timerSound(root)
            var ringsOut: Bool? = false
            switch root["ambienceRingsOut"] {
            case nil, .null?: break
            case .bool(let value)?: ringsOut = value
            case let other?:
                report("ambienceRingsOut", "expected true or false, found \(other.kindName)")
                ringsOut = nil
            }
            if let countdown, let duration, let ringsOut {
                sessionKind = .timer(
                    TimerSession(countdownSeconds: countdown, durationSeconds: duration, ambienceRingsOut: ringsOut)
                )
                total = countdown + duration
            }
        case "breathing":
            known += ["pattern", "cycles", "blocks", "cues", "spokenCues", "settleSeconds", "startGong", "endGong"]
            let breathing = breathing(root)
            sound = soundFields(root, [("startGong", .startGong), ("endGong", .bell)])
            if let breathing {
                sessionKind = .breathing(breathing)
                total = breathing.totalSeconds
                countLimit(breathing.cueCount, at: root["blocks"] == nil ? "cycles" : "blocks")
            }
        case "workout":
            known += [
                "rounds", "workSeconds", "restSeconds", "warmUpSeconds", "coolDownSeconds", "announce", "announceText",
                "remainingAnnouncements", "remainingText",
            ]
            let rounds = count(root, "rounds", at: "")
            let work = positiveSeconds(root, "workSeconds", at: "")
            let rest = seconds(root, "restSeconds", at: "", default: 0)
            let warmUp = seconds(root, "warmUpSeconds", at: "", default: 0)
            let coolDown = seconds(root, "coolDownSeconds", at: "", default: 0)
            var announcement = WorkoutSession.defaultAnnouncement
            for key in ["announce", "announceText"] where root[key] != nil {
                if let text = text(root, key, at: "") { announcement = text }
            }
            var remaining: [Double] = []
            if let items = array(root, "remainingAnnouncements", at: "", required: false) {
                for (index, item) in items.enumerated() {
                    let path = "remainingAnnouncements[\(index)]"
                    guard case .number(let seconds) = item, seconds.isFinite else {
                        report(path, "expected a number of seconds, found \(item.kindName)")
                        continue
                    }
                    if seconds <= 0 || (work.map { seconds >= $0 } ?? false) {
                        report(path, "\(formatted(seconds)) must be more than 0 and less than workSeconds")
                    } else if remaining.contains(seconds) {
                        report(path, "\(formatted(seconds)) is given twice")
                    } else {
                        remaining.append(seconds)
                    }
                }
            }
            let remainingText =
                root["remainingText"] == nil
                ? WorkoutSession.remainingText(forVoice: voice) : text(root, "remainingText", at: "")
            if let rounds, let work, let rest, let warmUp, let coolDown, let remainingText {
                let workout = WorkoutSession(
                    rounds: rounds,
                    workSeconds: work,
                    restSeconds: rest,
                    warmUpSeconds: warmUp,
                    coolDownSeconds: coolDown,
                    announcement: announcement,
                    remainingAnnouncements: remaining,
                    remainingText: remainingText
                )
                // `{n}` and `{total}` grow the text: the longest announcement must fit the TTS limit too.
                let longest = workout.announcement(round: rounds).utf16.count
                if longest > ScriptRules.maximumTextLength {
                    let key = root["announceText"] != nil ? "announceText" : "announce"
                    report(
                        key,
                        "the announcement of round \(rounds) is \(longest) characters, more than the TTS limit of \(ScriptRules.maximumTextLength)"
                    )
                }
                sessionKind = .workout(workout)
                total = workout.totalSeconds
                countLimit(workout.cueCount, at: "rounds")
            }
            sound = SoundSettings()
        case "open":
            known += ["phases", "transitionGong"] + Self.openSoundKeys.map(\.key)
            let phases = openPhases(root)
            let transition =
                root["transitionGong"] == nil
                ? nil
                : label(root, "transitionGong", at: "", required: true).flatMap { soundNamed($0, at: "transitionGong") }
            sound = soundFields(root, Self.openSoundKeys)
            if let phases, root["transitionGong"] == nil || transition != nil {
                let open = OpenSession(phases: phases, transitionGong: transition)
                sessionKind = .open(open)
                total = open.totalSeconds
                countLimit(phases.count + 2, at: "phases")
            }
        default:  // stretch
            known += ["stretches", "cueTexts"]
            let stretches = stretchList(root, "stretches", at: "")
            let texts = cueTexts(root)
            if let stretches, let texts {
                let stretch = StretchSession(source: .stretches(stretches), cueTexts: texts)
                sessionKind = .stretch(stretch)
                total = stretch.totalSeconds
                countLimit(stretches.count * 2 + 1, at: "stretches")
            }
            sound = SoundSettings()
        }
        if let total, total > ScriptRules.maximumDurationSeconds {
            report(
                "(session)",
                "it would last \(formatted(total)) s, longer than the limit of \(formatted(ScriptRules.maximumDurationSeconds)) (24 hours)"
            )
        }
        unknownKeys(in: root, known: known, at: "", what: "a \(name) session")
        guard problems.count == before, let id, let title, let sessionKind, let total, let block, var sound else {
            return nil
        }
        sound = sound.overriding(block)
        return Script(
            id: id,
            category: category,
            title: title,
            subtitle: subtitle,
            orderIndex: orderIndex,
            durationSeconds: total,
            kind: sessionKind,
            sound: sound == SoundSettings() ? nil : sound,
            voice: voice
        )
    }

    /// An open meditation's own sound fields, and the ``SoundSettings`` field each sets.
    static let openSoundKeys: [(key: String, field: SoundSettings.Field)] = [
        ("startGong", .startGong), ("ambience", .ambience), ("ambienceGain", .ambienceGain), ("endGong", .bell),
    ]

    /// An open meditation's `phases`: `[{"name": "meditation", "durationSeconds": 900}, …]`, at
    /// least one; a name defaults to `phase-N`.
    private mutating func openPhases(_ root: [String: JSONValue]) -> [OpenSession.Phase]? {
        guard let items = array(root, "phases", at: "", required: true) else { return nil }
        if items.isEmpty { report("phases", "needs at least one phase") }
        let before = problems.count
        var phases: [OpenSession.Phase] = []
        for (index, item) in items.enumerated() {
            let path = "phases[\(index)]"
            guard case .object(let fields) = item else {
                report(path, "expected an object, found \(item.kindName)")
                continue
            }
            unknownKeys(in: fields, known: ["name", "durationSeconds"], at: path, what: "a phase")
            let name = label(fields, "name", at: path, required: false) ?? "phase-\(index + 1)"
            if let seconds = positiveSeconds(fields, "durationSeconds", at: path) {
                phases.append(OpenSession.Phase(name: name, durationSeconds: seconds))
            }
        }
        return problems.count == before && !items.isEmpty ? phases : nil
    }

    /// A timer's own sound fields, and the ``SoundSettings`` field each sets.
    static let timerSoundKeys: [(key: String, field: SoundSettings.Field)] = [
        ("startGong", .startGong), ("intervalGong", .intervalGong), ("intervalMinutes", .intervalMinutes),
        ("ambience", .ambience), ("ambienceGain", .ambienceGain), ("endGong", .bell),
    ]

    /// A timer's sound fields, its own keys and seed 002's settings (`MeditationSettings`) as the
    /// app stores them: `backgroundSoundId` is `ambience`; `intervalGongsEnabled` true rings the
    /// interval gong (`gong` every `intervalMinutes`, 5 unless set), false leaves out the
    /// `intervalGong` and `intervalMinutes` the app keeps while its gongs are off.
    private mutating func timerSound(_ root: [String: JSONValue]) -> SoundSettings {
        var sound = soundFields(root, Self.timerSoundKeys + [("backgroundSoundId", .ambience)])
        let given = { (key: String) in root[key] != nil && root[key] != .null }
        if given("ambience") && given("backgroundSoundId") {
            report("backgroundSoundId", "names the bed a second time, after \"ambience\"; give one of them")
        }
        switch root["intervalGongsEnabled"] {
        case nil, .null?: break
        case .bool(true)?:
            sound.intervalGong = sound.intervalGong ?? SoundDefaults.intervalGong
            sound.intervalMinutes = sound.intervalMinutes ?? SoundDefaults.intervalMinutes
        case .bool(false)?:
            sound.intervalGong = nil
            sound.intervalMinutes = nil
        case let other?:
            report("intervalGongsEnabled", "expected true or false, found \(other.kindName)")
        }
        return sound
    }

    /// `name` when it keeps the rule of a sound a script names (``ScriptRules/soundNameProblem(_:)``),
    /// else `nil`, with the problem reported at `path`.
    private mutating func soundNamed(_ name: String, at path: String) -> String? {
        guard let problem = ScriptRules.soundNameProblem(name) else { return name }
        report(path, problem)
        return nil
    }

    /// The sound fields `keys` of `root` as settings, each checked by ``SoundSettings/problems``
    /// and reported at its own key.
    private mutating func soundFields(
        _ root: [String: JSONValue],
        _ keys: [(key: String, field: SoundSettings.Field)]
    ) -> SoundSettings {
        var settings = SoundSettings()
        for (key, field) in keys where root[key] != nil && root[key] != .null {
            switch field {
            case .intervalMinutes: settings.intervalMinutes = number(root, key, at: "")
            case .ambienceGain: settings.ambienceGain = number(root, key, at: "")
            case .startGong: settings.startGong = soundName(root, key, at: "")
            case .intervalGong: settings.intervalGong = soundName(root, key, at: "")
            case .ambience: settings.ambience = soundName(root, key, at: "")
            case .bell: settings.bell = soundName(root, key, at: "")
            default: break
            }
        }
        for problem in settings.problems {
            let key = keys.first { $0.field == problem.field }?.key ?? problem.field.rawValue
            report(key, problem.rule)
        }
        return settings
    }

    // MARK: Breathing

    private mutating func breathing(_ root: [String: JSONValue]) -> BreathingSession? {
        var blocks: [BreathingSession.Block]?
        if let items = array(root, "blocks", at: "", required: false) {
            if root["pattern"] != nil || root["cycles"] != nil {
                report("blocks", "a session has blocks or one pattern and cycles, not both")
            }
            if items.isEmpty { report("blocks", "needs at least one block") }
            var result: [BreathingSession.Block] = []
            for (index, item) in items.enumerated() {
                let path = "blocks[\(index)]"
                guard case .object(let fields) = item else {
                    report(path, "expected an object, found \(item.kindName)")
                    continue
                }
                let name = fields["name"] == nil ? nil : label(fields, "name", at: path, required: true)
                if let block = block(fields, at: path) {
                    result.append(BreathingSession.Block(name: name, pattern: block.pattern, cycles: block.cycles))
                }
            }
            if result.count == items.count, !items.isEmpty { blocks = result }
        } else if root["blocks"] == nil || root["blocks"] == .null, let block = block(root, at: "") {
            blocks = [block]
        }
        let cues = phaseNames(root, "cues", spoken: false)
        let spoken = phaseNames(root, "spokenCues", spoken: true)
        let settle = seconds(root, "settleSeconds", at: "", default: BreathingSession.defaultSettleSeconds)
        guard let blocks, let cues, let spoken, let settle else { return nil }
        return BreathingSession(
            blocks: blocks,
            cues: BreathingSession.defaultCues.merging(cues) { $1 },
            spokenCues: BreathingSession.defaultSpokenCues.merging(spoken) { $1 },
            settleSeconds: settle
        )
    }

    /// A `pattern` and `cycles` in `fields`.
    private mutating func block(_ fields: [String: JSONValue], at path: String) -> BreathingSession.Block? {
        let cycles = count(fields, "cycles", at: path)
        guard let value = field(fields, "pattern", at: path, required: true) else { return nil }
        let patternPath = join(path, "pattern")
        guard case .object(let phases) = value else {
            report(patternPath, "expected an object, found \(value.kindName)")
            return nil
        }
        var seconds: [Double] = []
        for phase in BreathingSession.BreathPhase.allCases {
            if let value = self.seconds(phases, phase.rawValue, at: patternPath, default: 0) { seconds.append(value) }
        }
        unknownKeys(
            in: phases,
            known: BreathingSession.BreathPhase.allCases.map(\.rawValue),
            at: patternPath,
            what:
                "a breath (its phases are \(BreathingSession.BreathPhase.allCases.map(\.rawValue).joined(separator: ", ")))"
        )
        guard seconds.count == 4 else { return nil }
        if seconds.allSatisfy({ $0 == 0 }) {
            report(patternPath, "every phase is 0 s; a breath needs at least one phase longer than 0")
            return nil
        }
        guard let cycles else { return nil }
        let pattern = BreathingSession.Pattern(
            inhale: seconds[0],
            holdIn: seconds[1],
            exhale: seconds[2],
            holdOut: seconds[3]
        )
        return BreathingSession.Block(pattern: pattern, cycles: cycles)
    }

    /// The `cues` (sound names) or `spokenCues` (texts) object: phase to string.
    private mutating func phaseNames(
        _ root: [String: JSONValue],
        _ key: String,
        spoken: Bool
    ) -> [BreathingSession.BreathPhase: String]? {
        guard let value = field(root, key, at: "", required: false) else { return [:] }
        guard case .object(let fields) = value else {
            report(key, "expected an object, found \(value.kindName)")
            return nil
        }
        let before = problems.count
        var result: [BreathingSession.BreathPhase: String] = [:]
        for (name, _) in fields.sorted(by: { $0.key < $1.key }) {
            guard let phase = BreathingSession.BreathPhase(rawValue: name) else {
                let names = BreathingSession.BreathPhase.allCases.map(\.rawValue)
                unknownKeys(
                    in: [name: .null],
                    known: names,
                    at: key,
                    what: "a breath (its phases are \(names.joined(separator: ", ")))"
                )
                continue
            }
            let value =
                spoken
                ? text(fields, name, at: key)
                : label(fields, name, at: key, required: true).flatMap { soundNamed($0, at: join(key, name)) }
            if let value { result[phase] = value }
        }
        return problems.count == before ? result : nil
    }

    // MARK: Stretching

    /// The backend's region file: `[{"id", "region", "displayName", "stretches": [...]}]`, drawn
    /// from at plan time (one stretch per region unless the command says otherwise).
    mutating func stretchRegions(_ items: [JSONValue]) -> Script? {
        if items.isEmpty { report("(top level)", "needs at least one region") }
        var regions: [StretchSession.Region] = []
        for (index, item) in items.enumerated() {
            let path = "[\(index)]"
            guard case .object(let fields) = item else {
                report(path, "expected an object, found \(item.kindName)")
                continue
            }
            let id = label(fields, "id", at: path, required: true)
            let region = label(fields, "region", at: path, required: false) ?? id
            let displayName = label(fields, "displayName", at: path, required: false) ?? region
            // A region's own length for its stretches that give none (the backend's give none).
            let regionSeconds =
                fields["durationSeconds"] == nil ? nil : positiveSeconds(fields, "durationSeconds", at: path)
            let stretches = stretchList(fields, "stretches", at: path)?.map { stretch in
                var stretch = stretch
                if !stretch.hasGivenDuration, let regionSeconds {
                    stretch.durationSeconds = regionSeconds
                    stretch.hasGivenDuration = true
                }
                return stretch
            }
            if let id, let region, let displayName, let stretches {
                regions.append(
                    StretchSession.Region(id: id, region: region, displayName: displayName, stretches: stretches)
                )
            }
        }
        guard regions.count == items.count, !regions.isEmpty else { return nil }
        let session = StretchSession(source: .regions(regions, perRegion: 1))
        countLimit(regions.reduce(0) { $0 + $1.stretches.count } * 2 + 1, at: "(top level)")
        guard problems.isEmpty else { return nil }
        return Script(
            id: "stretching",
            category: "stretch",
            title: "Stretching",
            durationSeconds: session.totalSeconds,
            kind: .stretch(session)
        )
    }

    private mutating func stretchList(
        _ root: [String: JSONValue],
        _ key: String,
        at path: String
    ) -> [StretchSession.Stretch]? {
        guard let items = array(root, key, at: path, required: true) else { return nil }
        let listPath = join(path, key)
        if items.isEmpty { report(listPath, "needs at least one stretch") }
        var result: [StretchSession.Stretch] = []
        for (index, item) in items.enumerated() {
            let itemPath = "\(listPath)[\(index)]"
            guard case .object(let fields) = item else {
                report(itemPath, "expected an object, found \(item.kindName)")
                continue
            }
            let id = label(fields, "id", at: itemPath, required: true)
            let name = label(fields, "name", at: itemPath, required: false) ?? id
            let description = text(fields, "description", at: itemPath)
            var bilateral: Bool?
            switch fields["bilateral"] {
            case nil, .null?: bilateral = false
            case .bool(let value)?: bilateral = value
            case let other?: report(join(itemPath, "bilateral"), "expected true or false, found \(other.kindName)")
            }
            let duration =
                fields["durationSeconds"] == nil
                ? StretchSession.defaultDurationSeconds : positiveSeconds(fields, "durationSeconds", at: itemPath)
            if let id, let name, let description, let bilateral, let duration {
                result.append(
                    StretchSession.Stretch(
                        id: id,
                        name: name,
                        description: description,
                        bilateral: bilateral,
                        durationSeconds: duration,
                        hasGivenDuration: fields["durationSeconds"] != nil
                    )
                )
            }
        }
        return result.count == items.count && !items.isEmpty ? result : nil
    }

    private mutating func cueTexts(_ root: [String: JSONValue]) -> StretchSession.CueTexts? {
        var texts = StretchSession.CueTexts()
        guard let value = field(root, "cueTexts", at: "", required: false) else { return texts }
        guard case .object(let fields) = value else {
            report("cueTexts", "expected an object, found \(value.kindName)")
            return nil
        }
        let before = problems.count
        if fields["switchSides"] != nil, let text = text(fields, "switchSides", at: "cueTexts") {
            texts.switchSides = text
        }
        if fields["halfway"] != nil, let text = text(fields, "halfway", at: "cueTexts") { texts.halfway = text }
        if fields["sessionComplete"] != nil, let text = text(fields, "sessionComplete", at: "cueTexts") {
            texts.sessionComplete = text
        }
        return problems.count == before ? texts : nil
    }

    // MARK: Numbers

    /// Seconds that may be 0: `default` when absent, a problem when negative or over a day.
    private mutating func seconds(
        _ object: [String: JSONValue],
        _ key: String,
        at path: String,
        default value: Double
    ) -> Double? {
        guard object[key] != nil, object[key] != .null else { return value }
        guard let seconds = number(object, key, at: path) else { return nil }
        if seconds < 0 {
            report(join(path, key), "\(formatted(seconds)) is negative")
            return nil
        }
        if seconds > ScriptRules.maximumDurationSeconds {
            report(join(path, key), "\(formatted(seconds)) is longer than the limit of 86400 (24 hours)")
            return nil
        }
        return seconds
    }

    /// Seconds that must be more than 0.
    private mutating func positiveSeconds(_ object: [String: JSONValue], _ key: String, at path: String) -> Double? {
        guard let seconds = number(object, key, at: path) else { return nil }
        if seconds <= 0 {
            report(join(path, key), "\(formatted(seconds)) must be greater than 0")
            return nil
        }
        if seconds > ScriptRules.maximumDurationSeconds {
            report(join(path, key), "\(formatted(seconds)) is longer than the limit of 86400 (24 hours)")
            return nil
        }
        return seconds
    }

    /// A count of rounds or cycles: a whole number from 1 to ``ScriptRules/maximumCueCount``.
    private mutating func count(_ object: [String: JSONValue], _ key: String, at path: String) -> Int? {
        guard let number = number(object, key, at: path) else { return nil }
        guard number.rounded() == number, number >= 1, number <= Double(ScriptRules.maximumCueCount) else {
            report(
                join(path, key),
                "\(formatted(number)) is not a whole number from 1 to \(ScriptRules.maximumCueCount)"
            )
            return nil
        }
        return Int(number)
    }

    /// Reports a session whose cues, once expanded, pass ``ScriptRules/maximumCueCount``.
    private mutating func countLimit(_ count: Int, at path: String) {
        if count > ScriptRules.maximumCueCount {
            report(path, "\(count) cues after expansion are more than the limit of \(ScriptRules.maximumCueCount)")
        }
    }
}
