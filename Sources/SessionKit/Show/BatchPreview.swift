internal import Foundation
internal import SessionTimeline

/// A batch's previews: each session's page (``PreviewPage``) beside its audio, `{name}.html`,
/// and `index.html` in the output folder with a row per session (title, kind, length, speech and
/// program loudness, late items, what `verify` finds) linking to its page. Every file is written
/// whole or not at all.
package enum BatchPreview {
    /// The index page's name without `.html`: no session may have it (``BatchRenderer``).
    package static let indexName = "index"

    /// One row of the index.
    package struct Row: Sendable, Equatable, Codable {
        package var name: String
        /// The page's file name, relative to the folder; `nil` when the session has none (it failed).
        package var page: String?
        package var title: String
        package var kind: String
        package var length: String
        package var speechLoudness: Double?
        package var programLoudness: Double?
        package var lateClips: Int?
        /// `passed`, the first problem `verify` found, or why there is no audio to verify.
        package var verification: String
        /// Whether it was rendered (now or before), so that there is audio to preview.
        package var isRendered: Bool
        /// Whether its page was written and `verify` found no problem.
        package var isClean: Bool
    }

    /// Writes the pages of `report`'s sessions and the index into `folder`; returns this run's
    /// rows, in the report's order. A session whose page cannot be made is a row saying why, not
    /// a failure.
    ///
    /// The index lists every session of the batch (`names`, in the batch's order) that this run
    /// or another shard made a row for: the rows are kept in the manifest and the index is written
    /// from them under its lock (``BatchManifest/recordPreviews(_:then:)``), so the shards of a
    /// batch end with the index one batch makes, whichever finishes last.
    /// - Throws: ``SessionError`` (`cannotWrite`) when the index cannot be written.
    static func write(
        _ report: BatchReport,
        names: [String],
        folder: String,
        manifest: BatchManifest,
        sources: SourceFolders
    ) throws(SessionError) -> [Row] {
        var rows: [Row] = []
        for (session, result) in zip(report.sessions, report.results) {
            rows.append(row(session, result, sources: sources))
        }
        let index = (folder as NSString).appendingPathComponent("\(indexName).html")
        try manifest.recordPreviews(rows) { (recorded) throws(SessionError) in
            let listed = names.compactMap { recorded[$0] }
            try SessionPicture.write(
                Data(html(listed).utf8),
                to: .path(index),
                replaceExisting: true,
                inOwnedFolder: true
            )
        }
        return rows
    }

    /// The session's page written, and its row; a failure to write it becomes the row's verdict.
    static func row(_ session: BatchSession, _ result: BatchResult, sources: SourceFolders) -> Row {
        var row = Row(
            name: session.name,
            page: nil,
            title: session.script.title,
            kind: "",
            length: "",
            speechLoudness: nil,
            programLoudness: nil,
            lateClips: nil,
            verification: "not rendered (\(result.name))",
            isRendered: false,
            isClean: false
        )
        switch result {
        case .rendered, .upToDate:
            row.isRendered = true
            return page(session, into: row, sources: sources)
        case .failed, .lacksClips: return row
        }
    }

    private static func page(_ session: BatchSession, into row: Row, sources: SourceFolders) -> Row {
        var row = row
        do throws(SessionError) {
            let timeline = try SessionVerifier.readTimeline(at: session.timelinePath)
            row.title = timeline.title
            row.kind = timeline.sessionKind ?? "guided"
            row.length = FrameClock.time(timeline.totalFrames, timeline.sampleRate)
            row.speechLoudness = timeline.loudness?.speech
            row.programLoudness = timeline.loudness?.program
            row.lateClips = timeline.lateness.lateCount
            let report = try SessionVerifier.verify(file: session.outputPath, timeline: timeline, sources: sources)
            row.isClean = report.isClean
            row.verification = report.problems.first?.message ?? "passed"
            let page = (session.outputPath as NSString).deletingPathExtension + ".html"
            try PreviewPage.write(
                timeline,
                audioPath: session.outputPath,
                embedsAudio: false,
                to: .path(page),
                replaceExisting: true,
                inOwnedFolder: true
            )
            row.page = (page as NSString).lastPathComponent
        } catch {
            row.isClean = false
            row.verification = error.lines.first ?? "\(error)"
        }
        return row
    }

    /// The index page: a table of `rows`, as wide as a phone's screen (scrolled sideways
    /// inside its box when wider), light or dark as the reader's system asks.
    package static func html(_ rows: [Row]) -> String {
        func cell(_ value: Double?) -> String { value.map { String(format: "%.1f", $0) } ?? "–" }
        var body = ""
        for row in rows {
            let title = SessionPicture.escaped(printableLine(row.title, limit: 200))
            let link =
                row.page.map {
                    "<a href=\"\(SessionPicture.escaped(PreviewPage.urlComponent($0)))\">\(title)</a>"
                } ?? title
            body += """
                <tr class="\(row.isClean ? "clean" : "problem")" data-session="\(SessionPicture.escaped(row.name))">\
                <td>\(link)<br><small>\(SessionPicture.escaped(printable(row.name, limit: 200)))</small></td>\
                <td>\(SessionPicture.escaped(row.kind))</td><td class="n">\(row.length)</td>\
                <td class="n">\(cell(row.speechLoudness))</td><td class="n">\(cell(row.programLoudness))</td>\
                <td class="n">\(row.lateClips.map(String.init) ?? "–")</td>\
                <td>\(SessionPicture.escaped(printable(row.verification, limit: 300)))</td></tr>

                """
        }
        let clean = rows.count { $0.isClean }
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <link rel="icon" href="data:,">
            <title>Batch preview</title>
            <style>
            :root { color-scheme: light dark; --text: #222; --back: #fff; --rule: #e4e8ee; --muted: #777; \
            --problem: #b00020; --link: #0a5fd1; }
            @media (prefers-color-scheme: dark) {
              :root { --text: #e3e6ea; --back: #14171b; --rule: #2c323a; --muted: #9ba3ad; --problem: #ff6b7f; \
            --link: #6aa8ff; }
            }
            body { font: 14px/1.4 "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 16px 20px; \
            color: var(--text); background: var(--back); }
            a { color: var(--link); }
            .sessions { overflow-x: auto; }
            table { border-collapse: collapse; }
            th, td { text-align: left; padding: 4px 10px; border-bottom: 1px solid var(--rule); vertical-align: top; }
            td { overflow-wrap: anywhere; }
            td.n { text-align: right; font-variant-numeric: tabular-nums; }
            tr.problem td:last-child { color: var(--problem); }
            small { color: var(--muted); }
            </style>
            </head>
            <body>
            <h1>Batch preview</h1>
            <p>\(rows.count) sessions, \(clean) verified clean.</p>
            <div class="sessions"><table>
            <thead><tr><th>Session</th><th>Kind</th><th>Length</th><th>Speech LUFS</th><th>Program LUFS</th>\
            <th>Late items</th><th>Verify</th></tr></thead>
            <tbody>
            \(body)</tbody>
            </table></div>
            </body>
            </html>

            """
    }
}
