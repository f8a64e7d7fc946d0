import Foundation
import SessionTimeline
import Testing

/// Each kind's timing rules (docs/sessions.md), with the cue frames worked out by hand at
/// 1000 Hz, where a second is 1000 frames.
@Suite("Session kinds")
struct SessionKindsTests {
    static func session(_ json: String, strict: Bool = false) throws -> Script {
        try Script(json: Data(json.utf8), strict: strict)
    }

    /// Plans `script` with every sound in `present` 1 s long (the library's), the rest missing,
    /// and every spoken text `spoken` frames long.
    static func plan(
        _ script: Script,
        present: Set<String>,
        spoken: Int64 = 2_000,
        soundFrames: Int64 = 1_000,
        sound extra: SoundSettings = SoundSettings(),
        seed: UInt64 = 1,
        sampleRate: SampleRate = 1_000
    ) -> Timeline {
        let sound = extra.overriding(script.sound)
        let score = script.score(sound: sound, hasSound: present.contains, seed: seed)!
        var sounds: [String: SoundChoice] = [:]
        for name in score.sounds.map(\.name) + [score.endSound].compactMap({ $0 }) {
            sounds[name] =
                present.contains(name)
                ? LayersTests.sound(name, frames: soundFrames)
                : .skipped(SkippedSound(lane: "cues", kind: "cue", name: name, lookedFor: ["/sounds/\(name).wav"]))
        }
        let clips = score.spoken.map { ScriptPlanningTests.clip($0.text, frames: spoken) }
        return Timeline.plan(
            score: score,
            script: script,
            seed: seed,
            sampleRate: sampleRate,
            channelCount: 1,
            spokenClips: clips,
            sounds: sounds,
            layers: SessionLayers(
                bell: score.endSound.flatMap { sounds[$0] },
                ambience: sound.ambience.map { LayersTests.sound($0, frames: 10_000) }
            )
        )
    }

    static func overlays(_ timeline: Timeline, _ name: String) -> [Int64] {
        timeline.overlays.filter { $0.name == name }.map(\.startFrame.count)
    }

    @Test(
        "Timer: start gong at the countdown's end, interval gongs before the end only, the bed from the start gong until the timer completes, the end gong last"
    )
    func timer() throws {
        let script = try Self.session(
            #"{"kind": "timer", "id": "t", "title": "T", "durationSeconds": 600, "countdownSeconds": 15, "startGong": "gong", "intervalGong": "gong", "intervalMinutes": 5, "ambience": "forest", "ambienceGain": 0.15, "endGong": "completion"}"#
        )
        #expect(script.kind.name == "timer" && script.durationSeconds == 615 && script.allTexts.isEmpty)
        let timeline = Self.plan(script, present: ["gong", "completion", "forest"])
        // Gongs at 15 s and 15 + 300 s; 15 + 600 s is the end, so none there.
        #expect(Self.overlays(timeline, "gong") == [15_000, 315_000])
        #expect(timeline.items.map(\.kind) == [.silence, .bell])
        #expect(timeline.items[1].startFrame == 615_000 && timeline.items[1].name == "completion")
        #expect(timeline.totalFrames == 616_000)
        // Seed 002: "background audio stops when timer completes": the bed ends where the end gong
        // starts, its fade-out ending there.
        let bed = try #require(timeline.overlays.first { $0.kind == .ambience })
        #expect(bed.startFrame == 15_000 && bed.endFrame == 615_000)
        #expect(timeline.phases.map(\.name) == ["countdown", "meditation"])
        #expect(timeline.category == "timer", "a kind's category is its name unless the file says one")
        #expect(timeline.phases.map(\.startFrame.count) == [0, 15_000])
        #expect(timeline.phases.last?.endFrame == 616_000)

        // Ringing out, as an option: the bed plays on under the end gong to the file's end.
        let ringing = try Self.session(
            #"{"kind": "timer", "id": "t", "title": "T", "durationSeconds": 600, "ambience": "forest", "ambienceRingsOut": true}"#
        )
        let rung = Self.plan(ringing, present: ["gong", "completion", "forest"])
        let ringingBed = try #require(rung.overlays.first { $0.kind == .ambience })
        #expect(ringingBed.startFrame == 15_000 && ringingBed.endFrame == rung.totalFrames)
        #expect(rung.totalFrames == 616_000)
        do {
            _ = try Self.session(
                #"{"kind": "timer", "id": "t", "title": "T", "durationSeconds": 600, "ambienceRingsOut": "yes"}"#
            )
            Issue.record("a string for ambienceRingsOut is accepted")
        } catch {
            #expect("\(error)".contains("ambienceRingsOut: expected true or false, found a string"), "\(error)")
        }
    }

