import Foundation
package import SessionTimeline

/// The picture of a session (``SessionScene``) as SVG: deterministic (the same timeline gives the
/// same bytes), every sound's element carrying `data-index` (an item's; `data-overlay` an
/// overlay's), `data-start-frame`, `data-frame-count`, `data-kind` and `data-lane`, so that tests,
/// a preview page and app developers can find it.
package enum SessionPicture {
    /// The SVG of `timeline`'s scene.
    package static func svg(_ timeline: Timeline) -> String {
        svg(SessionScene(timeline))
    }

    /// Writes the SVG of `timeline` to `destination` (a path, or standard output), the file
    /// appearing only when whole; an existing file is replaced only with `replaceExisting`.
    package static func write(
        _ timeline: Timeline,
        to destination: OutputDestination,
        replaceExisting: Bool
    ) throws(SessionError) {
        let target = try OutputTarget.resolve(destination, replaceExisting: replaceExisting)
        let file = try SessionRenderer.write(Data(svg(timeline).utf8), to: target)
        do {
            try file?.commit()
        } catch {
            file?.discard()
            throw SessionError(.cannotWrite, wrapping: error)
        }
    }

    static func svg(_ scene: SessionScene) -> String {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(number(scene.width))" height="\(number(scene.height))" \
            viewBox="0 0 \(number(scene.width)) \(number(scene.height))" \
            font-family="DejaVu Sans, Helvetica, Arial, sans-serif">
            <rect width="100%" height="100%" fill="#ffffff"/>

            """
        out += "<g class=\"phases\">\n"
        for box in scene.boxes where box.entry == nil {
            out +=
                "<rect x=\"\(number(box.x))\" y=\"\(number(box.y))\" width=\"\(number(box.width))\" "
                + "height=\"\(number(box.height))\" fill=\"\(box.fill)\"/>\n"
        }
        out += "</g>\n<g class=\"grid\">\n"
        for line in scene.lines {
            out +=
                "<line x1=\"\(number(line.x1))\" y1=\"\(number(line.y1))\" x2=\"\(number(line.x2))\" "
                + "y2=\"\(number(line.y2))\" stroke=\"\(line.color)\" stroke-width=\"1\"/>\n"
        }
        out += "</g>\n<g class=\"items\">\n"
        for box in scene.boxes {
            guard let entry = box.entry else { continue }
            let identity = entry.isOverlay ? "data-overlay=\"\(entry.index)\"" : "data-index=\"\(entry.index)\""
            let title = entry.text ?? entry.name ?? entry.kind
            out +=
                "<g class=\"item\" \(identity) data-start-frame=\"\(entry.startFrame.count)\" "
                + "data-frame-count=\"\(entry.frameCount.count)\" data-kind=\"\(escaped(entry.kind))\" "
                + "data-lane=\"\(entry.lane.rawValue)\">"
                + "<title>\(escaped(printable(title, limit: 300)))</title>"
                + "<rect x=\"\(number(box.x))\" y=\"\(number(box.y))\" width=\"\(number(box.width))\" "
                + "height=\"\(number(box.height))\" rx=\"2\" fill=\"\(box.fill)\"/>"
            if !box.label.isEmpty {
                out +=
                    "<text x=\"\(number(box.x + 3))\" y=\"\(number(box.y + box.height / 2 + 4))\" "
                    + "font-size=\"\(number(SessionScene.labelSize))\" fill=\"#ffffff\">\(escaped(box.label))</text>"
            }
            out += "</g>\n"
        }
        out += "</g>\n<g class=\"labels\">\n"
        for text in scene.texts {
            out +=
                "<text x=\"\(number(text.x))\" y=\"\(number(text.y))\" font-size=\"\(number(text.size))\" "
                + "text-anchor=\"\(text.anchor.rawValue)\" fill=\"\(text.color)\">\(escaped(text.text))</text>\n"
        }
        out += "</g>\n</svg>\n"
        return out
    }

    /// A coordinate to two decimals, without trailing zeros: the same everywhere it is printed.
    static func number(_ value: Double) -> String {
        var text = String(format: "%.2f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    /// `text` with XML's five special characters escaped.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}
