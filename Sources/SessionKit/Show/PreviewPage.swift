internal import Foundation
internal import SessionAudio
package import SessionTimeline

/// A session's preview: one self-contained HTML page with the picture inline and a player for
/// the rendered file. A playhead follows the player over the lanes, the current phase and item
/// are named, clicking a sound seeks to its exact start (`startFrame / sampleRate`), and the
/// arrow keys step from item to item. Styles and script are inline and a content security policy
/// forbids every request but the audio's, so it works from a `file://` URL offline.
package enum PreviewPage {
    /// The most a page embeds (``write(_:audioPath:embedsAudio:to:replaceExisting:)``): a
    /// browser holds the page in memory as text a third larger than the file.
    package static let embeddableBytes = 256 << 20

    /// Writes the page of `timeline` for the file at `audioPath` to `destination`: the file
    /// referenced by its path relative to the page's folder, or with `embedsAudio` inside it.
    ///
    /// - Throws: ``SessionError`` (`unreadableAudio`) when the file cannot be decoded or is not
    ///   this timeline's, or is too large to embed; `outputExists`, `cannotWrite`.
    package static func write(
        _ timeline: Timeline,
        audioPath: String,
        embedsAudio: Bool,
        to destination: OutputDestination,
        replaceExisting: Bool,
        inOwnedFolder: Bool = false
    ) throws(SessionError) {
        let overview = try AudioOverview.measure(
            path: audioPath,
            timeline: timeline,
            columnCount: SessionScene.columnCount()
        )
        let scene = SessionScene(timeline, audio: overview)
        let source: String
        if embedsAudio {
            source = try dataURI(of: audioPath)
        } else {
            let folder: String
            switch destination {
            case .standardOutput: folder = FileManager.default.currentDirectoryPath
            case .path(let path): folder = (absolute(path) as NSString).deletingLastPathComponent
            }
            source = relativeURL(of: absolute(audioPath), from: folder)
        }
        let page = html(scene, timeline: timeline, audioSource: source)
        try SessionPicture.write(
            Data(page.utf8),
            to: destination,
            replaceExisting: replaceExisting,
            inOwnedFolder: inOwnedFolder
        )
    }

    /// The page: `scene` inline with its playhead, `audioSource` (a relative URL or a `data:` URI) in the player.
    package static func html(_ scene: SessionScene, timeline: Timeline, audioSource: String) -> String {
        let title = SessionPicture.escaped(printableLine(timeline.title, limit: 200))
        let rate = timeline.sampleRate
        var facts = [
            timeline.sessionKind ?? "guided",
            "voice \(printable(timeline.voice ?? "unknown", limit: 60))",
            "\(rate.hertz) Hz",
            FrameClock.time(timeline.totalFrames, rate),
            "\(timeline.items.count) items",
        ]
        if let loudness = timeline.loudness {
            if let speech = loudness.speech { facts.append(String(format: "speech %.1f LUFS", speech)) }
            if let program = loudness.program { facts.append(String(format: "program %.1f LUFS", program)) }
        }
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; \
            media-src file: data: blob:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <link rel="icon" href="data:,">
            <title>\(title)</title>
            <style>
            \(style)
            </style>
            </head>
            <body>
            <header>
            <h1>\(title)</h1>
            <p class="facts">\(SessionPicture.escaped(facts.joined(separator: " · ")))</p>
            </header>
            <div class="transport">
            <audio id="player" controls preload="auto" src="\(SessionPicture.escaped(audioSource))">\(captionTrack(timeline))</audio>
            <p class="now"><span id="clock">0:00.000</span> <span id="current-phase"></span> \
            <span id="current-item"></span></p>
            </div>
            <p id="caption" aria-live="off"></p>
            <div class="picture">
            \(SessionPicture.svg(scene, playhead: true))</div>
            \(transcript(timeline))
            <p class="help">Click a sound or a word to play from its first frame; \
            <kbd>←</kbd> and <kbd>→</kbd> step to the previous and next item; space plays and pauses.</p>
            <script>
            \(script)
            </script>
            </body>
            </html>

            """
    }

    /// The captions as a WebVTT track (``Captions/webVTT(_:)``, each word timed) in a `data:`
    /// URL, read by the browser's own WebVTT parser: a `<track src="x.vtt">` beside the page would
    /// be refused from a `file://` URL (each file is an origin of its own), so the page carries
    /// its cues; empty when no item has words.
    static func captionTrack(_ timeline: Timeline) -> String {
        guard !Captions.cues(of: timeline).isEmpty else { return "" }
        let vtt = Data(Captions.webVTT(timeline).utf8).base64EncodedString()
        return "<track id=\"captions\" kind=\"captions\" label=\"Words\" srclang=\"en\" default "
            + "src=\"data:text/vtt;base64,\(vtt)\">"
    }

    /// The words of every spoken item, sentence by sentence, each word a `span` with its frames
    /// (`data-start-frame`, `data-end-frame`): the page marks the sentence and the word being
    /// spoken, and a click on a word plays from it. Empty when no item has words.
    static func transcript(_ timeline: Timeline) -> String {
        var paragraphs: [String] = []
        for item in timeline.items {
            guard let clip = item.clip, let words = clip.words, !words.isEmpty else { continue }
            let sentences = clip.sentences ?? []
            // Each sentence with its words; words outside every sentence make one of their own.
            var groups: [(start: Frames, end: Frames, words: [SpeechMark])] = sentences.map {
                ($0.startFrame, $0.startFrame + $0.frameCount, [])
            }
            if groups.isEmpty {
                groups = [
                    (words[0].startFrame, words[words.count - 1].startFrame + words[words.count - 1].frameCount, [])
                ]
            }
            for word in words {
                let index = groups.lastIndex { $0.start <= word.startFrame } ?? 0
                groups[index].words.append(word)
            }
            let spans = groups.filter { !$0.words.isEmpty }.map { group in
                let inner = group.words.map { word in
                    "<span class=\"word\" data-start-frame=\"\(word.startFrame.count)\" "
                        + "data-end-frame=\"\((word.startFrame + word.frameCount).count)\">"
                        + "\(SessionPicture.escaped(printable(word.text, limit: 100)))</span>"
                }
                return "<span class=\"sentence\" data-start-frame=\"\(group.start.count)\" "
                    + "data-end-frame=\"\(group.end.count)\">\(inner.joined(separator: " "))</span>"
            }
            paragraphs.append("<p data-index=\"\(item.index)\">\(spans.joined(separator: " "))</p>")
        }
        guard !paragraphs.isEmpty else { return "" }
        return "<div id=\"transcript\">\n" + paragraphs.joined(separator: "\n") + "\n</div>"
    }

    /// `audioPath`'s bytes as a `data:` URI of its format's media type.
    static func dataURI(of audioPath: String) throws(SessionError) -> String {
        let bytes: Data
        do {
            bytes = try AudioFileDecoder.contentsOfRegularFile(audioPath, noun: "audio file", limit: embeddableBytes)
        } catch {
            throw SessionError(.unreadableAudio, wrapping: error)
        }
        let type =
            switch AudioFileFormat(fileExtension: (audioPath as NSString).pathExtension) {
            case .flac: "audio/flac"
            case .mp3: "audio/mpeg"
            case .opus: "audio/ogg; codecs=opus"
            case .vorbis: "audio/ogg"
            case .m4a, .m4b: "audio/mp4"
            case .wav, nil: "audio/wav"
            }
        return "data:\(type);base64,\(bytes.base64EncodedString())"
    }

    /// `path` made absolute against the working folder, `.` and `..` resolved by name.
    static func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return URL(fileURLWithPath: full).standardizedFileURL.path
    }

    /// The URL of the file at `target` relative to the folder `folder` (both absolute): `../out/x.wav`,
    /// each name percent-encoded.
    package static func relativeURL(of target: String, from folder: String) -> String {
        let to = target.split(separator: "/").map(String.init)
        let from = folder.split(separator: "/").map(String.init)
        var shared = 0
        while shared < min(to.count - 1, from.count) && to[shared] == from[shared] { shared += 1 }
        let names = Array(repeating: "..", count: from.count - shared) + to[shared...]
        return names.map(urlComponent).joined(separator: "/")
    }

    /// `name` as one component of a URL's path: percent-encoded but for what a path allows, `/`, `;`, `?` and `#` included.
    /// A colon is encoded too: in a relative URL's first name it would be read as a scheme
    /// (`take2:final.wav` is the URL scheme `take2`, and the player stays silent).
    package static func urlComponent(_ name: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/;?#:")
        return name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
    }

    static let style = """
        body { font: 14px/1.4 "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 16px 20px; color: #222; }
        h1 { font-size: 18px; margin: 0 0 2px; }
        .facts, .help { color: #666; margin: 0 0 10px; }
        .transport { position: sticky; top: 0; background: #fff; padding: 6px 0; z-index: 1; }
        audio { width: 100%; max-width: 1200px; }
        .now { display: flex; gap: 10px; margin: 4px 0; white-space: nowrap; font-variant-numeric: tabular-nums; }
        #clock { font-weight: bold; }
        #current-phase { background: #e4e8ee; border-radius: 3px; padding: 0 6px; }
        #current-item { overflow: hidden; text-overflow: ellipsis; }
        .picture { overflow-x: auto; }
        g.item:hover rect { stroke: #222; stroke-width: 1; }
        g.item.current rect { stroke: #d0021b; stroke-width: 2; }
        kbd { border: 1px solid #bbb; border-radius: 3px; padding: 0 4px; font-size: 12px; }
        #caption { min-height: 1.4em; margin: 4px 0; font-style: italic; }
        #transcript { max-width: 60em; line-height: 1.6; }
        #transcript .word { cursor: pointer; border-radius: 3px; }
        #transcript .word:hover { background: #e4e8ee; }
        #transcript .sentence.current { background: #fff4c2; }
        #transcript .word.spoken { background: #ffd24d; }
        """

    /// The player's glue: the playhead and labels follow the player frame by frame while it plays;
    /// a click seeks to the item's first frame; the arrow keys step between items.
    static let script = """
        "use strict";
        (function () {
          const player = document.getElementById("player");
          const svg = document.getElementById("session");
          const playhead = document.getElementById("playhead");
          const clock = document.getElementById("clock");
          const phaseLabel = document.getElementById("current-phase");
          const itemLabel = document.getElementById("current-item");
          const rate = Number(svg.dataset.sampleRate);
          const total = Number(svg.dataset.totalFrames);
          const left = Number(svg.dataset.plotLeft);
          const width = Number(svg.dataset.plotWidth);
          const items = Array.from(svg.querySelectorAll("g.item[data-index]"), (element) => ({
            element,
            index: Number(element.dataset.index),
            start: Number(element.dataset.startFrame),
            kind: element.dataset.kind,
            words: element.querySelector("title").textContent,
          })).sort((a, b) => a.start - b.start || a.index - b.index);
          const phases = Array.from(svg.querySelectorAll("rect.phase"), (element) => ({
            name: element.dataset.phase,
            start: Number(element.dataset.startFrame),
            end: Number(element.dataset.endFrame),
          }));
          let shown = null;
          const transcript = document.getElementById("transcript");
          const spans = (selector) => transcript ? Array.from(transcript.querySelectorAll(selector), (element) => ({
            element,
            start: Number(element.dataset.startFrame),
            end: Number(element.dataset.endFrame),
          })) : [];
          const words = spans(".word");
          const sentences = spans(".sentence");
          let spokenWord = null;
          let currentSentence = null;
          // The one of `list` (in time order) whose frames hold `frame`.
          function holding(list, frame) {
            let found = null;
            for (const entry of list) {
              if (entry.start > frame) break;
              if (frame < entry.end) found = entry;
            }
            return found;
          }
          function mark(previous, next, name) {
            if (previous === next) return next;
            if (previous) previous.element.classList.remove(name);
            if (next) next.element.classList.add(name);
            return next;
          }

          // The frame the player is at: seconds back to frames, as they were made (start / rate).
          function frameNow() {
            return Math.min(total, Math.max(0, Math.round(player.currentTime * rate)));
          }
          function clockText(frame) {
            const milliseconds = Math.round((frame * 1000) / rate);
            const minutes = Math.floor(milliseconds / 60000);
            const seconds = ((milliseconds % 60000) / 1000).toFixed(3).padStart(6, "0");
            return minutes + ":" + seconds;
          }
          function update() {
            const frame = frameNow();
            const x = left + (frame / Math.max(1, total)) * width;
            playhead.setAttribute("x1", x.toFixed(2));
            playhead.setAttribute("x2", x.toFixed(2));
            clock.textContent = clockText(frame);
            let current = null;
            for (const item of items) {
              if (item.start > frame) break;
              current = item;
            }
            spokenWord = mark(spokenWord, holding(words, frame), "spoken");
            currentSentence = mark(currentSentence, holding(sentences, frame), "current");
            const phase = phases.find((p) => p.start <= frame && frame < p.end) || phases[phases.length - 1];
            phaseLabel.textContent = phase && phase.name ? phase.name : "";
            if (current !== shown) {
              if (shown) shown.element.classList.remove("current");
              shown = current;
              if (current) {
                current.element.classList.add("current");
                itemLabel.textContent = "#" + current.index + " " + current.kind + ": " + current.words;
                itemLabel.dataset.index = String(current.index);
              } else {
                itemLabel.textContent = "";
                delete itemLabel.dataset.index;
              }
            }
          }
          function seek(frame) {
            player.currentTime = frame / rate;
            update();
          }
          function follow() {
            update();
            if (!player.paused) requestAnimationFrame(follow);
          }

          for (const element of svg.querySelectorAll("g.item")) {
            element.addEventListener("click", () => seek(Number(element.dataset.startFrame)));
          }
          document.addEventListener("keydown", (event) => {
            if (event.target instanceof HTMLElement && event.target.closest("input, textarea")) return;
            const frame = frameNow();
            if (event.key === "ArrowRight") {
              const next = items.find((item) => item.start > frame);
              if (next) seek(next.start);
            } else if (event.key === "ArrowLeft") {
              const earlier = items.filter((item) => item.start < frame);
              if (earlier.length) seek(earlier[earlier.length - 1].start);
            } else if (event.key === " " && event.target === document.body) {
              if (player.paused) player.play(); else player.pause();
            } else {
              return;
            }
            event.preventDefault();
          });
          for (const word of words) {
            word.element.addEventListener("click", () => seek(word.start));
          }
          // The browser's own text track: its cues as the player reaches them (cuechange).
          const caption = document.getElementById("caption");
          const track = document.getElementById("captions");
          if (track) {
            track.track.mode = "hidden";
            track.track.addEventListener("cuechange", () => {
              const cues = Array.from(track.track.activeCues || []);
              caption.textContent = cues.map((cue) => cue.getCueAsHTML().textContent).join(" ");
              caption.dataset.changes = String(Number(caption.dataset.changes || "0") + 1);
            });
          }
          player.addEventListener("play", () => requestAnimationFrame(follow));
          for (const name of ["seeked", "timeupdate", "pause", "ended", "loadedmetadata"]) {
            player.addEventListener(name, update);
          }
          update();
        })();
        """
}
