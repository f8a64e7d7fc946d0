// libFuzzer target for script JSON: `Script(json:)` (JSONValue.swift's strict parser, then
// ScriptValidator.swift), and for every script it accepts, the code a validated script flows into.
//
// Compiled into the SessionTimeline module itself (see scripts/fuzz), so internal API is visible.
//
// Every thrown ScriptError is an expected outcome. Findings are crashes, sanitizer reports,
// timeouts, out-of-memory, and these broken promises
// (checked with `expect`, which stops with its message even in -O builds):
// - a rejected script comes with 1…101 problems (100 listed, then a summary), exactly one if it is
//   not JSON;
// - an accepted script keeps every rule in ScriptRules (docs/scripts.md);
// - an accepted guided script, written back as `import` writes it (MeditationMarkdown.json), parses
//   to an equal script (other kinds are not written back);
// - interjections resolve inside their windows, and Timeline.plan at 22,050 and 48,000 Hz (with
//   clips at other rates) gives a contiguous timeline that reaches the session's end; its
//   preconditions ("a validated script's time … must convert to frames") hold.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    let script: Script
    do {
        script = try Script(json: bytes)
    } catch {
        expect(!error.problems.isEmpty, "a ScriptError without problems")
        expect(
            error.code == .brokenRule || (error.code == .notJSON && error.problems.count == 1),
            "code \(error.code): \(error)"
        )
        expect(
            error.problems.count <= ScriptRules.maximumReportedProblems + 1,
            "\(error.problems.count) problems reported"
        )
        expect(!error.description.isEmpty)
        return 0
    }
    checkRules(script)
    guard case .guided(let session) = script.kind else { return 0 }
    checkRules(session, duration: script.durationSeconds)
    checkRoundTrip(script)
    checkPlanning(script, session, seed: UInt64(truncatingIfNeeded: bytes.hashValue))
    return 0
}

private func checkRules(_ script: Script) {
    expect(ScriptRules.isValidIdentifier(script.id), "accepted id \(quoted(script.id))")
    expect(script.durationSeconds > 0 && script.durationSeconds <= ScriptRules.maximumDurationSeconds)
    expect(!script.category.isEmpty && script.category.utf16.count <= ScriptRules.maximumLabelLength)
    expect(!script.title.isEmpty && script.title.utf16.count <= ScriptRules.maximumLabelLength)
    expect(script.subtitle.utf16.count <= ScriptRules.maximumLabelLength)
    expect(abs(script.orderIndex) <= 1_000_000_000)
}

private func checkRules(_ session: GuidedSession, duration: Double) {
    expect(!session.segments.isEmpty && session.segments.count <= ScriptRules.maximumCueCount)
    expect(session.interjections.count <= ScriptRules.maximumCueCount)
    expect(Set(session.segments.map(\.id)).count == session.segments.count, "duplicate segment ids accepted")
    for segment in session.segments {
        expect(segment.startSeconds >= 0 && segment.startSeconds <= duration)
        expect(!segment.phase.isEmpty)
        checkText(segment.text)
    }
    for interjection in session.interjections {
        expect(interjection.windowStartSeconds >= 0)
        expect(interjection.windowStartSeconds <= interjection.windowEndSeconds)
        expect(interjection.windowEndSeconds <= duration)
        expect((1...ScriptRules.maximumTextOptions).contains(interjection.textOptions.count))
        interjection.textOptions.forEach(checkText)
    }
}

private func checkText(_ text: String) {
    expect((1...ScriptRules.maximumTextLength).contains(text.utf16.count))
    expect(!text.allSatisfy(\.isWhitespace))
}

private func checkPlanning(_ script: Script, _ session: GuidedSession, seed: UInt64) {
    let interjections = session.resolveInterjections(seed: seed)
    expect(interjections.count == session.interjections.count)
    for (resolved, interjection) in zip(interjections, session.interjections) {
        expect(
            resolved.plannedSeconds >= interjection.windowStartSeconds
                && resolved.plannedSeconds <= interjection.windowEndSeconds,
            "interjection planned outside its window"
        )
        expect(interjection.textOptions.indices.contains(resolved.optionIndex))
    }
    // Clips of a fixed length at a rate unlike the output's; every third one missing (a silent slot).
    let clipSource = AudioSourceInfo(path: "/clip.mp3", sampleRate: 24_000, frameCount: Frames(12_345), gapless: true)
    func clips(_ count: Int) -> [SourcedClip?] {
        (0..<count).map { $0 % 3 == 2 ? nil : SourcedClip(key: "k\($0)", source: clipSource) }
    }
    for rate: SampleRate in [22_050, 48_000] {
        let bell = AudioSourceInfo(path: nil, sampleRate: 44_100, frameCount: Frames(44_100), gapless: false)
        let timeline = Timeline.plan(
            script: script,
            session: session,
            seed: seed,
            sampleRate: rate,
            channelCount: 1,
            segmentClips: clips(session.segments.count),
            interjections: interjections,
            interjectionClips: clips(interjections.count),
            layers: SessionLayers(bell: .chosen(ChosenSound(name: "bell", source: bell)))
        )
        var cursor = Frames.zero
        for (index, item) in timeline.items.enumerated() {
            expect(
                item.index == index && item.startFrame == cursor && item.frameCount >= .zero,
                "the timeline is not contiguous"
            )
            cursor = item.startFrame + item.frameCount
        }
        expect(timeline.items.last?.kind == .bell, "the timeline does not end with the bell")
        let end = rate.frames(atSeconds: script.durationSeconds)!
        expect(timeline.totalFrames >= end, "the timeline ends before the session does")
    }
}
