import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// The preview page's pieces: the audio's relative URL, the overview measured from a real file
/// against an independent decoder, the page's promises (no request, the data the script reads).
@Suite("The preview page", .serialized)
struct PreviewPageTests {
    @Test(
        "The audio is referred to relative to the page's folder, each name percent-encoded",
        arguments: [
            ("/a/b/x.wav", "/a/b", "x.wav"),
            ("/a/out/x.wav", "/a/pages", "../out/x.wav"),
            ("/a/b/c.wav", "/a/b/c/d", "../../c.wav"),
            ("/x y#1?.wav", "/", "x%20y%231%3F.wav"),
            ("/srv/a;b/é.wav", "/srv", "a%3Bb/%C3%A9.wav"),
            // A colon in a relative URL's first name would make `take2:` its scheme.
            ("/a/take2:final.wav", "/a", "take2%3Afinal.wav"),
            ("/a/x:y/z:w.wav", "/a", "x%3Ay/z%3Aw.wav"),
        ]
    )
    func relativeURL(target: String, folder: String, expected: String) {
        #expect(PreviewPage.relativeURL(of: target, from: folder) == expected)
    }

    @Test("The overview's columns are the file's lowest and highest samples, column by column, as ffmpeg decodes it")
    func overviewMatchesFFmpeg() async throws {
        let folder = try TemporaryFolder()
        let timeline = try await VerifierTests.render(in: folder)
        let path = folder.path("x.wav")
        let columnCount = 97
        let overview = try AudioOverview.measure(path: path, timeline: timeline, columnCount: columnCount)
        #expect(overview.columns.count == columnCount)
        let (samples, channels) = try await FFmpeg.decode(path)
        let frames = Int64(samples.count / channels)
        #expect(frames == timeline.totalFrames.count)
        for (index, column) in overview.columns.enumerated() {
            let start = Int(
                AudioOverview.startFrame(ofColumn: index, of: columnCount, frameCount: Frames(frames)).count
            )
            let end = Int(
                AudioOverview.startFrame(ofColumn: index + 1, of: columnCount, frameCount: Frames(frames)).count
            )
            let span = samples[start * channels..<end * channels]
            // ffmpeg's float from 16-bit PCM is the same value ours is: exactly equal.
            #expect(column.minimum == min(0, span.min() ?? 0) && column.maximum == max(0, span.max() ?? 0), "\(index)")
        }
    }

    @Test("Another file than the timeline's is refused, naming both lengths")
    func wrongFile() async throws {
        let folder = try TemporaryFolder()
        let rendered = try await VerifierTests.render(in: folder)
        let other = try Self.fiveSeconds()
        let expected = other.totalFrames.count * Int64(rendered.sampleRate.hertz) / Int64(other.sampleRate.hertz)
        #expect {
            _ = try AudioOverview.measure(path: folder.path("x.wav"), timeline: other, columnCount: 10)
        } throws: { error in
            let error = error as? SessionError
            return error?.code == .unreadableAudio
                && error?.lines == [
                    "Cannot draw \(folder.path("x.wav")): it decodes to \(rendered.totalFrames.count) frames at "
                        + "\(rendered.sampleRate.hertz) Hz, but the timeline \"Five seconds\" is \(expected) frames at "
                        + "that rate: it is not the file this timeline was rendered to"
                ]
        }
    }

    static func fiveSeconds() throws -> Timeline {
        try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: Repository.fixtures.appendingPathComponent("positions/five-seconds.timeline.json"))
        )
    }

    @Test("The page: the picture inline with its playhead and data, the player, a policy that allows no request")
    func page() throws {
        let timeline = try Self.fiveSeconds()
        let html = PreviewPage.html(timeline, audio: nil, audioSource: "a b.wav")
        #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"))
        #expect(html.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "))
        #expect(html.contains("<audio id=\"player\" controls preload=\"auto\" src=\"a b.wav\"></audio>"))
        #expect(html.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"session\" "))
        #expect(html.contains("data-sample-rate=\"1000\" data-total-frames=\"5000\""))
        #expect(html.contains("<line id=\"playhead\" "))
        #expect(html.matches(of: #/<g class="item" data-index="/#).count == timeline.items.count)
        #expect(html.matches(of: #/<rect class="phase" data-phase="/#).count == timeline.phases.count)
        // The only URL is the SVG namespace, which is a name, never fetched.
        let urls = html.matches(of: #/https?:[^"]*/#).map { String($0.output) }
        #expect(urls == ["http://www.w3.org/2000/svg"])
        #expect(!html.contains("<?xml"), "no XML declaration inside HTML")
    }

    @Test(
        "The page on a phone and at night: a viewport, a dark scheme, the title once; every sound but a gap reachable by keyboard, named"
    )
    func pageForEveryone() throws {
        let timeline = try Self.fiveSeconds()
        let html = PreviewPage.html(timeline, audio: nil, audioSource: "a.wav")
        #expect(html.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"))
        #expect(html.contains("@media (prefers-color-scheme: dark)"))
        #expect(html.matches(of: #/Five seconds/#).count == 2, "the <title> and the heading, not the picture too")
        #expect(html.contains("<h1>Five seconds</h1>"))
        let focusable = html.matches(
            of: #/<g class="item" data-(index|overlay)="(\d+)"[^>]* data-kind="([a-z]+)"[^>]*>/#
        )
        #expect(focusable.count == timeline.items.count + timeline.overlays.count)
        for match in focusable {
            let element = String(match.output.0)
            let isGap = match.output.3 == "gap"
            #expect(element.contains(" tabindex=\"0\" role=\"button\" aria-label=\"") != isGap, "\(element)")
        }
        #expect(html.contains("aria-label=\"item 0, segment at 0:00.000: Welcome.\""))
        #expect(html.contains("aria-label=\"overlay 0, gong at 0:00.800: gong\""))
    }

    @Test("A paragraph break is a line break in the page and the picture's tooltip, one line in a label, never \\u{a}")
    func paragraphBreaks() throws {
        let json = try String(
            contentsOf: Repository.fixtures.appendingPathComponent("positions/five-seconds.timeline.json"),
            encoding: .utf8
        )
        .replacingOccurrences(of: #""Welcome.""#, with: #""Welcome.\n\nBreathe in,\r\nand out.""#)
        .replacingOccurrences(of: #""Five seconds""#, with: #""Five\n\nseconds""#)
        let timeline = try JSONDecoder().decode(Timeline.self, from: Data(json.utf8))
        let html = PreviewPage.html(timeline, audio: nil, audioSource: "a.wav")
        #expect(!html.contains("\\u{a}") && !html.contains("\\u{d}"))
        #expect(html.contains("<title>Welcome.\n\nBreathe in,\nand out.</title>"))
        #expect(html.contains("aria-label=\"item 0, segment at 0:00.000: Welcome. ¶ Breathe in, and out.\""))
        #expect(html.contains("<h1>Five ¶ seconds</h1>"))
        #expect(printableLine("One.\n\n\nTwo,\nthree.\n") == "One. ¶ Two, three.")
        #expect(printableLine("No break, \u{1b} kept escaped") == "No break, \\u{1b} kept escaped")
        #expect(printableLines("a\r\nb\u{7}") == "a\nb\\u{7}")
    }

    @Test("The batch's index: a viewport, a dark scheme, a table that scrolls inside its box")
    func batchIndex() {
        let html = BatchPreview.html([])
        #expect(html.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"))
        #expect(html.contains("@media (prefers-color-scheme: dark)"))
        #expect(html.contains("<div class=\"sessions\"><table>"))
    }
}
