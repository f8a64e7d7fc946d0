/// A session laid out as a picture: one horizontal time axis in minutes, the lanes stacked
/// (narration, interjections, cues, ambience), the phases shaded and named, each sound a box
/// labelled with its name or first words, each gap in the narration labelled with its seconds.
/// Shapes in pixels, from the ``SessionOverview``; what draws them (SVG, PNG) only draws.
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
        /// The words in it, already cut to fit; empty for none.
        package var label: String
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

    package var width: Double
    package var height: Double
    /// Back to front: phases, then sounds.
    package var boxes: [Box]
    package var lines: [Line]
    package var texts: [Text]
    /// Where the lanes start, and how wide they are.
    package var plotLeft: Double
    package var plotWidth: Double

    /// Sizes, in pixels.
    package static let laneHeight = 34.0
    package static let left = 100.0
    package static let right = 16.0
    package static let labelSize = 11.0
    /// About how wide a character of the label font is, for cutting labels to their boxes.
    package static let characterWidth = 6.2

    /// Lanes' fills.
    static let fills: [SessionOverview.Lane: String] = [
        .narration: "#4a7fb5", .interjection: "#7a5cb0", .cue: "#c9822b", .ambience: "#5d9a6b",
    ]

    /// The scene of `timeline`, `width` pixels wide.
    package init(_ timeline: Timeline, width: Double = 1_200) {
        let overview = SessionOverview(timeline)
        let total = max(1, Double(timeline.totalFrames.count))
        let lanes = SessionOverview.Lane.allCases
        let top = 64.0
        let lanesBottom = top + Double(lanes.count) * Self.laneHeight
        self.width = width
        plotLeft = Self.left
        plotWidth = width - Self.left - Self.right
        height = lanesBottom + 20
        boxes = []
        lines = []
        texts = [
            Text(x: 8, y: 20, text: printable(timeline.title, limit: 120), size: 15, anchor: .start, color: "#222222")
        ]
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
                    height: lanesBottom - top + 14,
                    fill: index % 2 == 0 ? "#f1f3f6" : "#e4e8ee",
                    entry: nil,
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
            lines.append(Line(x1: tick, y1: 34, x2: tick, y2: lanesBottom, color: "#c8ccd2"))
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
                if entry.kind == "gap" {
                    let seconds = rate.seconds(of: entry.frameCount)
                    let label = seconds >= 10 ? "\(Int(seconds.rounded())) s" : "\((seconds * 10).rounded() / 10) s"
                    if boxWidth >= Double(label.count) * Self.characterWidth + 6 {
                        texts.append(
                            Text(
                                x: (start + end) / 2,
                                y: y + Self.laneHeight / 2 + 2,
                                text: label,
                                size: 10,
                                anchor: .middle,
                                color: "#8a9099"
                            )
                        )
                    }
                    continue
                }
                let words = entry.name ?? entry.text.map { SessionOverview.firstWords(of: $0) } ?? entry.kind
                boxes.append(
                    Box(
                        x: start,
                        y: y,
                        width: boxWidth,
                        height: Self.laneHeight - 10,
                        fill: Self.fills[entry.lane]!,
                        entry: entry,
                        label: Self.fitted(printable(words, limit: 200), width: boxWidth - 6)
                    )
                )
            }
        }
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
