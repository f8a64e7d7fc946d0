import Foundation
import SessionTimeline
import Testing

/// The picture's layout: an element for every item and overlay, columns that tile the file to
/// the frame, the waveform and loudness curve where the overview puts them.
@Suite("SessionScene")
struct SessionSceneTests {
    static func fixture() throws -> Timeline {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/positions/five-seconds.timeline.json")
        return try JSONDecoder().decode(Timeline.self, from: Data(contentsOf: url))
    }

    @Test(
        "Columns tile the file exactly: each starts where the last ended, the last ends at the end",
        arguments: [(1_084, 5_000), (1_084, 13_406_400), (1_084, 100), (7, 7), (3, 10)]
    )
    func columnsTile(columns: Int, frames: Int64) {
        let total = Frames(frames)
        #expect(AudioOverview.startFrame(ofColumn: 0, of: columns, frameCount: total) == .zero)
        #expect(AudioOverview.startFrame(ofColumn: columns, of: columns, frameCount: total) == total)
        var previous = Frames.zero
        for column in 1...columns {
            let start = AudioOverview.startFrame(ofColumn: column, of: columns, frameCount: total)
            #expect(start >= previous)
            // Equal shares to the frame: no column is more than one frame longer than another.
            #expect(start.count - previous.count <= frames / Int64(columns) + 1)
            previous = start
        }
    }

    @Test("Every item (gaps too) and overlay is one box carrying its entry; no audio, no traces")
    func everyItemABox() throws {
        let timeline = try Self.fixture()
        let scene = SessionScene(timeline)
        let entries = scene.boxes.compactMap(\.entry)
        #expect(entries.filter { !$0.isOverlay }.map(\.index).sorted() == timeline.items.map(\.index))
        #expect(entries.filter(\.isOverlay).count == timeline.overlays.count)
        #expect(entries.first { $0.index == 1 }?.kind == "gap")
        #expect(scene.traces.isEmpty && scene.height == 220)
        #expect(scene.sampleRate == timeline.sampleRate && scene.totalFrames == timeline.totalFrames)
        #expect(SessionScene.columnCount() == 1_084)
    }

    @Test("The waveform is one polygon, highs left to right then lows back; the curve breaks where it is silent")
    func audio() throws {
        let timeline = try Self.fixture()
        let count = SessionScene.columnCount()
        var columns: [AudioOverview.Column] = []
        for column in 0..<count {
            let minimum: Float = -Float(column % 4) / 4
            let maximum: Float = Float(column % 3) / 2
            // Silent for the middle hundred columns.
            let loudness: Double? = (500..<600).contains(column) ? nil : -5 - Double(column % 50)
            columns.append(AudioOverview.Column(minimum: minimum, maximum: maximum, shortTermLoudness: loudness))
        }
        let scene = SessionScene(timeline, audio: AudioOverview(columns: columns))
        let height: Double = 220 + 16 + 72 + 12 + 64
        #expect(scene.height == height)
        let waveform = scene.traces.filter { $0.isFilled }
        let curves = scene.traces.filter { !$0.isFilled }
        #expect(waveform.count == 1 && curves.count == 2)
        let points = waveform[0].points
        #expect(points.count == 2 * count)
        let middle: Double = 64 + 4 * 34 + 16 + 36
        // Column 2: maximum 1 (full scale) at the top; going back, its minimum −0.5 half way down.
        #expect(abs(points[2].y - (middle - 36)) < 1e-9 && abs(points[2].x - (100 + 2.5)) < 1e-9)
        #expect(abs(points[2 * count - 3].y - (middle + 18)) < 1e-9)
        #expect(curves[0].points.count == 500 && curves[1].points.count == count - 600)
        // −5 LUFS is the top of the scale, −50 the bottom; below it is held at the bottom.
        let loudnessTop: Double = middle + 36 + 12
        #expect(abs(curves[0].points[0].y - loudnessTop) < 1e-9)
        #expect(abs(curves[0].points[45].y - (loudnessTop + 64)) < 1e-9)
        #expect(abs(curves[0].points[49].y - (loudnessTop + 64)) < 1e-9)
    }
}
