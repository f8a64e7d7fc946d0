/// Makes a ``SessionQueue`` from a timeline: which file each item plays, and each silence's length.
///
/// 8 kHz cannot hold every length of a 22,050 Hz session, and clips play at their own rates, so the
/// queue's time is counted exactly, in ticks of the least common multiple of every rate involved.
/// Each silence is as long as takes the queue to the 8 kHz frame nearest the timeline's end of
/// that silence (``QueueClock``): rounding never adds up, and the queue's n-th item ends within
/// half an 8 kHz frame of where the timeline's does (plus half a timeline frame per clip in a row
/// whose rate differs from the timeline's, which the next silence takes back).
package enum QueuePlanner {
    /// How the clips and sounds reach the queue.
    package enum Delivery: Sendable, Equatable {
        /// Source files as they are (cached MP3 clips are the cache's bytes); a source with no file
        /// (the synthesized bell) is rendered as a WAV file.
        case originals
        /// Every clip and sound rendered at the timeline's rate with its gain, in files with this
        /// extension (`wav`, `mp3`, …).
        case rendered(fileExtension: String)
    }

    /// The queue that plays `timeline`'s narration lane, its overlays listed to be scheduled.
    /// - Throws: ``ScriptError/Code-swift.enum/unmappablePlayback`` when the clips' rates cannot
    ///   be counted together (large co-prime rates no real file has).
    package static func plan(_ timeline: Timeline, delivery: Delivery) throws(ScriptError) -> SessionQueue {
        let silenceRate = SessionQueue.silenceSampleRate
        let rates = [timeline.sampleRate, silenceRate] + timeline.items.compactMap(\.source?.sampleRate)
        guard var clock = QueueClock(rates: rates) else {
            let hertz = Set(rates.map(\.hertz)).sorted().map(String.init).joined(separator: ", ")
            throw ScriptError(
                .unmappablePlayback,
                ScriptProblem(
                    location: "items",
                    rule: "the sample rates \(hertz) Hz cannot be counted together exactly"
                )
            )
        }
        let phases = timeline.phases
        let digits = max(3, String(timeline.items.count).count)
        var items: [QueueItem] = []
        for item in timeline.items {
            let end = item.startFrame + item.frameCount
            let phase = phases.last { $0.startFrame <= item.startFrame }?.name ?? phases.first?.name ?? "session"
            guard let source = item.source else {
                let frames = clock.frames(toReach: end, of: timeline.sampleRate, at: silenceRate)
                // A silence shorter than half an 8 kHz frame is left out: the queue is already there.
                guard frames > .zero else { continue }
                clock.advance(by: frames, at: silenceRate)
                items.append(
                    QueueItem(
                        index: items.count,
                        timelineIndex: item.index,
                        file: "silence-\(silenceRate.hertz)hz-\(frames.count).wav",
                        kind: .silence,
                        sourceFrames: frames,
                        sourceSampleRate: silenceRate,
                        phase: phase,
                        timelineEndFrame: end,
                        origin: .silence
                    )
                )
                continue
            }
            let number =
                String(repeating: "0", count: max(0, digits - String(items.count + 1).count))
                + String(items.count + 1)
            let label = fileLabel(item)
            var queued = QueueItem(
                index: items.count,
                timelineIndex: item.index,
                file: "",
                kind: item.kind,
                sourceFrames: item.frameCount,
                sourceSampleRate: timeline.sampleRate,
                phase: phase,
                text: item.clip?.text,
                name: item.name,
                gain: 1,
                timelineEndFrame: end,
                origin: .rendered
            )
            switch (delivery, source.path) {
            case (.originals, let path?):
                queued.file = "\(number)-\(label)\(fileExtension(of: path))"
                (queued.sourceFrames, queued.sourceSampleRate) = (source.frameCount, source.sampleRate)
                queued.gain = staticGain(of: item, loudness: timeline.loudness)
                queued.origin = .copied(path: path, inside: source.libraryFolder)
            case (.originals, nil):
                // Rendered at unit gain (QueueWriter), so that the file is the sound and the gain is its item's.
                queued.file = "\(number)-\(label).wav"
                queued.gain = item.gain
            case (.rendered(let suffix), _):
                queued.file = "\(number)-\(label).\(suffix)"
            }
            queued.words = queued.ownTime(
                of: item.clip?.words,
                itemStart: item.startFrame,
                outputRate: timeline.sampleRate
            )
            queued.sentences = queued.ownTime(
                of: item.clip?.sentences,
                itemStart: item.startFrame,
                outputRate: timeline.sampleRate
            )
            clock.advance(by: queued.sourceFrames, at: queued.sourceSampleRate)
            items.append(queued)
        }
        var queue = SessionQueue(
            scriptId: timeline.scriptId,
            category: timeline.category,
            title: timeline.title,
            seed: timeline.seed,
            sampleRate: timeline.sampleRate,
            totalFrames: timeline.totalFrames,
            items: items,
            overlays: overlays(of: timeline)
        )
        queue.delivery = delivery
        queue.loudness = timeline.loudness.map {
            QueueLoudness(target: $0.target, anchor: $0.anchor, inFiles: delivery != .originals)
        }
        return queue
    }

    /// The gain at which `item`'s file, played as it is, sounds as loud as the render plays it:
    /// the item's gain, and for a speech clip less two things the render does to speech that a
    /// file played at a gain does not need made up for: what the speech leveler takes off the clip
    /// when the render levels speech (docs/sound.md: its `leveledLoudness` against its `loudness`,
    /// as measured), and the speech anchor's gain (``TimelineLoudness/speechGain``), which makes up
    /// for what the true-peak limiter takes off the speech (0.6 dB in the 10-minute fixture with a
    /// bed and a gong). The bed, gongs and bell keep it: the limiter leaves them as they are.
    /// The leveler's and the limiter's moment-to-moment work is not a gain: a clip at this gain
    /// has the render's integrated loudness, with its own dynamics.
    static func staticGain(of item: TimelineItem, loudness: TimelineLoudness?) -> Double {
        guard item.clip != nil, let loudness else { return item.gain }
        var gain = item.gain
        if loudness.anchor == .speech, let makeup = loudness.speechGain {
            gain *= Loudness.linear(decibels: -makeup)
        }
        if let source = item.source, let raw = source.levelingReference(on: loudness.speechLeveling),
            let leveled = source.leveledLoudness
        {
            gain *= Loudness.linear(decibels: leveled - raw)
        }
        return gain
    }

    /// The overlays, each distinct sound in one file named after it. Overlays are the sound as it
    /// is, whatever the delivery: the app plays them at their ``TimelineOverlay/gain`` and loops,
    /// fades and ducks the bed itself, so one file serves every overlay of a sound.
    private static func overlays(of timeline: Timeline) -> [QueueOverlay] {
        var files: [String: String] = [:]
        return timeline.overlays.map { overlay in
            let path = overlay.source.path
            let key = path ?? "builtin \(overlay.name) \(overlay.source.sampleRate.hertz)"
            let suffix = path.map(fileExtension(of:)) ?? ".wav"
            if files[key] == nil {
                let name = "\(overlay.kind.rawValue)-\(slug(overlay.name))"
                let taken = Set(files.values)
                var (file, copy) = (name + suffix, 2)
                while taken.contains(file) {
                    (file, copy) = ("\(name)-\(copy)\(suffix)", copy + 1)
                }
                files[key] = file
            }
            return QueueOverlay(
                overlay: overlay,
                file: files[key] ?? "",
                origin: path.map { .copied(path: $0, inside: overlay.source.libraryFolder) } ?? .rendered
            )
        }
    }

    /// The part of a clip's or sound's file name after its number: the segment's id, the cue's
    /// name, `interjection` or `bell`.
    private static func fileLabel(_ item: TimelineItem) -> String {
        switch item.kind {
        case .bell: "bell"
        case .interjection: "interjection"
        case .segment, .silence: slug(item.clip?.segmentId ?? item.name ?? item.clip?.phase ?? item.kind.rawValue)
        }
    }

    /// `text` as a file name part: lower-case ASCII letters and digits, runs of anything else one `-`.
    static func slug(_ text: String) -> String {
        var slug = ""
        for character in text.lowercased().unicodeScalars {
            if ("a"..."z").contains(character) || ("0"..."9").contains(character) {
                slug.unicodeScalars.append(character)
            } else if !slug.isEmpty, !slug.hasSuffix("-") {
                slug += "-"
            }
        }
        while slug.hasSuffix("-") { slug.removeLast() }
        return slug.isEmpty ? "sound" : String(slug.prefix(40))
    }

    /// `.mp3` for `cache/3f9a….mp3`; empty when the name has none.
    private static func fileExtension(of path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[dot...]).lowercased()
    }
}

