internal import Foundation
internal import SessionAudio
internal import SessionTimeline

/// What `show` draws of a session: its picture (SVG, PNG), with the rendered file's waveform and
/// loudness when there is one, or its preview page; and the timeline or queue it shows, found from
/// what the user names (a timeline JSON, a queue's `queue.json`, a rendered file with its
/// timeline beside it, or standard input).
package enum SessionDrawing {
    /// What is drawn.
    package enum Kind: Sendable, Equatable {
        /// The picture, in this format.
        case picture(SessionPicture.Format)
        /// The preview page, the audio referred to, or inside it with `embedsAudio`.
        case page(embedsAudio: Bool)
    }

    /// Draws the session `path` names into `destination`: the timeline (a queue has no picture),
    /// with `audio` (else the file beside `path`) for the waveform, loudness and the page's player.
    /// - Throws: ``SessionError``: `unreadableTimeline`, `invalidSetting` (a queue, a page
    ///   without a rendered file), `unreadableAudio` (a file that is not this timeline's),
    ///   `outputExists`, `cannotWrite`.
    package static func draw(
        _ path: String,
        audio named: String?,
        as kind: Kind,
        to destination: OutputDestination,
        replaceExisting: Bool
    ) throws(SessionError) {
        guard case .timeline(let timeline) = try document(at: path) else {
            throw SessionError(.invalidSetting, "Cannot draw \(path): a queue has no picture; draw its timeline")
        }
        let audio = named ?? self.audio(beside: path)
        if let audio, audio != path {
            // (A file named as FILE had its timeline checked when it was read.)
            try SessionVerifier.refuseForeign(
                timeline,
                named: path == "-" ? "the timeline on standard input" : path,
                for: audio,
                doing: "draw"
            )
        }
        switch kind {
        case .picture(let format):
            let overview = try audio.map { (audio) throws(SessionError) in
                try AudioOverview.measure(path: audio, timeline: timeline, columnCount: SessionScene.columnCount())
            }
            let scene = SessionScene(timeline, audio: overview)
            try SessionPicture.write(scene, as: format, to: destination, replaceExisting: replaceExisting)
        case .page(let embedsAudio):
            guard let audio else {
                throw SessionError(
                    .invalidSetting,
                    "Cannot write the preview page of \(path): it needs the rendered file; name it with \(SettingReference.renderedFile.marker)"
                )
            }
            try PreviewPage.write(
                timeline,
                audioPath: audio,
                embedsAudio: embedsAudio,
                to: destination,
                replaceExisting: replaceExisting
            )
        }
    }

    /// The rendered file that goes with `path`: `path` itself when it is not JSON (its timeline
    /// is beside it), or the file a sidecar timeline (`x.wav.timeline.json`) sits beside.
    package static func audio(beside path: String) -> String? {
        if path == "-" { return nil }
        if !path.hasSuffix(".json") { return path }
        let suffix = ".timeline.json"
        guard path.hasSuffix(suffix) else { return nil }
        let audio = String(path.dropLast(suffix.count))
        var isFolder: ObjCBool = false
        guard AudioFileFormat(fileExtension: (audio as NSString).pathExtension) != nil,
            FileManager.default.fileExists(atPath: audio, isDirectory: &isFolder), !isFolder.boolValue
        else { return nil }
        return audio
    }

    /// The timeline or queue at `path` (a JSON file, or standard input for `-`), or the timeline
    /// beside the audio file at `path`, which must describe that file
    /// (``SessionVerifier/refuseForeign(_:named:for:doing:)``).
    package static func document(at path: String) throws(SessionError) -> SessionDocument {
        if path == "-" || path.hasSuffix(".json") { return try SessionDocument.read(path) }
        var sidecar = SessionVerifier.sidecarTimelinePath(for: path)
        let legacy = SessionVerifier.legacySidecarTimelinePath(for: path)
        let manager = FileManager.default
        if !manager.fileExists(atPath: sidecar) && manager.fileExists(atPath: legacy) { sidecar = legacy }
        let document = try SessionDocument.read(sidecar)
        if case .timeline(let timeline) = document {
            try SessionVerifier.refuseForeign(timeline, named: sidecar, for: path, doing: "show")
        }
        return document
    }
}
