/// A session laid out as a picture: one horizontal time axis in minutes, the lanes stacked
/// (narration, interjections, cues, ambience), the phases shaded and named, each sound a box
/// labelled with its name or first words, each gap in the narration labelled with its seconds;
/// with an ``AudioOverview`` of the rendered file, its waveform and short-term loudness under the
/// lanes. Shapes in pixels, from the ``SessionOverview``; what draws them (SVG, PNG) only draws.
/// The same timeline always gives the same scene.
package struct SessionScene: Sendable, Equatable {
    /// A filled rectangle; a sound's carries what identifies it (`data-…` in SVG).
    package struct Box: Sendable, Equatable {
        package var x: Double
        package var y: Double
        package var width: Double
        package var height: Double
        /// `#rrggbb`.
        package var fill: String
        /// The sound it stands for; `nil` for a phase's shading.
        package var entry: SessionOverview.Entry?
        /// The phase it shades; `nil` for a sound.
        package var phase: PhaseSpan?
        /// The words in it, already cut to fit; empty for none.
        package var label: String
        /// `#rrggbb` of the words.
        package var labelColor: String = "#ffffff"
    }

    /// A line of text, its baseline at `y`.
    package struct Text: Sendable, Equatable {
        package enum Anchor: String, Sendable, Equatable {
            case start, middle, end
        }
        package var x: Double
        package var y: Double
        package var text: String
        package var size: Double
        package var anchor: Anchor
        package var color: String
    }

    /// A straight line.
    package struct Line: Sendable, Equatable {
        package var x1: Double
        package var y1: Double
        package var x2: Double
        package var y2: Double
        package var color: String
    }

    /// A phase's name and frames, for what a shading stands for.
    package struct PhaseSpan: Sendable, Equatable {
        package var name: String
        package var startFrame: Frames
        package var endFrame: Frames
    }

    /// A point, in pixels.
    package struct Point: Sendable, Equatable {
        package var x: Double
        package var y: Double
    }

    /// A line through points (the loudness curve), or the polygon they enclose (the waveform).
    package struct Trace: Sendable, Equatable {
        package var points: [Point]
        package var color: String
        package var isFilled: Bool
    }

    package var width: Double
    package var height: Double
    /// The timeline's rate and length, for turning a place back into time (a preview's player).
    package var sampleRate: SampleRate
    package var totalFrames: Frames
    /// Back to front: phases, then sounds.
    package var boxes: [Box]
    package var lines: [Line]
    package var texts: [Text]
    /// The waveform and the loudness curve, drawn over the grid.
    package var traces: [Trace]
    /// Where the lanes start, and how wide they are.
    package var plotLeft: Double
    package var plotWidth: Double
    /// Where the phases' shading starts and the plot ends, top to bottom: a playhead's span.
    package var plotTop: Double
    package var plotBottom: Double

    /// Sizes, in pixels.
    package static let laneHeight = 34.0
    package static let left = 100.0
    package static let right = 16.0
    package static let labelSize = 11.0
    /// About how wide a character of the label font is, for cutting labels to their boxes.
    package static let characterWidth = 6.2

    /// The waveform's and the loudness curve's heights.
    package static let waveformHeight = 72.0
    package static let loudnessHeight = 64.0
    /// The loudness curve's scale, LUFS, bottom to top, and its grid.
    package static let loudnessRange = -50.0 ... -5.0
    package static let loudnessGrid = [-40.0, -30.0, -20.0, -10.0]

    /// Lanes' fills.
    static let fills: [SessionOverview.Lane: String] = [
        .narration: "#4a7fb5", .interjection: "#7a5cb0", .cue: "#c9822b", .ambience: "#5d9a6b",
    ]

    /// The number of pixel columns an ``AudioOverview`` needs for a scene `width` pixels wide.
    package static func columnCount(width: Double = 1_200) -> Int {
        Int(width - left - right)
    }

    /// The scene of `timeline`, `width` pixels wide; with `audio` (``columnCount(width:)``
    /// columns), the rendered file's waveform and loudness under the lanes; without `showsTitle`
    /// (a page that names the session above it), no title at its top.
    package init(_ timeline: Timeline, width: Double = 1_200, audio: AudioOverview? = nil, showsTitle: Bool = true) {
        let overview = SessionOverview(timeline)
        let total = max(1, Double(timeline.totalFrames.count))
        let lanes = SessionOverview.Lane.allCases
        let top = 64.0
        let lanesBottom = top + Double(lanes.count) * Self.laneHeight
        let audioBottom = lanesBottom + (audio == nil ? 0 : 16 + Self.waveformHeight + 12 + Self.loudnessHeight)
        self.width = width
        sampleRate = timeline.sampleRate
        totalFrames = timeline.totalFrames
        plotLeft = Self.left
        plotWidth = width - Self.left - Self.right
        plotTop = top - 14
        plotBottom = audioBottom
        height = audioBottom + 20
        boxes = []
        lines = []
        traces = []
        texts = []
        if showsTitle {
            texts.append(
                Text(
                    x: 8,
                    y: 20,
                    text: printableLine(timeline.title, limit: 120),
                    size: 15,
                    anchor: .start,
                    color: "#222222"
                )
            )
        }
        let (plotLeft, plotWidth) = (self.plotLeft, self.plotWidth)
        func x(_ frame: Frames) -> Double { plotLeft + Double(frame.count) / total * plotWidth }

        // The phases, shaded in turn, named at the top.
        for (index, phase) in overview.phases.enumerated() {
            let (start, end) = (x(phase.startFrame), x(phase.endFrame))
            boxes.append(
                Box(
                    x: start,
                    y: top - 14,
                    width: end - start,
                    height: audioBottom - top + 14,
                    fill: index % 2 == 0 ? "#f1f3f6" : "#e4e8ee",
                    entry: nil,
                    phase: PhaseSpan(name: phase.name, startFrame: phase.startFrame, endFrame: phase.endFrame),
                    label: ""
                )
            )
            texts.append(
                Text(
                    x: start + 4,
                    y: top - 3,
                    text: Self.fitted(printable(phase.name, limit: 60), width: end - start - 8),
                    size: Self.labelSize,
                    anchor: .start,
                    color: "#555555"
                )
            )
        }
        // The axis: a tick every so many minutes, at most about 12.
        let minutes = total / Double(timeline.sampleRate.hertz) / 60
        let step = [0.25, 0.5, 1, 2, 5, 10, 15, 30, 60].first { minutes / $0 <= 12 } ?? 120
        var minute = 0.0
        while minute <= minutes + 1e-9 {
            let tick = plotLeft + minute / max(minutes, 1e-9) * plotWidth
            lines.append(Line(x1: tick, y1: 34, x2: tick, y2: audioBottom, color: "#c8ccd2"))
            let label = minute == minute.rounded() ? "\(Int(minute))" : "\(minute)"
            texts.append(Text(x: tick, y: 32, text: label, size: 10, anchor: .middle, color: "#666666"))
            minute += step
        }
        texts.append(Text(x: plotLeft - 8, y: 32, text: "min", size: 10, anchor: .end, color: "#666666"))
        // The lanes' names.
        for (row, lane) in lanes.enumerated() {
            let y = top + Double(row) * Self.laneHeight
            texts.append(
                Text(
                    x: 8,
                    y: y + Self.laneHeight / 2 + 4,
                    text: lane.rawValue,
                    size: Self.labelSize,
                    anchor: .start,
                    color: "#333333"
                )
            )
            lines.append(Line(x1: plotLeft, y1: y, x2: width - Self.right, y2: y, color: "#d5d9de"))
        }
        // Every sound a box in its lane; gaps labelled with their seconds.
        let rate = timeline.sampleRate
        for phase in overview.phases {
            for entry in phase.entries {
                let row = Double(lanes.firstIndex(of: entry.lane)!)
                let y = top + row * Self.laneHeight + 5
                let (start, end) = (x(entry.startFrame), x(entry.endFrame))
                let boxWidth = max(1, end - start)
                // A gap is a faint box like the others, its seconds in it when they fit.
                let label: String
                if entry.kind == "gap" {
                    let seconds = rate.seconds(of: entry.frameCount)
                    let text = seconds >= 10 ? "\(Int(seconds.rounded())) s" : "\((seconds * 10).rounded() / 10) s"
                    label = Self.fitted(text, width: boxWidth - 6) == text ? text : ""
                } else {
                    let words = entry.name ?? entry.text.map { SessionOverview.firstWords(of: $0) } ?? entry.kind
                    label = Self.fitted(printable(words, limit: 200), width: boxWidth - 6)
                }
                boxes.append(
                    Box(
                        x: start,
                        y: y,
                        width: boxWidth,
                        height: Self.laneHeight - 10,
                        fill: entry.kind == "gap" ? "#fbfcfd" : Self.fills[entry.lane]!,
                        entry: entry,
                        phase: nil,
                        label: label,
                        labelColor: entry.kind == "gap" ? "#8a9099" : "#ffffff"
                    )
                )
            }
        }
        if let audio { drawAudio(audio, top: lanesBottom + 16) }
    }

    /// The waveform (min/max per column around a centre line) from `top`, then the short-term
    /// loudness curve on its scale with a grid every 10 LU.
    private mutating func drawAudio(_ audio: AudioOverview, top: Double) {
        let columns = audio.columns
        let step = plotWidth / Double(max(1, columns.count))
        func x(_ column: Int) -> Double { plotLeft + (Double(column) + 0.5) * step }
        let middle = top + Self.waveformHeight / 2
        let half = Self.waveformHeight / 2
        texts.append(Text(x: 8, y: middle + 4, text: "audio", size: Self.labelSize, anchor: .start, color: "#333333"))
        lines.append(Line(x1: plotLeft, y1: middle, x2: plotLeft + plotWidth, y2: middle, color: "#b9c0c8"))
        if !columns.isEmpty {
            let clamp = { (value: Float) in Double(min(1, max(-1, value))) }
            let upper = columns.indices.map { Point(x: x($0), y: middle - clamp(columns[$0].maximum) * half) }
            let lower = columns.indices.reversed().map {
                Point(x: x($0), y: middle - clamp(columns[$0].minimum) * half)
            }
            traces.append(Trace(points: upper + lower, color: "#3d5a80", isFilled: true))
        }
        // The loudness: a grid line and its figure every 10 LU, the curve broken where it is silent.
        let loudnessTop = top + Self.waveformHeight + 12
        let range = Self.loudnessRange
        func y(_ loudness: Double) -> Double {
            let clamped = min(range.upperBound, max(range.lowerBound, loudness))
            return loudnessTop + (range.upperBound - clamped) / (range.upperBound - range.lowerBound)
                * Self.loudnessHeight
        }
        texts.append(
            Text(
                x: 8,
                y: loudnessTop + Self.loudnessHeight / 2 + 4,
                text: "loudness",
                size: Self.labelSize,
                anchor: .start,
                color: "#333333"
            )
        )
        for level in Self.loudnessGrid {
            lines.append(Line(x1: plotLeft, y1: y(level), x2: plotLeft + plotWidth, y2: y(level), color: "#d5d9de"))
            texts.append(
                Text(x: plotLeft - 4, y: y(level) + 3, text: "\(Int(level))", size: 9, anchor: .end, color: "#888888")
            )
        }
        var run: [Point] = []
        for (column, entry) in columns.enumerated() {
            if let loudness = entry.shortTermLoudness {
                run.append(Point(x: x(column), y: y(loudness)))
            } else if !run.isEmpty {
                traces.append(Trace(points: run, color: "#c0392b", isFilled: false))
                run = []
            }
        }
        if !run.isEmpty { traces.append(Trace(points: run, color: "#c0392b", isFilled: false)) }
    }

    /// `text` cut to about `width` pixels of the label font, with `…`; empty when not even that fits.
    static func fitted(_ text: String, width: Double) -> String {
        let room = Int(width / characterWidth)
        if text.count <= room { return text }
        return room >= 2 ? String(text.prefix(room - 1)) + "…" : ""
    }
}

extension SessionOverview {
    /// The first few words of `text`: what a box has room to say.
    package static func firstWords(of text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).prefix(8).joined(separator: " ")
    }
}
