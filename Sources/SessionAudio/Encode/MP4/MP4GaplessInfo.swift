/// iTunes' gapless record, `iTunSMPB`: the encoder delay, the padding and the frame count, as a
/// freeform `----` atom (`com.apple.iTunes`, `iTunSMPB`) in the file's `ilst`. Apple's players
/// read the gapless length from it; others (ffmpeg) read the edit list, which says the same.
/// ``MP4Movie`` puts it in the file's tags.
struct MP4GaplessInfo: Equatable {
    /// Frames before the first frame of the session.
    var priming: Int64
    /// Frames after its last.
    var padding: Int64
    /// The session's frames.
    var frameCount: Int64

    /// The record's text as iTunes writes it: 12 hexadecimal fields, the 2nd the priming, the
    /// 3rd the padding, the 4th the frame count.
    var text: String {
        let fields =
            [hex(0, 8), hex(priming, 8), hex(padding, 8), hex(frameCount, 16)] + Array(repeating: hex(0, 8), count: 8)
        return fields.map { " " + $0 }.joined()
    }

    /// The `----` atom holding ``text``.
    var atom: [UInt8] {
        var item = MP4Bytes()
        item.box("----") { atom in
            atom.fullBox("mean") { $0.append(contentsOf: "com.apple.iTunes".utf8) }
            atom.fullBox("name") { $0.append(contentsOf: "iTunSMPB".utf8) }
            atom.box("data") { data in
                data.append(UInt32(1))  // UTF-8 text
                data.append(UInt32(0))  // no locale
                data.append(contentsOf: text.utf8)
            }
        }
        return item.bytes
    }

    private func hex(_ value: Int64, _ digits: Int) -> String {
        let text = String(UInt64(value), radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