    @Test("Timer: seed 002's settings as the app stores them: intervalGongsEnabled, intervalMinutes, backgroundSoundId")
    func timerAppSettings() throws {
        let base = #""kind": "timer", "id": "t", "title": "T", "durationSeconds": 600"#
        let on = try Self.session(
            "{\(base), \"intervalGongsEnabled\": true, \"intervalMinutes\": 3, \"backgroundSoundId\": \"forest\"}"
        )
        let planned = Self.plan(on, present: ["gong", "completion", "forest"])
        // The start gong at 15 s, then every 3 minutes while before 615 s.
        #expect(Self.overlays(planned, "gong") == [15_000, 195_000, 375_000, 555_000])
        #expect(planned.overlays.first { $0.kind == .ambience }?.name == "forest")
        // Enabled without a period: the app's default, 5 minutes.
        let plain = Self.plan(
            try Self.session("{\(base), \"intervalGongsEnabled\": true}"),
            present: ["gong", "completion"]
        )
        #expect(Self.overlays(plain, "gong") == [15_000, 315_000])
        // Off: the app keeps intervalMinutes, and no interval gong rings.
        let off = Self.plan(
            try Self.session("{\(base), \"intervalGongsEnabled\": false, \"intervalMinutes\": 5}"),
            present: ["gong", "completion"]
        )
        #expect(Self.overlays(off, "gong") == [15_000])
        for (json, expected) in [
            (
                "{\(base), \"ambience\": \"rain\", \"backgroundSoundId\": \"forest\"}",
                #"backgroundSoundId: names the bed a second time, after "ambience"; give one of them"#
            ),
            ("{\(base), \"intervalGongsEnabled\": 1}", "intervalGongsEnabled: expected true or false, found a number"),
        ] {
            do {
                _ = try Self.session(json)
                Issue.record("accepted: \(json)")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
        }
    }

    @Test("Stretch lengths in a region file: a stretch's own, else its region's, else --stretch-seconds, else 60 s")
    func stretchLengths() throws {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/stretches/back-and-neck.json")
        let script = try Script(json: Data(contentsOf: url), strict: false)
        guard case .stretch(let session) = script.kind, case .regions(let regions, _) = session.source else {
            Issue.record("not a region file")
            return
        }
        let lengths = regions.map { $0.stretches.map { ($0.id, $0.durationSeconds, $0.hasGivenDuration) } }
        #expect(lengths[0].map(\.1) == [60, 60] && lengths[0].map(\.2) == [false, false])
        #expect(lengths[1].map(\.1) == [45, 20] && lengths[1].map(\.2) == [true, true])
        // The command's length applies only where the file gives none: the back's two.
        let set = session.lasting(25)
        guard case .regions(let changed, _) = set.source else { return }
        #expect(changed.map { $0.stretches.map(\.durationSeconds) } == [[25, 25], [45, 20]])
        // The longest draw of one per region: 25 + 45.
        #expect(set.totalSeconds == 70)
    }

    @Test(
        "Open meditation (seed 003, Offen): gong at the start, gong-dreimal at each change of phase, gong-ende at the end"
    )
    func open() throws {
        let script = try Self.session(
            #"{"kind": "open", "id": "o", "title": "O", "phases": [{"name": "meditation", "durationSeconds": 600}, {"durationSeconds": 120}, {"name": "closing", "durationSeconds": 60}]}"#
        )
        #expect(script.kind.name == "open" && script.durationSeconds == 780 && script.allTexts.isEmpty)
        let timeline = Self.plan(script, present: ["gong", "gong-dreimal", "gong-ende"])
        #expect(Self.overlays(timeline, "gong") == [0])
        #expect(Self.overlays(timeline, "gong-dreimal") == [600_000, 720_000])
        #expect(timeline.overlays.allSatisfy { $0.kind == .gong })
        #expect(timeline.overlays.filter { $0.name == "gong-dreimal" }.allSatisfy { $0.cue?.role == "transition" })
        #expect(timeline.items.map(\.kind) == [.silence, .bell])
        #expect(timeline.items[1].startFrame == 780_000 && timeline.items[1].name == "gong-ende")
        #expect(timeline.phases.map(\.name) == ["meditation", "phase-2", "closing"])
        #expect(timeline.phases.map(\.startFrame.count) == [0, 600_000, 720_000])
        #expect(timeline.category == "open")
        for (json, expected) in [
            (#"{"kind": "open", "id": "o", "title": "O", "phases": []}"#, "phases: needs at least one phase"),
            (
                #"{"kind": "open", "id": "o", "title": "O", "phases": [{"name": "a", "durationSeconds": 0}]}"#,
                "phases[0].durationSeconds:"
            ),
        ] {
            do {
                _ = try Self.session(json)
                Issue.record("accepted: \(json)")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
        }
    }

    @Test(
        "Breathing: a cue at every non-zero phase of every cycle, the triple gong between blocks, a missing cue spoken instead"
    )
    func breathing() throws {
        let script = try Self.session(
            #"{"kind": "breathing", "id": "b", "title": "B", "settleSeconds": 3, "blocks": [{"pattern": {"inhale": 4, "holdIn": 7, "exhale": 8, "holdOut": 0}, "cycles": 2}, {"name": "box", "pattern": {"inhale": 4, "holdIn": 4, "exhale": 4, "holdOut": 4}, "cycles": 1}]}"#
        )
        let timeline = Self.plan(
            script,
            present: ["gong", "gong-dreimal", "completion", "einatmen", "halten-ein", "ausatmen"],
            spoken: 1_000
        )
        // Block 1 from 3 s, a 19 s cycle; block 2 from 3 + 38 = 41 s, a 16 s cycle.
        #expect(Self.overlays(timeline, "einatmen") == [3_000, 22_000, 41_000])
        #expect(Self.overlays(timeline, "halten-ein") == [7_000, 26_000, 45_000])
        #expect(Self.overlays(timeline, "ausatmen") == [14_000, 33_000, 49_000])
        #expect(Self.overlays(timeline, "gong-dreimal") == [41_000])
        #expect(Self.overlays(timeline, "gong") == [0])
        // halten-aus is not in the library: block 2's hold is spoken, at 53 s.
        let spoken = timeline.items.filter { $0.kind == .segment }
        #expect(spoken.map(\.startFrame.count) == [53_000])
        #expect(spoken.first?.clip?.text == "Hold" && spoken.first?.name == "halten-aus")
        #expect(spoken.first?.cue == TimelineCue(role: "breath", block: 2, cycle: 1, breathPhase: "holdOut"))
        let cycles = timeline.overlays.filter { $0.name == "ausatmen" }.map { $0.cue?.cycle }
        #expect(cycles == [1, 2, 1])
        #expect(timeline.items.last?.kind == .bell && timeline.items.last?.startFrame == 57_000)
        #expect(timeline.phases.map(\.name) == ["settle", "block-1", "box"])
        #expect(timeline.phases.map(\.startFrame.count) == [0, 3_000, 41_000])
        #expect(timeline.skippedSounds.isEmpty)
    }

    @Test(
        "Workout: the time left spoken before each work ends (seed 003: \"30 Sekunden verbleiben\"), in the voice's language"
    )
    func remainingTime() throws {
        let script = try Self.session(
            #"{"kind": "workout", "id": "w", "title": "W", "rounds": 2, "workSeconds": 40, "restSeconds": 20, "warmUpSeconds": 10, "remainingAnnouncements": [10, 30], "voice": "espeak:de"}"#
        )
        let timeline = Self.plan(script, present: ["auftakt", "kurz", "lang", "last-round", "ausklang"], spoken: 2_000)
        let spoken = timeline.items.filter { $0.kind == .segment }
        // Work 10…50 and 70…110 s: 30 and 10 s before each end, the longest first; the rounds
        // after auftakt and lang.
        #expect(
            spoken.map(\.clip?.text) == [
                "Round 1 of 2", "30 Sekunden verbleiben", "10 Sekunden verbleiben", "Round 2 of 2",
                "30 Sekunden verbleiben", "10 Sekunden verbleiben",
            ]
        )
        #expect(spoken.map(\.startFrame.count) == [1_000, 20_000, 40_000, 51_000, 80_000, 100_000])
        #expect(
            spoken.map { $0.cue?.role } == [
                "announcement", "remaining", "remaining", "announcement", "remaining", "remaining",
            ]
        )
        #expect(spoken.filter { $0.cue?.role == "remaining" }.allSatisfy { $0.clip?.phase == "work" })
        #expect(
            spoken.map(\.name) == [
                "round-1", "remaining-30", "remaining-10", "round-2", "remaining-30", "remaining-10",
            ]
        )
        // English without a German voice; another text when given.
        let english = try Self.session(
            #"{"kind": "workout", "id": "w", "title": "W", "rounds": 1, "workSeconds": 40, "restSeconds": 0, "remainingAnnouncements": [30]}"#
        )
        #expect(english.texts(hasSound: { _ in true }, sound: SoundSettings()).contains("30 seconds left"))
        let own = try Self.session(
            #"{"kind": "workout", "id": "w", "title": "W", "rounds": 1, "workSeconds": 40, "restSeconds": 0, "remainingAnnouncements": [15.5], "remainingText": "Noch {n} Sekunden"}"#
        )
        #expect(own.texts(hasSound: { _ in true }, sound: SoundSettings()).contains("Noch 15.5 Sekunden"))
        do {
            _ = try Self.session(
                #"{"kind": "workout", "id": "w", "title": "W", "rounds": 1, "workSeconds": 40, "restSeconds": 0, "remainingAnnouncements": [40, 10, 10]}"#
            )
            Issue.record("accepted")
        } catch {
            #expect(
                "\(error)".contains("remainingAnnouncements[0]: 40 must be more than 0 and less than workSeconds"),
                "\(error)"
            )
            #expect("\(error)".contains("remainingAnnouncements[2]: 10 is given twice"), "\(error)")
        }
    }

    @Test("A cue never plays over speech: without rest, a round's announcement ends before the countdown's first beep")
    func announcementClearOfCues() throws {
        let script = try Self.session(
            #"{"kind": "workout", "id": "w", "title": "W", "rounds": 2, "workSeconds": 40, "restSeconds": 0, "warmUpSeconds": 10}"#
        )
        let timeline = Self.plan(script, present: ["auftakt", "kurz", "lang", "last-round", "ausklang"], spoken: 1_500)
        // Work at 10 and 50 s; kurz at 47, 48, 49 s, each 1 s long: they fill 47…50 s.
        #expect(Self.overlays(timeline, "kurz") == [7_000, 8_000, 9_000, 47_000, 48_000, 49_000])
        let spoken = timeline.items.filter { $0.kind == .segment }
        // Round 1 after auftakt (0…1 s); round 2, due by 50 s, would start at 48.5 s over the beeps:
        // it ends at 47 s instead, 4.5 s early.
        #expect(spoken.map(\.startFrame.count) == [1_000, 45_500])
        #expect(spoken.map { $0.cue?.earlyByFrames.count } == [0, 4_500])
        for item in spoken {
            let span = item.startFrame..<(item.startFrame + item.frameCount)
            let cues = timeline.overlays.filter { $0.kind == .cue && $0.name != "last-round" }
            #expect(
                !cues.contains { $0.startFrame < span.upperBound && span.lowerBound < $0.endFrame },
                "\(item.index)"
            )
        }
    }

    @Test(
        "Workout: auftakt, 3-2-1 before each work, lang at each change, last-round and announcements in the gap before each round"
    )
    func workout() throws {
        let script = try Self.session(
            #"{"kind": "workout", "id": "w", "title": "W", "rounds": 3, "workSeconds": 40, "restSeconds": 20, "warmUpSeconds": 10, "announce": "Round {n}", "announceText": "Runde {n} von {total}", "voice": "espeak:de"}"#
        )
        #expect(script.voice == "espeak:de" && script.durationSeconds == 170)
        let timeline = Self.plan(
            script,
            present: ["auftakt", "kurz", "lang", "last-round", "ausklang", "round-2"],
            spoken: 2_000
        )
        // Work starts at 10, 70, 130 s and ends at 50, 110, 170 s.
        #expect(Self.overlays(timeline, "auftakt") == [0])
        #expect(
            Self.overlays(timeline, "kurz") == [7_000, 8_000, 9_000, 67_000, 68_000, 69_000, 127_000, 128_000, 129_000]
        )
        #expect(Self.overlays(timeline, "lang") == [10_000, 50_000, 70_000, 110_000, 130_000])
        #expect(Self.overlays(timeline, "last-round") == [110_000])
        // Round 2 has its own sound; rounds 1 and 3 are spoken: round 1 after auftakt (a cue never
        // plays over speech), round 3 after last-round and the lang with it end.
        #expect(Self.overlays(timeline, "round-2") == [50_000])
        let spoken = timeline.items.filter { $0.kind == .segment }
        #expect(spoken.map(\.clip?.text) == ["Runde 1 von 3", "Runde 3 von 3"])
        #expect(spoken.map(\.startFrame.count) == [1_000, 111_000])
        #expect(spoken.map(\.clip?.lateByFrames) == [1_000, 1_000])
        #expect(spoken[1].cue == TimelineCue(role: "announcement", round: 3, of: 3))
        #expect(timeline.items.last?.name == "ausklang" && timeline.items.last?.startFrame == 170_000)
        #expect(timeline.phases.map(\.name) == ["warm-up", "work", "rest", "work", "rest", "work"])
        #expect(timeline.phases.map(\.startFrame.count) == [0, 10_000, 50_000, 70_000, 110_000, 130_000])
    }

    @Test(
        "docs/sessions.md's workout example: last-round at the start of the last rest, then the round's announcement, 1 s late"
    )
    func workoutExample() throws {
        let script = try Self.session(
            #"{"kind": "workout", "id": "intervals-4x40", "title": "Four rounds of 40/20", "rounds": 4, "workSeconds": 40, "restSeconds": 20, "warmUpSeconds": 10, "announce": "Round {n} of {total}"}"#
        )
        // Seed 003's cue sounds (last-round is 1 s, as the built-in one), no round-N: the rounds are
        // spoken, each 1.5 s (33,075 frames at 22,050 Hz).
        let timeline = Self.plan(
            script,
            present: ["auftakt", "kurz", "lang", "last-round", "ausklang"],
            spoken: 1_500,
            sampleRate: 22_050
        )
        #expect(Self.overlays(timeline, "auftakt") == [0])
        #expect(
            Self.overlays(timeline, "kurz") == [
                154_350, 176_400, 198_450, 1_477_350, 1_499_400, 1_521_450, 2_800_350, 2_822_400, 2_844_450,
                4_123_350, 4_145_400, 4_167_450,
            ]
        )
        #expect(
            Self.overlays(timeline, "lang") == [
                220_500, 1_102_500, 1_543_500, 2_425_500, 2_866_500, 3_748_500, 4_189_500,
            ]
        )
        // last-round plays first, at the start of the rest before the last round (seed 003: "before
        // final round"); "Round 4 of 4" follows when it ends, 22,050 frames after its planned start.
        // Every spoken round waits for the cue it would start with (auftakt, lang: 1 s each).
        let lastRound = try #require(timeline.overlays.first { $0.name == "last-round" })
        #expect(lastRound.startFrame == 3_748_500 && lastRound.cue?.earlyByFrames == 0)
        let spoken = timeline.items.filter { $0.kind == .segment }
        #expect(spoken.map(\.clip?.text) == ["Round 1 of 4", "Round 2 of 4", "Round 3 of 4", "Round 4 of 4"])
        #expect(spoken.map(\.startFrame.count) == [22_050, 1_124_550, 2_447_550, 3_770_550])
        #expect(spoken.map(\.clip?.plannedStartFrame.count) == [0, 1_102_500, 2_425_500, 3_748_500])
        #expect(spoken.map(\.clip?.lateByFrames.count) == [22_050, 22_050, 22_050, 22_050])
        #expect(spoken.map(\.clip?.phase) == ["warm-up", "rest", "rest", "rest"])
        #expect(timeline.items.last?.name == "ausklang" && timeline.items.last?.startFrame == 5_071_500)
        #expect(timeline.phases.map(\.name) == ["warm-up", "work", "rest", "work", "rest", "work", "rest", "work"])
        #expect(
            timeline.phases.map(\.startFrame.count) == [
                0, 220_500, 1_102_500, 1_543_500, 2_425_500, 2_866_500, 3_748_500, 4_189_500,
            ]
        )
    }

    @Test("Workout: an announcement longer than its rest starts earlier and says so")
    func earlyAnnouncement() throws {
        let script = try Self.session(
            #"{"kind": "workout", "id": "w", "title": "W", "rounds": 2, "workSeconds": 10, "restSeconds": 1}"#
        )
        let timeline = Self.plan(script, present: [], spoken: 2_000)
        let spoken = timeline.items.filter { $0.kind == .segment }
        // Round 2's gap is 10…11 s: its 2 s announcement ends at 11 s, so it starts at 9 s.
        #expect(spoken.map(\.startFrame.count) == [0, 9_000])
        #expect(spoken[1].clip?.plannedStartFrame == 10_000)
        #expect(spoken[1].cue?.earlyByFrames == 1_000 && spoken[1].clip?.lateByFrames == 0)
        // The end sound first (the narration lane's), then the cues in the order the score plays them.
        #expect(timeline.skippedSounds.map(\.name) == ["ausklang", "auftakt", "lang", "last-round", "kurz"])
    }

    @Test(
        "Stretch: description at each start, the half cue pushed later by a long description, the closing line at the end"
    )
    func stretch() throws {
        let script = try Self.session(
            #"{"kind": "stretch", "id": "s", "title": "S", "stretches": [{"id": "a", "name": "A", "description": "Long one.", "bilateral": false, "durationSeconds": 30}, {"id": "b", "name": "B", "description": "Short one.", "bilateral": true, "durationSeconds": 30}]}"#
        )
        let score = try #require(script.score(sound: SoundSettings(), hasSound: { _ in true }, seed: 1))
        var clips = score.spoken.map { ScriptPlanningTests.clip($0.text, frames: 5_000) }
        clips[0] = ScriptPlanningTests.clip("Long one.", frames: 20_000)
        let timeline = Timeline.plan(
            score: score,
            script: script,
            seed: 1,
            sampleRate: 1_000,
            channelCount: 1,
            spokenClips: clips,
            sounds: [:],
            layers: SessionLayers()
        )
        let spoken = timeline.items.filter { $0.kind == .segment }
        #expect(
            spoken.map(\.clip?.text) == [
                "Long one.", "You're halfway through this stretch.", "Short one.", "Now switch to the other side.",
                "Great work! Your stretching session is complete.",
            ]
        )
        #expect(spoken.map(\.startFrame.count) == [0, 20_000, 30_000, 45_000, 60_000])
        #expect(spoken.map(\.clip?.lateByFrames) == [0, 5_000, 0, 0, 0])
        #expect(spoken.map(\.name) == ["a", "halfway", "b", "switch-sides", "session-complete"])
        #expect(timeline.totalFrames == 65_000)
        #expect(timeline.phases.map(\.name) == ["a", "b", "complete"])
    }

    @Test("Stretch regions: a seeded draw of one stretch per region, the same for the same seed")
    func regions() throws {
        let json =
            #"[{"id": "back", "region": "back", "displayName": "Back", "stretches": [{"id": "b1", "name": "B1", "description": "b one", "bilateral": false}, {"id": "b2", "name": "B2", "description": "b two", "bilateral": false}, {"id": "b3", "name": "B3", "description": "b three", "bilateral": true}]}, {"id": "hips", "region": "hips", "displayName": "Hips", "stretches": [{"id": "h1", "name": "H1", "description": "h one", "bilateral": true}]}]"#
        let script = try Self.session(json)
        guard case .stretch(let session) = script.kind else {
            Issue.record("not a stretch session")
            return
        }
        let draws = Set((0..<40).map { session.stretches(seed: UInt64($0)).map(\.id) })
        #expect(draws == [["b1", "h1"], ["b2", "h1"], ["b3", "h1"]])
        #expect(session.stretches(seed: 7) == session.stretches(seed: 7))
        #expect(session.stretches(seed: 7).map(\.durationSeconds) == [60, 60])
        let hips = try session.selecting(regions: ["hips"], perRegion: 1)
        #expect(hips.stretches(seed: 7).map(\.id) == ["h1"])
        #expect(try session.selecting(regions: nil, perRegion: 2).stretches(seed: 3).count == 3)
        #expect(throws: ScriptError.self) { try session.selecting(regions: ["neck"], perRegion: 1) }
    }

    @Test("The announcement chain: forward, then earlier to meet deadlines, never overlapping")
    func chain() {
        typealias Entry = AnnouncementChain.Entry
        let table: [([Entry], [Int64])] = [
            // Room for both where planned.
            (
                [
                    Entry(plannedStart: 0, frameCount: 10, deadline: 50),
                    Entry(plannedStart: 20, frameCount: 10, deadline: 50),
                ], [0, 20]
            ),
            // The second overlaps the first: it waits for it.
            (
                [
                    Entry(plannedStart: 0, frameCount: 10, deadline: 50),
                    Entry(plannedStart: 5, frameCount: 10, deadline: 50),
                ], [0, 10]
            ),
            // The second would miss its deadline: both move earlier.
            (
                [
                    Entry(plannedStart: 30, frameCount: 10, deadline: 100),
                    Entry(plannedStart: 35, frameCount: 10, deadline: 45),
                ], [25, 35]
            ),
            // No room before 0: the first stays at 0, the second starts late.
            (
                [
                    Entry(plannedStart: 0, frameCount: 10, deadline: 5),
                    Entry(plannedStart: 2, frameCount: 10, deadline: 8),
                ], [0, 10]
            ),
        ]
        for (entries, starts) in table {
            #expect(AnnouncementChain.place(entries).map(\.count) == starts)
        }
    }

    @Test("Validation: every problem at once, with its JSON path")
    func validation() {
        let cases: [(String, [String])] = [
            (
                #"{"kind": "workout", "id": "w", "title": "W", "rounds": 0, "workSeconds": -5, "restSeconds": -1}"#,
                [
                    "rounds: 0 is not a whole number from 1 to 10000",
                    "workSeconds: -5 must be greater than 0",
                    "restSeconds: -1 is negative",
                ]
            ),
            (
                #"{"kind": "breathing", "id": "b", "title": "B", "pattern": {"inhale": 0, "holdIn": 0, "exhale": 0}, "cycles": 3}"#,
                ["pattern: every phase is 0 s; a breath needs at least one phase longer than 0"]
            ),
            (
                #"{"kind": "breathing", "id": "b", "title": "B", "pattern": {"inhale": 1, "exhale": 1}, "cycles": 6000}"#,
                ["cycles: 12000 cues after expansion are more than the limit of 10000"]
            ),
            (
                #"{"kind": "timer", "id": "t", "title": "T", "durationSeconds": 0, "intervalMinutes": 0, "endGong": ""}"#,
                [
                    "durationSeconds: 0 must be greater than 0",
                    "endGong: must not be empty",
                    "intervalMinutes: 0 must be greater than 0 and at most 1440",
                ]
            ),
            (
                #"{"kind": "stretch", "id": "s", "title": "S", "stretches": [{"id": "a", "description": "", "bilateral": 1}]}"#,
                [
                    "stretches[0].description: is empty; a text needs 1 to 5000 characters",
                    "stretches[0].bilateral: expected true or false, found a number",
                ]
            ),
            (
                #"{"kind": "yoga", "id": "y", "title": "Y"}"#,
                [
                    #"kind: "yoga" is not a kind of session; the kinds are guided, timer, breathing, workout, stretch, open"#
                ]
            ),
        ]
        for (json, expected) in cases {
            #expect(throws: ScriptError(.brokenRule, problems: expected.map(Self.problem))) {
                try Self.session(json)
            }
        }
    }

    @Test("Keys a kind does not know are warnings naming the nearest key, and problems with strict")
    func strictKeys() throws {
        let json =
            #"{"kind": "breathing", "id": "b", "title": "B", "pattern": {"inhale": 4, "exhale": 4}, "cycles": 2, "cues": {"inhale": "in", "inhail": "x"}, "cycels": 3}"#
        let inhail =
            #"cues.inhail: is not a field of a breath (its phases are inhale, holdIn, exhale, holdOut) (did you mean "inhale"?)"#
        let cycels = #"cycels: is not a field of a breathing session (did you mean "cycles"?)"#
        var warnings: [ScriptProblem] = []
        _ = try Script(json: Data(json.utf8), warnings: &warnings)
        #expect(warnings.map(\.description) == [inhail + "; it is ignored", cycels + "; it is ignored"])
        #expect(throws: ScriptError(.brokenRule, problems: [Self.problem(inhail), Self.problem(cycels)])) {
            try Self.session(json, strict: true)
        }
    }

    @Test("A guided script's unknown keys, its segments' and its sound block's are warnings with the nearest key")
    func guidedUnknownKeys() throws {
        let json = #"""
            {"id": "g", "category": "c", "title": "T", "durationSeconds": 10, "voice": "espeak:de",
             "sound": {"ambiance": "rain"}, "intrejections": [],
             "segments": [{"id": "a", "phase": "opening", "startSeconds": 0, "text": "Hallo.", "phaze": "x"}]}
            """#
        var warnings: [ScriptProblem] = []
        let script = try Script(json: Data(json.utf8), warnings: &warnings)
        #expect(script.voice == "espeak:de", "a guided script names its voice as the other kinds do")
        #expect(
            warnings.map(\.description) == [
                #"intrejections: is not a field of a guided script (did you mean "interjections"?); it is ignored"#,
                #"segments[0].phaze: is not a field of a segment (did you mean "phase"?); it is ignored"#,
                #"sound.ambiance: is not a field of the sound block (did you mean "ambience"?); it is ignored"#,
            ]
        )
        #expect(throws: ScriptError.self) { try Script(json: Data(json.utf8), strict: true) }
    }

    @Test("A timeline of another kind reads back as it was written")
    func roundTrip() throws {
        let script = try Self.session(
            #"{"kind": "workout", "id": "w", "title": "W", "rounds": 2, "workSeconds": 10, "restSeconds": 1}"#
        )
        let timeline = Self.plan(script, present: ["kurz", "lang", "last-round"], spoken: 2_000)
        let data = try JSONEncoder().encode(timeline)
        #expect(try JSONDecoder().decode(Timeline.self, from: data) == timeline.asWritten)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["kind"] as? String == "workout")
    }

    static func problem(_ line: String) -> ScriptProblem {
        let parts = line.split(separator: ": ", maxSplits: 1).map(String.init)
        return ScriptProblem(location: parts[0], rule: parts[1])
    }
}
