internal import SessionAudio
package import SessionTimeline

extension AudioOverview {
    /// The overview of the rendered file at `path` in `columnCount` columns, decoded in blocks
    /// (memory does not grow with its length), each column's short-term loudness read as it ends.
    ///
    /// - Throws: ``SessionError`` (`unreadableAudio`) when the file cannot be decoded, or decodes
    ///   to another length than `timeline` says (at the file's own rate): it is not the file this
    ///   timeline was rendered to, and a picture of it would put every item in the wrong place.
    package static func measure(
        path: String,
        timeline: Timeline,
        columnCount: Int
    ) throws(SessionError) -> AudioOverview {
        let decoder: AudioFileDecoder
        let decoded: (overview: AudioOverview, frameCount: Frames)
        let expected: Frames
        do {
            decoder = try AudioFileDecoder(path: path)
            let rates = (file: Int64(decoder.sampleRate.hertz), timeline: Int64(timeline.sampleRate.hertz))
            expected = Frames((timeline.totalFrames.count * rates.file + rates.timeline / 2) / rates.timeline)
            decoded = try decoder.overview(columnCount: columnCount, frameCount: expected)
        } catch {
            throw SessionError(.unreadableAudio, wrapping: error)
        }
        guard decoded.frameCount == expected else {
            throw SessionError(
                .unreadableAudio,
                "Cannot draw \(path): it decodes to \(decoded.frameCount.count) frames at \(decoder.sampleRate.hertz) Hz, "
                    + "but the timeline \"\(printable(timeline.title, limit: 80))\" is \(expected.count) frames at "
                    + "that rate: it is not the file this timeline was rendered to"
            )
        }
        return decoded.overview
    }
}
