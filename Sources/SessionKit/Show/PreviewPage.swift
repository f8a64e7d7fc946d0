internal import Foundation
internal import SessionAudio
package import SessionTimeline

/// A session's preview: one self-contained HTML page with the picture inline and a player for
/// the rendered file. A playhead follows the player over the lanes, the current phase and item
/// are named, clicking a sound plays it from its exact start (`startFrame / sampleRate`) and
/// clicking elsewhere on the plot seeks there, the arrow keys step from item to item (not gap),
/// and every sound is reachable from the keyboard. It fits a phone's width (the picture scrolls
/// to follow the playhead) and follows the reader's light or dark scheme. Styles and script are
/// inline and a content security policy forbids every request but the audio's, so it works from
/// a `file://` URL offline.
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
        let page = html(timeline, audio: overview, audioSource: source)
        try SessionPicture.write(
            Data(page.utf8),
            to: destination,
            replaceExisting: replaceExisting,
            inOwnedFolder: inOwnedFolder
        )
    }

    /// The page: `timeline`'s scene (with `audio`'s waveform and loudness) inline with its
    /// playhead, `audioSource` (a relative URL or a `data:` URI) in the player. The title is
    /// the page's heading, not the picture's too.
    package static func html(_ timeline: Timeline, audio: AudioOverview?, audioSource: String) -> String {
        let scene = SessionScene(timeline, audio: audio, showsTitle: false)
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
            <meta name="color-scheme" content="light dark">
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
            <p class="help">Click a sound or a word to play from its first frame, or the waveform or an empty lane \
            to go to that moment; <kbd>Tab</kbd> reaches the sounds and <kbd>Enter</kbd> plays the one focused; \
            <kbd>→</kbd> goes to the next item, <kbd>←</kbd> back to the start of this one, or to the previous one \
            within 1.5 s of this one's start; space plays and pauses.</p>
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

    /// The page's look: light, or dark where the reader's system asks for it
    /// (`prefers-color-scheme`), the picture's own colours overridden; the picture as wide as
    /// the page up to its 1,200 px, at least 640 px, scrolled sideways on a narrower screen.
    static let style = """
        :root { color-scheme: light dark; --text: #222; --muted: #666; --back: #fff; --chip: #e4e8ee;
          --sentence: #fff4c2; --spoken: #ffd24d; --focus: #0a5fd1; }
        body { font: 14px/1.4 "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 16px 20px;
          color: var(--text); background: var(--back); }
        h1 { font-size: 18px; margin: 0 0 2px; overflow-wrap: anywhere; }
        .facts, .help { color: var(--muted); margin: 0 0 10px; }
        .transport { position: sticky; top: 0; background: var(--back); padding: 6px 0; z-index: 1; }
        audio { width: 100%; max-width: 1200px; }
        .now { display: flex; gap: 10px; margin: 4px 0; white-space: nowrap; font-variant-numeric: tabular-nums; }
        #clock { font-weight: bold; }
        #current-phase { background: var(--chip); border-radius: 3px; padding: 0 6px; }
        #current-item { overflow: hidden; text-overflow: ellipsis; min-width: 0; }
        .picture { overflow-x: auto; max-width: 1200px; }
        #session { display: block; width: 100%; min-width: 640px; height: auto; cursor: crosshair; }
        #session g.item { cursor: pointer; }
        #session g.item:hover rect { stroke: var(--text); stroke-width: 1; }
        #session g.item.current rect { stroke: #d0021b; stroke-width: 2; }
        #session g.item:focus { outline: none; }
        #session g.item:focus-visible rect { stroke: var(--focus); stroke-width: 3; }
        kbd { border: 1px solid #bbb; border-radius: 3px; padding: 0 4px; font-size: 12px; }
        #caption { min-height: 1.4em; margin: 4px 0; font-style: italic; }
        #transcript { max-width: 60em; line-height: 1.6; }
        #transcript .word { cursor: pointer; border-radius: 3px; }
        #transcript .word:hover { background: var(--chip); }
        #transcript .sentence.current { background: var(--sentence); }
        #transcript .word.spoken { background: var(--spoken); }
        @media (prefers-color-scheme: dark) {
          :root { --text: #e3e6ea; --muted: #9ba3ad; --back: #14171b; --chip: #2c323a;
            --sentence: #3b3520; --spoken: #7a6212; --focus: #6aa8ff; }
          #session > rect:first-child { fill: #14171b; }
          #session rect.phase:nth-child(odd) { fill: #1d2126; }
          #session rect.phase:nth-child(even) { fill: #252a31; }
          #session g.grid line { stroke: #39414a; }
          #session g.labels text { fill: #b4bcc6; }
          #session g.item[data-kind="gap"] rect { fill: #1a1e23; }
          #session g.item[data-kind="gap"] text { fill: #8a929c; }
          #session polygon.waveform { fill: #7d9cc4; }
          kbd { border-color: #555; }
        }
        """

    /// The player's glue: the playhead and labels follow the player frame by frame while it plays,
    /// the picture scrolled to keep the playhead in view; a click on a sound (or Enter on the one
    /// focused) plays from its first frame, a click elsewhere on the plot goes to that moment;
    /// → goes to the next item and ← to the start of this one, or to the previous one within
    /// 1.5 s of this one's start, as players do; gaps are no stops.
    static let script = """
        "use strict";
        (function () {
          const player = document.getElementById("player");
          const svg = document.getElementById("session");
          const picture = svg.parentElement;
          const playhead = document.getElementById("playhead");
          const clock = document.getElementById("clock");
          const phaseLabel = document.getElementById("current-phase");
          const itemLabel = document.getElementById("current-item");
          const rate = Number(svg.dataset.sampleRate);
          const total = Number(svg.dataset.totalFrames);
          const left = Number(svg.dataset.plotLeft);
          const width = Number(svg.dataset.plotWidth);
          const top = Number(svg.dataset.plotTop);
          const bottom = Number(svg.dataset.plotBottom);
          const viewWidth = svg.viewBox.baseVal.width;
          // Within this many frames of an item's start, ← goes to the item before it.
          const backWindow = Math.round(1.5 * rate);
          const items = Array.from(svg.querySelectorAll("g.item[data-index]"), (element) => ({
            element,
            index: Number(element.dataset.index),
            start: Number(element.dataset.startFrame),
            kind: element.dataset.kind,
            // The text on one line, a paragraph break shown as ¶ (as the table shows it).
            words: element.querySelector("title").textContent.replace(/\\s*\\n\\s*\\n\\s*/g, " ¶ ").replace(/\\s+/g, " "),
          })).sort((a, b) => a.start - b.start || a.index - b.index);
          // The items the arrow keys stop at: every one but the gaps.
          const stops = items.filter((item) => item.kind !== "gap");
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
          // The last of `list` (in time order) that starts at or before `frame`.
          function startedBy(list, frame) {
            let found = null;
            for (const entry of list) {
              if (entry.start > frame) break;
              found = entry;
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
          // Where the picture is wider than its box (a phone), scroll it to keep the playhead in view.
          function keepInView(x) {
            if (picture.scrollWidth <= picture.clientWidth) return;
            const pixel = (x / viewWidth) * svg.getBoundingClientRect().width;
            const margin = picture.clientWidth / 8;
            if (pixel < picture.scrollLeft + margin || pixel > picture.scrollLeft + picture.clientWidth - margin) {
              picture.scrollLeft = Math.max(0, pixel - picture.clientWidth / 3);
            }
          }
          function update() {
            const frame = frameNow();
            const x = left + (frame / Math.max(1, total)) * width;
            playhead.setAttribute("x1", x.toFixed(2));
            playhead.setAttribute("x2", x.toFixed(2));
            keepInView(x);
            clock.textContent = clockText(frame);
            const current = startedBy(items, frame);
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
          function play(frame) {
            seek(frame);
            const started = player.play();
            if (started && started.catch) started.catch(() => {});
          }
          function follow() {
            update();
            if (!player.paused) requestAnimationFrame(follow);
          }
          // Moves to `item`; the keyboard's focus goes with it when it was on a sound.
          function step(item) {
            seek(item.start);
            if (document.activeElement && document.activeElement.closest && document.activeElement.closest("g.item")) {
              item.element.focus({ preventScroll: true });
            }
          }

          for (const element of svg.querySelectorAll("g.item")) {
            element.addEventListener("click", () => play(Number(element.dataset.startFrame)));
          }
          // A click on the plot but on no sound (the waveform, the loudness, an empty lane) goes there.
          svg.addEventListener("click", (event) => {
            if (event.target.closest("g.item")) return;
            const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(svg.getScreenCTM().inverse());
            if (point.x < left || point.x > left + width || point.y < top || point.y > bottom) return;
            seek(Math.round(((point.x - left) / width) * total));
          });
          document.addEventListener("keydown", (event) => {
            if (event.target instanceof HTMLElement && event.target.closest("input, textarea")) return;
            if (event.altKey || event.ctrlKey || event.metaKey) return;
            const frame = frameNow();
            const focused = event.target instanceof Element ? event.target.closest("g.item") : null;
            if (event.key === "ArrowRight") {
              const next = stops.find((item) => item.start > frame);
              if (next) step(next);
            } else if (event.key === "ArrowLeft") {
              const current = startedBy(stops, frame);
              if (!current) {
                seek(0);
              } else if (frame - current.start >= backWindow) {
                step(current);
              } else {
                step(startedBy(stops, current.start - 1) || current);
              }
            } else if (focused && (event.key === "Enter" || event.key === " ")) {
              play(Number(focused.dataset.startFrame));
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
