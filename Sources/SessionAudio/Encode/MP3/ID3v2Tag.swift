import SessionTimeline

/// An ID3v2.4 tag with a title, album, artist and chapters (`CHAP` frames listed by `CTOC`):
/// what goes at the start of an MP3.
///
/// Written by hand: LAME's `id3tag_…` API writes text frames but no chapters. Text is UTF-8
/// (encoding 3); chapter times are milliseconds from the first decoded frame, with the byte
/// offsets left unset (0xFFFFFFFF) as the specification allows.
enum ID3v2Tag {
    /// The whole tag, header included; empty when there is nothing to say.
    static func bytes(_ metadata: AudioMetadata, sampleRate: SampleRate) -> [UInt8] {
        var frames: [UInt8] = []
        for (id, text) in [("TIT2", metadata.title), ("TALB", metadata.album), ("TPE1", metadata.artist)] {
            if let text, !text.isEmpty { frames += textFrame(id, text) }
        }
        frames += chapterFrames(metadata.chapters, sampleRate: sampleRate)
        guard !frames.isEmpty else { return [] }
        return Array("ID3".utf8) + [4, 0, 0] + syncsafe(frames.count) + frames
    }

    /// `CTOC` frames (a top-level, ordered one; nested ones when there are more than 255 chapters)
    /// and one `CHAP` per chapter.
    private static func chapterFrames(_ chapters: [AudioChapter], sampleRate: SampleRate) -> [UInt8] {
        guard !chapters.isEmpty else { return [] }
        let ids = chapters.indices.map { "ch\($0)" }
        var frames: [UInt8] = []
        let groups = stride(from: 0, to: ids.count, by: 255).map { Array(ids[$0..<min($0 + 255, ids.count)]) }
        if groups.count == 1 {
            frames += tableOfContents("toc", topLevel: true, children: ids)
        } else {
            let children = groups.indices.map { "toc\($0 + 1)" }
            frames += tableOfContents("toc", topLevel: true, children: children)
            for (child, group) in zip(children, groups) {
                frames += tableOfContents(child, topLevel: false, children: group)
            }
        }
        for (id, chapter) in zip(ids, chapters) {
            var body = terminated(id)
            for value in [
                chapter.startMilliseconds(at: sampleRate), chapter.endMilliseconds(at: sampleRate),
            ] {
                body += bigEndian(UInt32(clamping: value))
            }
            body += [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
            body += textFrame("TIT2", chapter.title)
            frames += frame("CHAP", body)
        }
        return frames
    }

    private static func tableOfContents(_ id: String, topLevel: Bool, children: [String]) -> [UInt8] {
        var body = terminated(id)
        body.append(topLevel ? 0x03 : 0x01)  // top-level, ordered
        body.append(UInt8(children.count))
        for child in children { body += terminated(child) }
        return frame("CTOC", body)
    }

    private static func textFrame(_ id: String, _ text: String) -> [UInt8] {
        frame(id, [3] + Array(text.utf8))
    }

    private static func frame(_ id: String, _ body: [UInt8]) -> [UInt8] {
        Array(id.utf8) + syncsafe(body.count) + [0, 0] + body
    }

    private static func terminated(_ text: String) -> [UInt8] { Array(text.utf8) + [0] }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
    }

    /// A size as ID3v2.4 writes it: 28 bits, seven to a byte.
    private static func syncsafe(_ value: Int) -> [UInt8] {
        (0..<4).map { UInt8((value >> (21 - 7 * $0)) & 0x7F) }
    }
}
