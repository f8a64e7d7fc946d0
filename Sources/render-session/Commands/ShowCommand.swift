import ArgumentParser
import Foundation
internal import SessionAudio
import SessionKit
import SessionTimeline

/// `render-session show`: a session's timeline as a table for a person.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract:
            "Show a session's timeline: a table (phases, items, gaps, loudness, chapters), a picture (-o x.svg|png) or a page (-o x.html).",
        discussion: """
            FILE is a timeline JSON (render --timeline), a rendered audio file (its timeline \
            beside it, out/x.wav.timeline.json, is read), a queue's queue.json (its items in \
            the queue's own time, with their files), or - for standard input. The table \
            goes to standard output, as wide as the terminal (100 columns when it is not one): \
            the title, kind, voice, rate and length; then per phase a heading and its items in \
            time order with start and end (m:ss.mmm), length, lane (narration, interjection, \
            cue, ambience), kind and name, the first words spoken, gain, and how late a clip \
            starts; gaps in the narration are rows of their own. The loudness and the chapters \
            close it.

            With -o OUT.svg or -o OUT.png the session is drawn instead: a time axis in minutes, \
            the lanes, the phases shaded and named, every sound a box labelled with its name or \
            first words, gaps labelled with their seconds; with the rendered file (--audio, or \
            FILE itself when it is one, or the file beside a sidecar timeline) its waveform (the \
            lowest and highest sample per pixel column) and short-term loudness under the lanes. \
            In the SVG each sound's element carries data-index (an overlay's, data-overlay), \
            data-start-frame, data-frame-count, data-kind and data-lane. The same input always \
            gives the same bytes. - writes SVG to standard output; an existing file is replaced \
            unless -n is given.

            With --words, each spoken item's row is followed by a row per word: its start, end \
            and length in the output's time, kind "word" and the word (items without word \
            timing say so).

            With -o OUT.html the preview page is written: the picture with a player for the \
            rendered file, a playhead that follows it, the current phase and item named; a click \
            on a sound plays from its first frame, a click on the waveform or an empty lane goes \
            there; the right arrow goes to the next item, the left arrow to this one's start or, \
            within 1.5 s of it, to the one before; Tab reaches the sounds. It fits a phone's width \
            and has a dark scheme. The page refers to the audio by its path relative to the page \
            (--embed-audio puts it inside, up to 256 MiB) and makes no network request: it works \
            offline from a file:// URL.

            Exit statuses: 0 done; 64 a usage error; 65 the file cannot be read or is not a \
            timeline or queue, or the audio is not the timeline's.

            Examples:
              render-session show Fixtures/positions/five-seconds.timeline.json
              render-session show \\
                Fixtures/positions/five-seconds.timeline.json -o out/five.svg
              render-session show out/session.wav -o out/session.html
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @Argument(
        help: ArgumentHelp(
            "The timeline JSON, or an audio file with its timeline beside it; - for standard input.",
            valueName: "file"
        )
    )
    var file: String

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The table's width in columns, 60 to 1000. (default: the terminal's, else 100)",
            valueName: "n"
        ),
        transform: { try Parse.number($0, as: Int.self, in: 60...1_000, what: "a width in columns") }
    )
    var width: Int?

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "Draw the session into this file (.svg, .png) or write its preview page (.html) instead; - for SVG on standard output.",
            valueName: "out.svg|out.png|out.html"
        )
    )
    var output: String?

    @Option(
        help: ArgumentHelp(
            "The rendered file, for the waveform, the loudness curve and the page's player. (default: FILE when it is audio, or the file its sidecar timeline sits beside)",
            valueName: "file"
        )
    )
    var audio: String?

    @Flag(help: "Put the audio inside the preview page (.html) rather than referring to it.")
    var embedAudio = false

    @Flag(help: "List each spoken item's words under it in the table, with their times.")
    var words = false

    @OptionGroup var overwrite: OverwriteOption

    /// What `-o` names: a picture's format, or the page.
    enum Drawing: Equatable {
        case picture(SessionPicture.Format)
        case page
    }

    /// What `-o` writes, by its extension; `-` is SVG.
    static func drawing(_ output: String) -> Drawing? {
        if output == "-" { return .picture(.svg) }
        switch (output as NSString).pathExtension.lowercased() {
        case "svg": return .picture(.svg)
        case "png": return .picture(.png)
        case "html", "htm": return .page
        default: return nil
        }
    }

    func validate() throws {
        if let output, Self.drawing(output) == nil {
            throw ValidationError(
                "-o/--output: \(printable(output, limit: 100)) is not .svg, .png or .html; show draws those"
            )
        }
        if embedAudio, output.flatMap(Self.drawing) != .page {
            throw ValidationError("--embed-audio: only a preview page (-o OUT.html) holds audio")
        }
        if words, output != nil {
            throw ValidationError("--words: only the table lists words; a picture or page (-o) does not")
        }
        if audio != nil, output == nil {
            throw ValidationError("--audio: only a picture or a page (-o) shows the audio; the table does not")
        }
    }

    func run() async throws {
        let (path, width) = (file, width ?? FileDescriptor.standardOutput.terminalColumns.map { max(60, $0) } ?? 100)
        let (output, replace, embed, named, listsWords) = (output, !overwrite.noOverwrite, embedAudio, audio, words)
        try await runCommand { _ in
            if let output, let drawing = Self.drawing(output) {
                let kind: SessionDrawing.Kind =
                    switch drawing {
                    case .picture(let format): .picture(format)
                    case .page: .page(embedsAudio: embed)
                    }
                try SessionDrawing.draw(
                    path,
                    audio: named,
                    as: kind,
                    to: OutputDestination(argument: output),
                    replaceExisting: replace
                )
                if output != "-" { Console.printLines([output]) }
                return
            }
            let text =
                switch try SessionDrawing.document(at: path) {
                case .timeline(let timeline): TimelineTable(timeline, width: width, listsWords: listsWords).text
                case .queue(let queue): TimelineTable.queue(queue, width: width)
                }
            Console.printText(text)
        }
    }
}

/// The columns of `show`'s tables, for a width: one space apart, the text taking what is left.
struct TableLayout {
    let width: Int
    /// Whether there is a column for how late a clip starts (only when one does).
    let hasLate: Bool

    /// The columns' widths; columns are one space apart, and the text takes what is left.
    static let columns = (index: 4, time: 9, length: 9, lane: 12, kind: 14, gain: 8, late: 12)

    /// The text column's width: what the others leave.
    var textWidth: Int {
        let c = Self.columns
        let others = c.index + 2 * c.time + c.length + c.lane + c.kind + c.gain + 7 + (hasLate ? c.late + 1 : 0)
        return max(10, width - others)
    }

    func row(
        _ index: String,
        _ start: String,
        _ end: String,
        _ length: String,
        _ lane: String,
        _ kind: String,
        _ text: String,
        _ gain: String,
        _ late: String
    ) -> String {
        let c = Self.columns
        var cells = [
            index.leftPadded(to: c.index), start.leftPadded(to: c.time), end.leftPadded(to: c.time),
            length.leftPadded(to: c.length), lane.fitted(to: c.lane), kind.fitted(to: c.kind),
            text.rightPadded(to: textWidth), gain.leftPadded(to: c.gain),
        ]
        if hasLate { cells.append(late) }
        return cells.joined(separator: " ")
    }

    /// `parts` joined by commas in lines that fit the width, the first starting with `first`,
    /// the others indented by two spaces.
    func wrapped(_ parts: [String], first: String = "  ") -> [String] {
        var lines = [first]
        for part in parts {
            let last = lines[lines.count - 1]
            let fresh = last == first || last == "  " || last.isEmpty
            if !fresh && last.count + 2 + part.count > width {
                lines[lines.count - 1] += ","
                lines.append("  " + part)
            } else {
                lines[lines.count - 1] += (fresh ? "" : ", ") + part
            }
        }
        return lines
    }

}

/// A timeline laid out as `show` prints it.
struct TimelineTable {
    let timeline: Timeline
    let width: Int
    /// Whether each spoken item's words follow its row (`--words`).
    let listsWords: Bool
    private let layout: TableLayout

    init(_ timeline: Timeline, width: Int, listsWords: Bool = false) {
        self.timeline = timeline
        self.width = width
        self.listsWords = listsWords
        let late = timeline.items.contains { ($0.clip?.lateByFrames ?? .zero) > .zero }
        layout = TableLayout(width: width, hasLate: late)
    }

    var text: String {
        var lines = header
        lines.append("")
        lines.append(layout.row("#", "start", "end", "length", "lane", "kind / name", "text", "gain", "late"))
        for phase in SessionOverview(timeline).phases {
            lines.append(heading(phase))
            for entry in phase.entries {
                lines.append(row(entry))
                if listsWords, !entry.isOverlay { lines += wordRows(of: entry) }
            }
        }
        lines.append("")
        lines += footer
        return lines.map { String($0.prefix(width)).trimmingTrailingSpaces }.joined(separator: "\n") + "\n"
    }

    private var header: [String] {
        let rate = timeline.sampleRate
        let channels =
            timeline.channelCount.count == 1
            ? "mono" : timeline.channelCount.count == 2 ? "stereo" : "\(timeline.channelCount.count) channels"
        var lines = [printableLine(timeline.title, limit: width)]
        var facts = [
            timeline.sessionKind ?? "guided",
            "voice \(printable(timeline.voice ?? "unknown", limit: 60))",
            "\(rate.hertz) Hz \(channels)",
            "\(Self.time(timeline.totalFrames, rate)) (\(timeline.totalFrames.count.formatted()) frames)",
        ]
        if timeline.leadInFrames > .zero { facts.append("lead-in \(Self.time(timeline.leadInFrames, rate))") }
        lines += layout.wrapped(facts, first: "")
        return lines
    }

    private func heading(_ phase: SessionOverview.Phase) -> String {
        let rate = timeline.sampleRate
        var line =
            "\(printable(phase.name.isEmpty ? "(no phases)" : phase.name, limit: 40))  "
            + "\(Self.time(phase.startFrame, rate)) – \(Self.time(phase.endFrame, rate))"
            + " (\(Self.seconds(phase.endFrame - phase.startFrame, rate)))"
        if let speech = phase.speechLoudness { line += ", speech \(Self.decimal(speech)) LUFS" }
        return "" + line
    }

    private func row(_ entry: SessionOverview.Entry) -> String {
        let rate = timeline.sampleRate
        let label = entry.isOverlay ? "o\(entry.index)" : "\(entry.index)"
        // The kind where the lane does not say it, then the sound's name.
        let kinds = [entry.lane.rawValue, "segment", entry.name].contains(entry.kind) ? [] : [entry.kind]
        let kind = (kinds + [entry.name.map { printable($0, limit: 40) }].compactMap { $0 }).joined(separator: " ")
        let text = entry.text.map { Self.firstWords(printableLine($0, limit: 400), width: layout.textWidth) } ?? ""
        let gain = entry.gain.map { "\(Self.signed(20 * log10(max($0, 1e-10)))) dB" } ?? ""
        let late = entry.lateByFrames.map { "late \(Self.seconds($0, rate))" } ?? ""
        return layout.row(
            label,
            Self.time(entry.startFrame, rate),
            Self.time(entry.endFrame, rate),
            Self.seconds(entry.frameCount, rate),
            entry.lane.rawValue,
            kind,
            text,
            gain,
            late
        )
    }

    /// A row per word of the item `entry` shows, in the output's time: kind `word`, its text;
    /// one row saying so for a spoken item without words.
    private func wordRows(of entry: SessionOverview.Entry) -> [String] {
        let rate = timeline.sampleRate
        guard let clip = timeline.items.first(where: { $0.index == entry.index })?.clip else { return [] }
        guard let words = clip.words else {
            return [layout.row("", "", "", "", "", "word", "(no word timing)", "", "")]
        }
        return words.map { word in
            layout.row(
                "",
                Self.time(word.startFrame, rate),
                Self.time(word.startFrame + word.frameCount, rate),
                Self.seconds(word.frameCount, rate),
                "",
                "word",
                printable(word.text, limit: layout.textWidth),
                "",
                ""
            )
        }
    }

    private var footer: [String] {
        var lines: [String] = []
        if let loudness = timeline.loudness {
            var target = [
                "target \(Self.decimal(loudness.target)) LUFS on the \(loudness.anchor.rawValue)",
                "ceiling \(Self.decimal(loudness.ceiling)) dBTP",
            ]
            if let gain = loudness.programGain { target.append("program gain \(Self.signed(gain)) dB") }
            lines += layout.wrapped(target, first: "Loudness: ")
            var measured: [String] = []
            if let speech = loudness.speech { measured.append("speech \(Self.decimal(speech)) LUFS") }
            if let program = loudness.program { measured.append("program \(Self.decimal(program)) LUFS") }
            if let range = loudness.range { measured.append("LRA \(Self.decimal(range)) LU") }
            if let loudest = loudness.maxShortTerm { measured.append("max short-term \(Self.decimal(loudest)) LUFS") }
            if let peak = loudness.truePeak { measured.append("true peak \(Self.decimal(peak)) dBTP") }
            if let leveler = loudness.leveler { measured.append("leveler up to \(Self.activity(leveler))") }
            if let limiter = loudness.limiter { measured.append("limiter up to \(Self.activity(limiter))") }
            lines += measured.isEmpty ? ["  not rendered yet"] : layout.wrapped(measured)
        } else {
            lines.append("Loudness: off")
        }
        let chapters = timeline.chapters.enumerated().map { index, chapter in
            "\(index + 1) \(printable(chapter.title, limit: 40)) \(Self.time(chapter.startFrame, timeline.sampleRate))"
        }
        lines += layout.wrapped(chapters.isEmpty ? ["none"] : chapters, first: "Chapters: ")
        return lines
    }

    /// A queue's table: its items in the queue's own time, a heading where the phase changes.
    static func queue(_ queue: QueueOverview, width: Int) -> String {
        let table = TableLayout(width: width, hasLate: false)
        let length = queue.items.last.map { $0.startSeconds + $0.durationSeconds } ?? 0
        var lines = [printableLine(queue.title, limit: width)]
        lines += table.wrapped(
            ["queue", "\(queue.items.count) items", "\(queue.overlayCount) overlays", clock(seconds: length)],
            first: ""
        )
        lines.append("")
        lines.append(table.row("#", "start", "end", "length", "kind", "file", "text", "gain", ""))
        var phase: String?
        for item in queue.items {
            if item.phase != phase {
                phase = item.phase
                lines.append(printable(item.phase, limit: 40))
            }
            let end = item.startSeconds + item.durationSeconds
            lines.append(
                table.row(
                    "\(item.index)",
                    clock(seconds: item.startSeconds),
                    clock(seconds: end),
                    "\(clock(seconds: item.durationSeconds, minutes: false)) s",
                    item.kind,
                    printable(item.file, limit: 60),
                    item.text.map { firstWords(printableLine($0, limit: 400), width: table.textWidth) } ?? "",
                    "\(signed(20 * log10(max(item.gain, 1e-10)))) dB",
                    ""
                )
            )
        }
        return lines.map { String($0.prefix(width)).trimmingTrailingSpaces }.joined(separator: "\n") + "\n"
    }

    /// `m:ss.mmm` of a time in seconds, to the nearest millisecond; without `minutes`, `s.mmm`.
    static func clock(seconds: Double, minutes: Bool = true) -> String {
        let milliseconds = Int64((seconds * 1_000).rounded())
        if !minutes { return "\(milliseconds / 1_000).\(String(milliseconds % 1_000 + 1_000).dropFirst())" }
        return FrameClock.clock(milliseconds: milliseconds)
    }

    /// `m:ss.mmm` (`h:mm:ss.mmm` from an hour), to the nearest millisecond.
    static func time(_ frames: Frames, _ rate: SampleRate) -> String {
        FrameClock.time(frames, rate)
    }

    /// A length in seconds to the millisecond: `16.857 s`.
    static func seconds(_ frames: Frames, _ rate: SampleRate) -> String {
        let hertz = Int64(rate.hertz)
        let milliseconds = (frames.count * 1_000 + hertz / 2) / hertz
        return "\(milliseconds / 1_000).\(String(milliseconds % 1_000 + 1_000).dropFirst()) s"
    }

    static func decimal(_ value: Double) -> String {
        String(format: "%.1f", value)
    }

    static func signed(_ value: Double) -> String {
        String(format: "%+.1f", value)
    }

    static func activity(_ activity: LimiterActivity) -> String {
        "\(decimal(activity.maxReductionDecibels)) dB (\(decimal(activity.secondsOverOneDecibel)) s over 1 dB)"
    }

    /// As many of `text`'s first words as fit in `width` columns, with `…` when some are left out.
    static func firstWords(_ text: String, width: Int) -> String {
        let words = text.split(whereSeparator: \.isWhitespace)
        var shown = ""
        for word in words {
            let next = shown.isEmpty ? String(word) : shown + " " + word
            if next.count > width - 1 {
                if shown.isEmpty { return String(word.prefix(width - 1)) + "…" }
                return shown + "…"
            }
            shown = next
        }
        return shown
    }
}

extension String {
    /// Exactly `width` characters: cut with `…`, or padded with spaces.
    fileprivate func fitted(to width: Int) -> String {
        count > width ? prefix(width - 1) + "…" : rightPadded(to: width)
    }

    fileprivate func rightPadded(to width: Int) -> String {
        self + String(repeating: " ", count: max(0, width - count))
    }

    fileprivate var trimmingTrailingSpaces: String {
        var end = endIndex
        while end > startIndex, self[index(before: end)] == " " { end = index(before: end) }
        return String(self[..<end])
    }
}
