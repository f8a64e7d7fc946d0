/// A rendered file seen from afar: per pixel column of a picture, the lowest and highest sample
/// and the short-term loudness (EBU R128, 3 s) at the column's end. What ``SessionScene`` draws
/// under the lanes; measured by whoever decodes the file.
package struct AudioOverview: Sendable, Equatable {
    /// One pixel column's share of the file.
    package struct Column: Sendable, Equatable {
        /// The lowest and highest sample in it, across channels (−1…1 for full scale).
        package var minimum: Float
        package var maximum: Float
        /// The short-term loudness at its end, LUFS; `nil` where it is silent (below −70 LUFS).
        package var shortTermLoudness: Double?

        package init(minimum: Float, maximum: Float, shortTermLoudness: Double?) {
            self.minimum = minimum
            self.maximum = maximum
            self.shortTermLoudness = shortTermLoudness
        }
    }

    /// The columns, left to right, covering the file in equal shares.
    package var columns: [Column]

    package init(columns: [Column]) {
        self.columns = columns
    }

    /// Where column `column` of `columnCount` starts, of `frameCount` frames: the shares are
    /// equal to the frame, rounded down, so the columns tile the file exactly.
    package static func startFrame(ofColumn column: Int, of columnCount: Int, frameCount: Frames) -> Frames {
        Frames(frameCount.count * Int64(column) / Int64(max(1, columnCount)))
    }
}
