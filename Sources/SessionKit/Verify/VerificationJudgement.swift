import Foundation
import SessionTimeline

/// Turns what a ``SignalScan`` found into ``VerificationProblem``s, by the rules of docs/verify.md.
struct Judgement {
    let scan: SignalScan
    let rules: VerificationRules
    let rate: SampleRate
    let decodedFrames: Frames
    /// Where the sources of a timeline read from a file are (``ClipOnset/lead(of:at:in:)``).
    let sources: SourceFolders?

    /// The frames of one measuring window (20 ms).
    private var windowFrames: Int64 {
        max(1, Int64((VerificationRules.windowSeconds * Double(rate.hertz)).rounded()))
    }

    private func frames(seconds: Double) -> Int64 { rate.frames(atSeconds: seconds)?.count ?? 0 }

    private func place(_ frame: Int64) -> String { VerificationText.place(Frames(frame), rate: rate) }

    private func distance(_ frames: Int64) -> String { VerificationText.distance(frames, rate: rate) }

    private func problem(
        _ kind: VerificationProblem.Kind,
        at frame: Int64?,
        item: TimelineItem? = nil,
        offset: Int64? = nil,
        _ message: String
    ) -> VerificationProblem {
        VerificationProblem(
            kind: kind,
            frame: frame.map { Frames($0) },
            seconds: frame.map { rate.seconds(of: Frames($0)) },
            itemIndex: item?.index,
            itemName: item.flatMap(VerificationText.name(of:)),
            clipKey: item?.clip?.key,
            offsetFrames: offset,
            message: message
        )
    }

    /// The file's length against the timeline's `totalFrames`.
    func lengthProblems(timeline: Timeline) -> [VerificationProblem] {
        let expected = timeline.totalFrames.count
        let difference = decodedFrames.count - expected
        guard difference != 0 else { return [] }
        let grouped = VerificationText.grouped
        return [
            problem(
                .length,
                at: nil,
                offset: difference,
                "decodes to \(grouped(decodedFrames.count)) frames, \(distance(difference)) \(difference < 0 ? "fewer" : "more") than the timeline's \(grouped(expected))"
            )
        ]
    }

    /// Samples at full scale (lossless) or at or above 0.999 (lossy), as one line.
    func clippingProblems(timeline: Timeline?) -> [VerificationProblem] {
        guard scan.clippedSamples > 0, let first = scan.firstClippedFrame else { return [] }
        let item = timeline?.items.first {
            $0.startFrame.count <= first && first < ($0.startFrame + $0.frameCount).count
        }
        let inItem = item.map { ", in \(VerificationText.item($0))" } ?? ""
        let count = scan.clippedSamples == 1 ? "1 sample" : "\(VerificationText.grouped(scan.clippedSamples)) samples"
        let level = rules.isLossy ? "at or above 0.999 of full scale" : "at full scale"
        return [
            problem(
                .clipping,
                at: first,
                item: item,
                "clips: \(count) \(level), the first at \(place(first))\(inItem); the peak is \(VerificationText.decibels(scan.peak))"
            )
        ]
    }

    /// Silences that sound and items whose sound is missing or out of place, by frame.
    func placementProblems(timeline: Timeline) -> [VerificationProblem] {
        var found: [VerificationProblem] = []
        for statistics in scan.items where statistics.end <= decodedFrames.count {
            if let problem = itemProblem(statistics, item: timeline.items[statistics.index]) { found.append(problem) }
        }
        for span in scan.spans {
            if let problem = spanProblem(span, timeline: timeline) { found.append(problem) }
        }
        return found.sorted { ($0.frame?.count ?? 0) < ($1.frame?.count ?? 0) }
    }

    /// A sounding item that is silent, or whose sound starts later than its clip's does.
    private func itemProblem(_ statistics: SignalScan.ItemStatistics, item: TimelineItem) -> VerificationProblem? {
        let loudest = statistics.loudestWindowPower > 0 ? 10 * log10(statistics.loudestWindowPower) : -Double.infinity
        guard loudest >= VerificationRules.soundingPowerDecibels, let firstSound = statistics.firstSound else {
            let level = loudest.isFinite ? String(format: "%.1f dBFS", loudest) : "-inf dBFS"
            return problem(
                .missingSound,
                at: statistics.start,
                item: item,
                "\(VerificationText.item(item)) at \(place(statistics.start)) is silent: its loudest 20 ms reach \(level) RMS, below \(Int(VerificationRules.soundingPowerDecibels)) dBFS"
            )
        }
        let lead = firstSound - statistics.start
        let tolerance = frames(seconds: VerificationRules.onsetToleranceSeconds) + rules.guardBeforeSound.count
        guard lead > tolerance else { return nil }
        if let clipLead = ClipOnset.lead(of: item, at: rate, in: sources)?.count {
            let late = lead - clipLead
            guard late > tolerance else { return nil }
            return problem(
                .misplacedSound,
                at: firstSound,
                item: item,
                offset: late,
                "\(VerificationText.item(item)) starts about \(distance(late)) late: its sound begins at \(place(firstSound)), its clip's at \(place(statistics.start + clipLead))"
            )
        }
        guard lead > frames(seconds: VerificationRules.unknownLeadSeconds) else { return nil }
        return problem(
            .misplacedSound,
            at: firstSound,
            item: item,
            "\(VerificationText.item(item)) may start late: its first sound is at \(place(firstSound)), \(distance(lead)) after its start (its source could not be read to tell how late)"
        )
    }

    /// Sound in a silent span: the item after it starting early, the item before it running on,
    /// or sound that belongs to neither.
    private func spanProblem(_ span: SignalScan.SilentSpan, timeline: Timeline) -> VerificationProblem? {
        guard let firstLoud = span.firstLoud, let lastLoud = span.lastLoud else { return nil }
        let peak = VerificationText.decibels(span.peak)
        if let after = span.itemAfter, span.end <= decodedFrames.count, lastLoud >= span.end - windowFrames {
            let item = timeline.items[after]
            let clipLead = ClipOnset.lead(of: item, at: rate, in: sources)?.count
            let early = span.spanEnd - firstLoud + (clipLead ?? 0)
            let about = clipLead == nil ? "at least " : "about "
            return problem(
                .misplacedSound,
                at: firstLoud,
                item: item,
                offset: -early,
                "\(VerificationText.item(item)) starts \(about)\(distance(early)) early: its sound begins at \(place(firstLoud)), in the silence before its start at \(place(span.spanEnd)) (peak \(peak))"
            )
        }
        if let before = span.itemBefore, firstLoud <= span.start + windowFrames {
            let item = timeline.items[before]
            let overrun = lastLoud + 1 - span.spanStart
            return problem(
                .misplacedSound,
                at: span.spanStart,
                item: item,
                offset: overrun,
                "\(VerificationText.item(item)) sounds on \(distance(overrun)) past its end at \(place(span.spanStart)), into the silence after it (peak \(peak))"
            )
        }
        let rule =
            rules.isLossy
            ? "above the -60 dBFS a lossy file's silence may reach" : "where a lossless file's silence is digital zero"
        return problem(
            .notSilent,
            at: firstLoud,
            "the silence from \(place(span.spanStart)) to \(place(span.spanEnd)) sounds from \(place(firstLoud)) to \(place(lastLoud + 1)), peaking at \(peak), \(rule)"
        )
    }
}
