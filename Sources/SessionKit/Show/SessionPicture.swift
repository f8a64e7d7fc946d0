package import Foundation
package import SessionAudio
package import SessionTimeline

/// The picture of a session (``SessionScene``) as SVG: deterministic (the same timeline gives the
/// same bytes), every sound's element carrying `data-index` (an item's; `data-overlay` an
/// overlay's), `data-start-frame`, `data-frame-count`, `data-kind` and `data-lane`, so that tests,
/// a preview page and app developers can find it.
package enum SessionPicture {
    /// What a picture is written as: chosen by the output's name.
    package enum Format: String, Sendable {
        case svg, png
    }

    /// The SVG of `timeline`'s scene.
    package static func svg(_ timeline: Timeline) -> String {
        svg(SessionScene(timeline))
    }

    /// Writes `scene` as `format` to `destination` (a path, or standard output), the file
    /// appearing only when whole; an existing file is replaced only with `replaceExisting`.
    package static func write(
        _ scene: SessionScene,
        as format: Format,
        to destination: OutputDestination,
        replaceExisting: Bool
    ) throws(SessionError) {
        let bytes: Data
        switch format {
        case .svg: bytes = Data(svg(scene).utf8)
        case .png:
            do {
                bytes = try png(scene)
            } catch {
                throw SessionError(.cannotWrite, wrapping: error)
            }
        }
        try write(bytes, to: destination, replaceExisting: replaceExisting)
    }

    /// Writes `bytes` to `destination`, whole or not at all; `inOwnedFolder` (a batch's output
    /// folder) refuses a link, FIFO or device there by name rather than write through it.
    package static func write(
        _ bytes: Data,
        to destination: OutputDestination,
        replaceExisting: Bool,
        inOwnedFolder: Bool = false
    ) throws(SessionError) {
        let target = try OutputTarget.resolve(
            destination,
            replaceExisting: replaceExisting,
            inOwnedFolder: inOwnedFolder
        )
        let file = try SessionRenderer.write(bytes, to: target)
        do {
            try file?.commit()
        } catch {
            file?.discard()
            throw SessionError(.cannotWrite, wrapping: error)
        }
    }

    /// `scene` as SVG; with `playhead`, for a preview page: a line at the start that the page
    /// moves (`id="playhead"`), the plot's top and bottom (`data-plot-top`, `data-plot-bottom`),
    /// and every sound but a gap reachable from the keyboard (`tabindex`, `role="button"`, an
    /// `aria-label` naming it and its start).
    package static func svg(_ scene: SessionScene, playhead: Bool = false) -> String {
        var out = playhead ? "" : "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        let plot =
            playhead
            ? " data-plot-top=\"\(number(scene.plotTop))\" data-plot-bottom=\"\(number(scene.plotBottom))\"" : ""
        out += """
            <svg xmlns="http://www.w3.org/2000/svg" id="session" width="\(number(scene.width))" \
            height="\(number(scene.height))" viewBox="0 0 \(number(scene.width)) \(number(scene.height))" \
            data-sample-rate="\(scene.sampleRate.hertz)" data-total-frames="\(scene.totalFrames.count)" \
            data-plot-left="\(number(scene.plotLeft))" data-plot-width="\(number(scene.plotWidth))"\(plot) \
            font-family="DejaVu Sans, Helvetica, Arial, sans-serif">
            <rect width="100%" height="100%" fill="#ffffff"/>

            """
        out += "<g class=\"phases\">\n"
        for box in scene.boxes {
            guard let phase = box.phase else { continue }
            out +=
                "<rect class=\"phase\" data-phase=\"\(escaped(printable(phase.name, limit: 60)))\" "
                + "data-start-frame=\"\(phase.startFrame.count)\" data-end-frame=\"\(phase.endFrame.count)\" "
                + "x=\"\(number(box.x))\" y=\"\(number(box.y))\" width=\"\(number(box.width))\" "
                + "height=\"\(number(box.height))\" fill=\"\(box.fill)\"/>\n"
        }
        out += "</g>\n<g class=\"grid\">\n"
        for line in scene.lines {
            out +=
                "<line x1=\"\(number(line.x1))\" y1=\"\(number(line.y1))\" x2=\"\(number(line.x2))\" "
                + "y2=\"\(number(line.y2))\" stroke=\"\(line.color)\" stroke-width=\"1\"/>\n"
        }
        out += "</g>\n<g class=\"items\"\(playhead ? " cursor=\"pointer\"" : "")>\n"
        for box in scene.boxes {
            guard let entry = box.entry else { continue }
            let identity = entry.isOverlay ? "data-overlay=\"\(entry.index)\"" : "data-index=\"\(entry.index)\""
            let title = entry.text ?? entry.name ?? entry.kind
            var focus = ""
            if playhead && entry.kind != "gap" {
                let name: String = (entry.isOverlay ? "overlay " : "item ") + "\(entry.index), \(entry.kind)"
                let start: String = FrameClock.time(entry.startFrame, scene.sampleRate)
                let label: String = escaped("\(name) at \(start): " + printableLine(title, limit: 300))
                focus = " tabindex=\"0\" role=\"button\" aria-label=\"\(label)\""
            }
            out +=
                "<g class=\"item\" \(identity) data-start-frame=\"\(entry.startFrame.count)\" "
                + "data-frame-count=\"\(entry.frameCount.count)\" data-kind=\"\(escaped(entry.kind))\" "
                + "data-lane=\"\(entry.lane.rawValue)\"\(focus)>"
                + "<title>\(escaped(printableLines(title, limit: 300)))</title>"
                + "<rect x=\"\(number(box.x))\" y=\"\(number(box.y))\" width=\"\(number(box.width))\" "
                + "height=\"\(number(box.height))\" rx=\"2\" fill=\"\(box.fill)\"/>"
            if !box.label.isEmpty {
                out +=
                    "<text x=\"\(number(box.x + 3))\" y=\"\(number(box.y + box.height / 2 + 4))\" "
                    + "font-size=\"\(number(SessionScene.labelSize))\" fill=\"\(box.labelColor)\">\(escaped(box.label))</text>"
            }
            out += "</g>\n"
        }
        out += "</g>\n"
        if !scene.traces.isEmpty {
            out += "<g class=\"audio\">\n"
            for trace in scene.traces {
                let points = trace.points.map { "\(number($0.x)),\(number($0.y))" }.joined(separator: " ")
                out +=
                    trace.isFilled
                    ? "<polygon class=\"waveform\" points=\"\(points)\" fill=\"\(trace.color)\"/>\n"
                    : "<polyline class=\"loudness\" points=\"\(points)\" fill=\"none\" stroke=\"\(trace.color)\" "
                        + "stroke-width=\"1.5\"/>\n"
            }
            out += "</g>\n"
        }
        out += "<g class=\"labels\">\n"
        for text in scene.texts {
            out +=
                "<text x=\"\(number(text.x))\" y=\"\(number(text.y))\" font-size=\"\(number(text.size))\" "
                + "text-anchor=\"\(text.anchor.rawValue)\" fill=\"\(text.color)\">\(escaped(text.text))</text>\n"
        }
        out += "</g>\n"
        if playhead {
            out +=
                "<line id=\"playhead\" x1=\"\(number(scene.plotLeft))\" y1=\"\(number(scene.plotTop))\" "
                + "x2=\"\(number(scene.plotLeft))\" y2=\"\(number(scene.plotBottom))\" stroke=\"#d0021b\" "
                + "stroke-width=\"2\" pointer-events=\"none\"/>\n"
        }
        out += "</svg>\n"
        return out
    }

    /// `scene` drawn in pixels (``RasterCanvas``, cairo) as PNG: the same shapes in the same order
    /// as the SVG, the labels in DejaVu Sans.
    package static func png(_ scene: SessionScene) throws(AudioError) -> Data {
        let canvas = try RasterCanvas(width: Int(scene.width.rounded(.up)), height: Int(scene.height.rounded(.up)))
        for box in scene.boxes where box.phase != nil {
            canvas.fillRectangle(x: box.x, y: box.y, width: box.width, height: box.height, color: box.fill)
        }
        for line in scene.lines {
            // Half a pixel in, so a one-pixel line covers one row or column of pixels, not two.
            canvas.strokeLine(
                [
                    (line.x1.rounded(.down) + 0.5, line.y1.rounded(.down) + 0.5),
                    (line.x2.rounded(.down) + 0.5, line.y2.rounded(.down) + 0.5),
                ],
                color: line.color
            )
        }
        for box in scene.boxes where box.entry != nil {
            canvas.fillRectangle(x: box.x, y: box.y, width: box.width, height: box.height, color: box.fill)
            canvas.drawText(
                box.label,
                x: box.x + 3,
                y: box.y + box.height / 2 + 4,
                size: SessionScene.labelSize,
                anchor: 0,
                color: box.labelColor
            )
        }
        for trace in scene.traces {
            let points = trace.points.map { (x: $0.x, y: $0.y) }
            if trace.isFilled {
                canvas.fillPolygon(points, color: trace.color)
            } else {
                canvas.strokeLine(points, color: trace.color, lineWidth: 1.5)
            }
        }
        for text in scene.texts {
            let anchor =
                switch text.anchor {
                case .start: 0.0
                case .middle: 0.5
                case .end: 1.0
                }
            canvas.drawText(text.text, x: text.x, y: text.y, size: text.size, anchor: anchor, color: text.color)
        }
        return try canvas.png()
    }

    /// A coordinate to two decimals, without trailing zeros: the same everywhere it is printed.
    static func number(_ value: Double) -> String {
        var text = String(format: "%.2f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    /// `text` with XML's five special characters escaped, and every scalar XML does not allow
    /// in a document (a C0 control but tab, newline and return; U+FFFE and U+FFFF) or that
    /// printing would hide (``Unicode/Scalar/isHiddenWhenPrinted``) shown as a `\u{…}` escape:
    /// the picture and the page stay well-formed whatever a script's texts hold.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            case _ where scalar.isControlCharacter || scalar.isHiddenWhenPrinted:
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
