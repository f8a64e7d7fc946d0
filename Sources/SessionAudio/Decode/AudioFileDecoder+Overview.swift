package import SessionTimeline

extension AudioFileDecoder {
    /// Reads the file to its end: the ``AudioOverview`` of its first `frameCount` frames in
    /// `columnCount` columns (each column's short-term loudness read as it ends), and how many
    /// frames it held. Decodes in blocks: memory does not grow with the file's length.
    package func overview(
        columnCount: Int,
        frameCount: Frames
    ) throws(AudioError) -> (overview: AudioOverview, frameCount: Frames) {
        let channels = channelCount.count
        let meter = try LoudnessMeter(sampleRate: sampleRate, channelCount: channelCount, shortTerm: true)
        var columns: [AudioOverview.Column] = []
        columns.reserveCapacity(columnCount)
        var column = AudioOverview.Column(minimum: 0, maximum: 0, shortTermLoudness: nil)
        // Where the current column ends; past the last one, the end of everything decoded.
        var columnEnd = AudioOverview.startFrame(ofColumn: 1, of: columnCount, frameCount: frameCount)
        var position: Int64 = 0
        var samples: [Float] = []
        while true {
            let frames = try read(into: &samples, maximumFrames: 8_192)
            if frames == 0 { break }
            var offset = 0
            while offset < frames {
                let count =
                    columns.count < columnCount
                    ? min(frames - offset, Int(columnEnd.count - position)) : frames - offset
                samples.withUnsafeBufferPointer { buffer in
                    let span = UnsafeBufferPointer(rebasing: buffer[offset * channels..<(offset + count) * channels])
                    let (low, high) = Self.extremes(of: span)
                    column.minimum = min(column.minimum, low)
                    column.maximum = max(column.maximum, high)
                    meter.add(span, frames: count)
                }
                offset += count
                position += Int64(count)
                // A column ends: keep it with the loudness of the 3 s up to here.
                while columns.count < columnCount, position == columnEnd.count {
                    column.shortTermLoudness = meter.shortTermLoudness
                    columns.append(column)
                    column = AudioOverview.Column(minimum: 0, maximum: 0, shortTermLoudness: nil)
                    columnEnd = AudioOverview.startFrame(
                        ofColumn: columns.count + 1,
                        of: columnCount,
                        frameCount: frameCount
                    )
                }
            }
        }
        return (AudioOverview(columns: columns), Frames(position))
    }

    /// The lowest and highest of `samples`, and 0 (a column's line through the middle).
    static func extremes(of samples: UnsafeBufferPointer<Float>) -> (Float, Float) {
        var (lowest, highest): (Float, Float) = (0, 0)
        for sample in samples {
            if sample < lowest { lowest = sample }
            if sample > highest { highest = sample }
        }
        return (lowest, highest)
    }
}
