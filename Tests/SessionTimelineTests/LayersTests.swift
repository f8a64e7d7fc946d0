import Foundation
import SessionTimeline
import Testing

/// The gap arithmetic of overlays, the lead-in, phases, gains and the v2 JSON.
@Suite("Layers")
struct LayersTests {
    static let rate: SampleRate = 1_000

    static func sound(_ name: String, frames: Int64, loudness: Double? = nil, gain: Double = 1) -> SoundChoice {
        .chosen(
            ChosenSound(
                name: name,
                source: AudioSourceInfo(
                    path: "/sounds/\(name).flac",
                    sampleRate: 2_000,
                    frameCount: Frames(frames * 2),
                    gapless: true,
                    loudness: loudness
                ),
                gain: gain
            )
        )
    }

    static func plan(_ layers: SessionLayers, duration: Double = 60, loudness: [Double?] = [nil, nil]) -> Timeline {
        var script = ScriptPlanningTests.script(interjections: [])
        script.durationSeconds = duration
        var clips = [ScriptPlanningTests.clip("ka", frames: 5_000), ScriptPlanningTests.clip("kb", frames: 4_000)]
        for index in clips.indices { clips[index].source.loudness = loudness[index] }
        return Timeline.plan(
            script: script,
            session: script.guided,
            seed: 1,
            sampleRate: rate,
            channelCount: 1,
            segmentClips: clips,
            interjections: [],
            interjectionClips: [],
            layers: layers
        )
    }

    static let bell = SoundChoice.chosen(ChosenSound(name: "bell", source: ScriptPlanningTests.bell))

    @Test(
        "A lead-in moves the narration later and is the countdown: the start gong rings at its end (seed 002), interval gongs count from the script's 0"
    )
    func leadInAndGongs() {
        let timeline = Self.plan(
            SessionLayers(
                leadIn: 5_000,
                bell: Self.bell,
                startGong: Self.sound("gong", frames: 3_000),
                intervalGong: Self.sound("gong", frames: 3_000),
                intervalSeconds: 15
            )
        )
        #expect(
            timeline.items.map(\.kind) == [TimelineItem.Kind.silence, .segment, .silence, .segment, .silence, .bell]
        )
        #expect(timeline.items.map(\.startFrame.count) == [0, 5_000, 10_000, 25_000, 29_000, 65_000])
        #expect(timeline.items[1].clip?.plannedStartFrame == 5_000)
        #expect(timeline.leadInFrames == 5_000)
        #expect(timeline.totalFrames == 73_000)
        // The start gong at the lead-in's end; 15, 30 and 45 s after the script's 0 (+5 s lead-in);
        // 60 s is not before durationSeconds.
        #expect(timeline.overlays.map(\.startFrame.count) == [5_000, 20_000, 35_000, 50_000])
        #expect(timeline.overlays.map(\.frameCount.count) == [3_000, 3_000, 3_000, 3_000])
        #expect(timeline.overlays.map(\.index) == [0, 1, 2, 3])
        #expect(timeline.overlays.allSatisfy { $0.lane == .cues && $0.kind == .gong && $0.bed == nil })