/// A queue's elapsed time, exactly: a count of ticks of the least common multiple of the rates
/// its items play at, so that a frame at any of them is a whole number of ticks.
package struct QueueClock: Sendable, Equatable {
    /// Ticks per second.
    package let ticksPerSecond: Int64
    /// The time so far, in ticks.
    package private(set) var elapsedTicks: Int64 = 0

    /// The longest session a clock counts, in seconds at any rate: ten days.
    static let maximumSeconds: Int64 = 864_000

    /// A clock at 0 for items at `rates`; `nil` when their common tick is too fine to count
    /// ``maximumSeconds`` in 64 bits (rates no real file has: large co-prime ones).
    package init?(rates: [SampleRate]) {
        guard let ticks = SampleRate.commonTicksPerSecond(rates, limit: Int64.max / Self.maximumSeconds) else {
            return nil
        }
        ticksPerSecond = ticks
    }

    /// The ticks of `frames` frames at `rate`.
    package func ticks(of frames: Frames, at rate: SampleRate) -> Int64 {
        let (ticks, overflow) = frames.count.multipliedReportingOverflow(by: ticksPerSecond / Int64(rate.hertz))
        precondition(!overflow, "\(frames) frames at \(rate) are too long to count in ticks")
        return ticks
    }

    /// The time so far in seconds, for JSON and messages.
    package var seconds: Double { Double(elapsedTicks) / Double(ticksPerSecond) }

    /// Moves the clock on by `frames` frames at `rate`.
    package mutating func advance(by frames: Frames, at rate: SampleRate) {
        elapsedTicks += ticks(of: frames, at: rate)
    }

    /// How many frames at `rate` take the clock nearest to frame `target` of a timeline at
    /// `timelineRate` (halves rounded up); zero if the clock is already there or past it.
    package func frames(toReach target: Frames, of timelineRate: SampleRate, at rate: SampleRate) -> Frames {
        let remaining = ticks(of: target, at: timelineRate) - elapsedTicks
        guard remaining > 0 else { return .zero }
        let perFrame = ticksPerSecond / Int64(rate.hertz)
        return Frames((remaining + perFrame / 2) / perFrame)
    }

}