        // Sounds over the lead-in, as before the seed's rule: the start gong at frame 0, the bed from 0.
        let over = Self.plan(
            SessionLayers(
                leadIn: 5_000,
                soundsOverLeadIn: true,
                bell: Self.bell,
                startGong: Self.sound("gong", frames: 3_000),
                ambience: Self.sound("rain", frames: 10_000)
            )
        )
        #expect(over.overlays.map { "\($0.kind) \($0.startFrame.count)" } == ["ambience 0", "gong 0"])
        let seed = Self.plan(
            SessionLayers(
                leadIn: 5_000,
                bell: Self.bell,
                startGong: Self.sound("gong", frames: 3_000),
                ambience: Self.sound("rain", frames: 10_000)
            )
        )
        #expect(seed.overlays.map { "\($0.kind) \($0.startFrame.count)" } == ["ambience 5000", "gong 5000"])
        #expect(seed.overlays[0].endFrame == seed.totalFrames, "the bed still runs to the end")
    }

    @Test("Interval gongs: none at or after durationSeconds, none when the interval is the whole session")
    func intervalEdges() {
        let gong = Self.sound("gong", frames: 1_000)
        let exact = Self.plan(SessionLayers(bell: Self.bell, intervalGong: gong, intervalSeconds: 30))
        #expect(exact.overlays.map(\.startFrame.count) == [30_000], "60 s is not before durationSeconds 60")
        let whole = Self.plan(SessionLayers(bell: Self.bell, intervalGong: gong, intervalSeconds: 60))
        #expect(whole.overlays.isEmpty)
        let uneven = Self.plan(SessionLayers(bell: Self.bell, intervalGong: gong, intervalSeconds: 25), duration: 61)
        #expect(uneven.overlays.map(\.startFrame.count) == [25_000, 50_000])
    }

    @Test("A gong at a clip's start overlaps it and leaves the narration lane as it was")
    func gongAtBoundary() {
        let plain = Self.plan(SessionLayers(bell: Self.bell))
        let layered = Self.plan(
            SessionLayers(bell: Self.bell, startGong: Self.sound("gong", frames: 7_000))
        )
        #expect(layered.items == plain.items)
        #expect(layered.overlays.map(\.startFrame.count) == [0])
        #expect(layered.overlays[0].frameCount == 7_000)
    }

    @Test("A sound running past the end is cut there: overlays never lengthen the file")
    func pastTheEnd() {
        let timeline = Self.plan(
            SessionLayers(bell: Self.bell, intervalGong: Self.sound("long", frames: 40_000), intervalSeconds: 45)
        )
        #expect(timeline.totalFrames == 68_000)
        #expect(timeline.overlays.map(\.startFrame.count) == [45_000])
        #expect(timeline.overlays[0].frameCount == 23_000)
        #expect(timeline.overlays[0].source.frameCount == 80_000, "the source keeps its own length")
    }

    @Test("The bed spans the file; fades longer than the file are shortened in proportion")
    func bed() {
        let timeline = Self.plan(
            SessionLayers(
                bell: Self.bell,
                startGong: Self.sound("gong", frames: 1_000),
                ambience: Self.sound("rain", frames: 20_000, gain: 0.15),
                ambienceFadeIn: 4_000,
                ambienceFadeOut: 8_000,
                loopCrossfade: 2_000,
                duckDecibels: 6,
                duckRamp: 250
            )
        )
        let bed = timeline.overlays[0]
        #expect(bed.lane == .ambience && bed.kind == .ambience && bed.index == 0)
        #expect(bed.startFrame == 0 && bed.frameCount == timeline.totalFrames)
        #expect(bed.gain == 0.15)
        #expect(
            bed.bed
                == TimelineOverlay.Bed(
                    loopCrossfadeFrames: 2_000,
                    fadeInFrames: 4_000,
                    fadeOutFrames: 8_000,
                    duckDecibels: 6,
                    duckRampFrames: 250
                )
        )
        #expect(timeline.overlays[1].kind == .gong, "the bed comes first among overlays starting together")

        let short = Self.plan(
            SessionLayers(
                ambience: Self.sound("rain", frames: 3_001),
                ambienceFadeIn: 40_000,
                ambienceFadeOut: 80_000,
                loopCrossfade: 2_000
            )
        )
        #expect(short.totalFrames == 60_000)
        #expect(short.overlays[0].bed?.fadeInFrames == 20_000)
        #expect(short.overlays[0].bed?.fadeOutFrames == 40_000)
        #expect(
            short.overlays[0].bed?.loopCrossfadeFrames == 375,
            "a 3 001-frame period crossfades over an eighth of itself"
        )
    }

    @Test("Sounds not found are left out and listed; a missing bell ends the file with the session")
    func skipped() {
        let missing = SkippedSound(lane: "cues", kind: "gong", name: "nope", lookedFor: ["/s/nope.caf", "/s/nope.wav"])
        let bell = SkippedSound(lane: "narration", kind: "bell", name: "ding", lookedFor: ["/s/ding.caf"])
        let timeline = Self.plan(SessionLayers(bell: .skipped(bell), startGong: .skipped(missing)))
        #expect(timeline.overlays.isEmpty)
        #expect(timeline.skippedSounds == [bell, missing])
        #expect(timeline.items.last?.kind == .silence)
        #expect(timeline.totalFrames == 60_000)
    }

    @Test("Loudness: each clip gets the gain to the target; sounds their own gain times theirs")
    func gains() {
        let timeline = Self.plan(
            SessionLayers(
                loudnessTarget: -16,
                bell: .chosen(
                    ChosenSound(
                        name: "bell",
                        source: AudioSourceInfo(
                            path: nil,
                            sampleRate: 1_000,
                            frameCount: 8_000,
                            gapless: false,
                            loudness: -22
                        ),
                        gain: 0.5
                    )
                ),
                startGong: Self.sound("gong", frames: 1_000, loudness: -10, gain: 0.5)
            ),
            loudness: [-20, -50]
        )
        let segments = timeline.items.filter { $0.kind == .segment }
        #expect(abs(segments[0].gain - 1.584_893_192) < 1e-9, "+4 dB")
        #expect(abs(segments[1].gain - 10) < 1e-9, "+34 dB is capped at +20 dB")
        #expect(abs(timeline.items.last!.gain - 0.5 * 1.995_262_315) < 1e-9, "0.5 × +6 dB")
        #expect(abs(timeline.overlays[0].gain - 0.5 * 0.501_187_234) < 1e-9, "0.5 × −6 dB")
        #expect(timeline.loudness == TimelineLoudness(target: -16, ceiling: -1))
        #expect(Loudness.normalizingGain(measured: nil, target: -16) == 1)
        #expect(Loudness.normalizingGain(measured: -30, target: nil) == 1)
    }

    @Test("Phases tile the output: the first from frame 0, each to the next one's first clip, the last to the end")
    func phases() {
        let timeline = Self.plan(SessionLayers(leadIn: 5_000, bell: Self.bell))
        #expect(
            timeline.phases == [
                TimelinePhase(name: "opening", startFrame: 0, endFrame: 25_000),
                TimelinePhase(name: "teachings", startFrame: 25_000, endFrame: 73_000),
            ]
        )
    }

    @Test("Timeline JSON v3 round-trips, carries overlays, phases and loudness, and v1 and v2 still read")
    func json() throws {
        var timeline = Self.plan(
            SessionLayers(
                leadIn: 2_000,
                loudnessTarget: -16,
                bell: Self.bell,
                startGong: Self.sound("gong", frames: 1_000, loudness: -12),
                ambience: Self.sound("rain", frames: 20_000, gain: 0.15),
                ambienceFadeIn: 4_000,
                loopCrossfade: 2_000
            ),
            loudness: [-20, -18]
        )
        timeline.loudness?.program = -16.123_456
        timeline.loudness?.speech = -16.5
        timeline.loudness?.range = 4.25
        timeline.loudness?.maxShortTerm = -9
        timeline.loudness?.truePeak = -1.2
        timeline.loudness?.limiter = LimiterActivity(maxReductionDecibels: 2.5, secondsOverOneDecibel: 0.25)
        timeline.loudness?.phaseSpeech = [-16.25, nil]
        let data = CanonicalJSON.encode(timeline)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["schemaVersion"] as? Int == 3)
        #expect(object["leadInFrames"] as? Int == 2_000)
        let overlays = try #require(object["overlays"] as? [[String: Any]])
        #expect(overlays.count == 2)
        #expect(overlays[0]["lane"] as? String == "ambience" && overlays[0]["loop"] as? Bool == true)
        #expect(overlays[0]["loopCrossfadeFrames"] as? Int == 2_000)
        #expect(overlays[1]["name"] as? String == "gong" && overlays[1]["loop"] as? Bool == false)
        #expect(overlays[1]["loudness"] as? Double == -12)
        #expect(overlays[1]["source"] as? String == "gong.flac", "a file's name, not this machine's path")
        let loudness = try #require(object["loudness"] as? [String: Any])
        #expect(loudness["program"] as? Double == -16.12)
        #expect(loudness["speech"] as? Double == -16.5 && loudness["anchor"] as? String == "speech")
        #expect(loudness["ceiling"] as? Double == -1 && loudness["programGainDb"] == nil)
        #expect(loudness["limiter"] as? [String: Double] == ["maxReductionDb": 2.5, "secondsOver1dB": 0.25])
        let phases = try #require(object["phases"] as? [[String: Any]])
        #expect(phases.map { $0["name"] as? String } == ["opening", "teachings"])
        #expect(phases[0]["speechLoudness"] as? Double == -16.25 && phases[1]["speechLoudness"] is NSNull)
        #expect(phases.map { $0["endSeconds"] as? Double } == [22, 70])
        let items = try #require(object["items"] as? [[String: Any]])
        #expect(items[1]["loudness"] as? Double == -20)
        #expect(items.last?["name"] as? String == "bell")

        var decoded = try JSONDecoder().decode(Timeline.self, from: data)
        decoded.loudness?.program = timeline.loudness?.program
        #expect(decoded == timeline.asWritten)
        // Version 2 named the ceiling and the program loudness differently.
        var version2 = object
        version2["schemaVersion"] = 2
        version2["loudness"] = ["target": -16, "truePeakCeiling": -2, "integrated": -17.5, "truePeak": -2.25]
        let read = try JSONDecoder().decode(
            Timeline.self,
            from: try JSONSerialization.data(withJSONObject: version2)
        )
        #expect(
            read.loudness
                == TimelineLoudness(
                    target: -16,
                    ceiling: -2,
                    program: -17.5,
                    truePeak: -2.25,
                    phaseSpeech: [-16.25, nil]
                )
        )

        let v1 = """
            {"schemaVersion": 1, "scriptId": "s", "title": "T", "seed": 3, "sampleRate": 1000, "channels": 1,
             "totalFrames": 10, "durationSeconds": 0.01,
             "items": [{"index": 0, "kind": "silence", "startFrame": 0, "frameCount": 10,
                        "startSeconds": 0, "durationSeconds": 0.01}]}
            """
        let old = try JSONDecoder().decode(Timeline.self, from: Data(v1.utf8))
        #expect(old.overlays.isEmpty && old.loudness == nil && old.leadInFrames == 0 && old.totalFrames == 10)
    }

    @Test("A script's sound block is read, checked field by field, and overridden by settings")
    func soundBlock() throws {
        func script(_ sound: String) -> Data {
            Data(
                """
                {"id": "s", "category": "c", "title": "T", "durationSeconds": 60,
                 "segments": [{"id": "a", "startSeconds": 0, "text": "A", "phase": "opening"}],
                 "sound": \(sound)}
                """.utf8
            )
        }
        let parsed = try Script(
            json: script(
                #"{"ambience": "forest", "ambienceGain": 0.2, "intervalMinutes": 5, "leadInSeconds": 3, "duckDb": 6, "loudness": "off", "truePeak": -2}"#
            )
        )
        #expect(
            parsed.sound
                == SoundSettings(
                    ambience: "forest",
                    ambienceGain: 0.2,
                    intervalMinutes: 5,
                    leadInSeconds: 3,
                    duckDecibels: 6,
                    loudness: .off,
                    truePeak: -2
                )
        )
        #expect(parsed.sound?.effectiveIntervalGong == "gong")
        let merged = SoundSettings(ambience: "rain", loudness: .target(-18)).overriding(parsed.sound)
        #expect(merged.ambience == "rain" && merged.ambienceGain == 0.2 && merged.loudnessTarget(for: .mono) == -18)
        #expect(SoundSettings().loudnessTarget(for: .mono) == -16)

        let error = #expect(throws: ScriptError.self) {
            try Script(
                json: script(
                    #"{"ambience": "", "ambienceGain": 5, "intervalMinutes": 0, "loudness": true, "truePeak": 1, "duckDb": "x"}"#
                )
            )
        }
        #expect(
            error?.problems.map(\.description) == [
                #"sound.loudness: expected a number of LUFS, a preset's name or "off", found a boolean"#,
                #"sound.duckDb: expected a number, found a string"#,
                "sound.ambience: must not be empty",
                "sound.ambienceGain: 5 is outside 0…4",
                "sound.truePeak: 1 is outside -20…0",
                "sound.intervalMinutes: 0 must be greater than 0 and at most 1440",
            ]
        )
        let notObject = #expect(throws: ScriptError.self) { try Script(json: script("[]")) }
        #expect(notObject?.problems.map(\.description) == ["sound: expected an object, found an array"])
    }

    @Test(
        "A sound's gain keeps its true peak under the limit: a gong is brought to the target only as far as its strike allows"
    )
    func soundPeakLimit() {
        func gong(loudness: Double?, truePeak: Double?, gain: Double = 1) -> ChosenSound {
            ChosenSound(
                name: "gong",
                source: AudioSourceInfo(
                    path: "/sounds/gong.flac",
                    sampleRate: 44_100,
                    frameCount: 44_100,
                    gapless: true,
                    loudness: loudness,
                    truePeak: truePeak
                ),
                gain: gain
            )
        }
        var layers = SessionLayers(loudnessTarget: -16)
        layers.soundPeakLimit = -1.6
        // −21.6 LUFS wants +5.6 dB; its −3.0 dBTP strike allows +1.4.
        let capped = Loudness.soundGain(gong(loudness: -21.6, truePeak: -3), as: .gong, in: layers)
        #expect(abs(20 * log10(capped) - 1.4) < 1e-9)
        // A quiet peak leaves the loudness gain alone; the sound's own gain counts toward the peak.
        let free = Loudness.soundGain(gong(loudness: -21.6, truePeak: -12), as: .gong, in: layers)
        #expect(abs(20 * log10(free) - 5.6) < 1e-9)
        let doubled = Loudness.soundGain(gong(loudness: -21.6, truePeak: -3, gain: 2), as: .gong, in: layers)
        #expect(abs(20 * log10(doubled) - 1.4) < 1e-9, "min(2 × +5.6 dB, +1.4 dB)")
        let halved = Loudness.soundGain(gong(loudness: -21.6, truePeak: -3, gain: 0.5), as: .gong, in: layers)
        #expect(abs(halved - 0.5 * pow(10, 5.6 / 20)) < 1e-12, "0.5 × +5.6 dB is under the limit")
        // No peak measured, or no limit (loudness off): the gain as before.
        #expect(
            abs(20 * log10(Loudness.soundGain(gong(loudness: -21.6, truePeak: nil), as: .gong, in: layers)) - 5.6)
                < 1e-9
        )
        layers.soundPeakLimit = nil
        #expect(
            abs(20 * log10(Loudness.soundGain(gong(loudness: -21.6, truePeak: -3), as: .gong, in: layers)) - 5.6) < 1e-9
        )
    }

    @Test("A gong, a bell or a cue is leveled by its loudest 400 ms, by kind; a bed by its integrated loudness")
    func loudestLevels() {
        func sound(loudness: Double?, loudest: Double?, gain: Double = 1, truePeak: Double = -30) -> ChosenSound {
            ChosenSound(
                name: "kurz",
                source: AudioSourceInfo(
                    path: "/sounds/kurz.wav",
                    sampleRate: 44_100,
                    frameCount: 6_615,
                    gapless: true,
                    loudness: loudness,
                    truePeak: truePeak,
                    loudestMomentary: loudest
                ),
                gain: gain
            )
        }
        func decibels(_ sound: ChosenSound, _ kind: TimelineOverlay.Kind, _ layers: SessionLayers) -> Double {
            20 * log10(Loudness.soundGain(sound, as: kind, in: layers))
        }
        var layers = SessionLayers(loudnessTarget: -16)
        layers.soundPeakLimit = -1.5
        // A 150 ms beep: no integrated loudness (it kept its raw gain, 0 dB), its loudest 400 ms −5.2 LUFS.
        let beep = sound(loudness: nil, loudest: -5.2, truePeak: -3)
        #expect(abs(decibels(beep, .cue, layers) - -10.8) < 1e-9, "−5.2 LUFS to the target, −16")
        #expect(abs(decibels(beep, .gong, layers) - -12.8) < 1e-9, "a gong 2 LU under it")
        #expect(abs(decibels(beep, .bell, layers) - -12.8) < 1e-9)
        #expect(
            abs(decibels(sound(loudness: nil, loudest: -5.2, gain: 2), .cue, layers) - (-10.8 + 20 * log10(2))) < 1e-9
        )
        // Its peak still caps it: −5.2 LUFS at −3 dBTP may rise by 1.5 dB at most.
        #expect(abs(decibels(sound(loudness: nil, loudest: -25, truePeak: -3), .cue, layers) - 1.5) < 1e-9)
        // A bed: its integrated loudness, whatever its loudest 400 ms.
        #expect(abs(decibels(sound(loudness: -30, loudest: -20), .ambience, layers) - 14) < 1e-9)
        // Not measured so (a timeline of an earlier version): the integrated loudness, as before.
        #expect(abs(decibels(sound(loudness: -20, loudest: nil), .cue, layers) - 4) < 1e-9)
        // Loudness off: the sound's own gain.
        layers = SessionLayers(loudnessTarget: nil)
        #expect(decibels(beep, .cue, layers) == 0)
    }

    @Test(
        "A mono source copied to every channel reads louder by the channels' weights; presets take AES TD1004's mono figure"
    )
    func layoutOffsets() {
        func source(_ channels: ChannelCount) -> AudioSourceInfo {
            var source = AudioSourceInfo(path: "/x.wav", sampleRate: 44_100, frameCount: 44_100, gapless: true)
            source.channelCount = channels
            return source
        }
        let six: ChannelCount = 6
        #expect(abs(Loudness.layoutOffset(of: source(.mono), in: .stereo) - 3.0103) < 1e-4)
        #expect(Loudness.layoutOffset(of: source(.mono), in: .mono) == 0)
        #expect(Loudness.layoutOffset(of: source(.stereo), in: .stereo) == 0)
        #expect(abs(Loudness.layoutOffset(of: source(.stereo), in: .mono) - -3.0103) < 1e-4)
        #expect(
            abs(Loudness.layoutOffset(of: source(.mono), in: six) - 10 * log10(5.82)) < 1e-9,
            "L R C, no LFE, two surrounds at 1.41"
        )
        #expect(abs(Loudness.layoutOffset(of: source(six), in: .stereo) - 10 * log10(2 / 5.82)) < 1e-9)
        // The gain that brings a mono clip at −20 LUFS to −16 in a stereo file is 3 dB less.
        var layers = SessionLayers(loudnessTarget: -16)
        layers.outputChannels = .stereo
        let clip = AudioSourceInfo(path: "/c.mp3", sampleRate: 22_050, frameCount: 22_050, gapless: true, loudness: -20)
        #expect(abs(20 * log10(Loudness.speechGain(clip, in: layers)) - (4 - 3.0103)) < 1e-4)
        #expect(LoudnessPreset.podcast.target(for: .mono) == -19 && LoudnessPreset.podcast.target(for: .stereo) == -16)
        #expect(LoudnessPreset.speech.target(for: .mono) == -21 && LoudnessPreset.streaming.target(for: .mono) == -17)
        #expect(LoudnessPreset.ebuR128.target(for: .mono) == -23)
        #expect(SoundSettings(loudness: .target(-16)).loudnessTarget(for: .mono) == -16)
        #expect(SoundSettings(loudness: .preset(.podcast)).loudnessTarget(for: .mono) == -19)
        #expect(SoundSettings(loudness: .off).loudnessTarget(for: .stereo) == nil)
    }
}
