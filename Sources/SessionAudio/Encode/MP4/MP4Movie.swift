internal import SessionTimeline

/// The boxes of an M4A or M4B that are not its audio: the file type (`ftyp`), the movie (`moov`)
/// that indexes one AAC track and describes its chapters and tags, and the chapters' text samples.
///
/// Laid out as libavformat's `ipod` muxer lays out such a file with `faststart`, which Apple's
/// players, ffmpeg and the rest read; render-session wrote its M4As with that muxer until it
/// writes them itself (issue 43), because libavformat keeps about 78 bytes per packet until the
/// index is written, 40 MB for three hours, where the sizes this needs take 4 bytes a packet.
/// What is written, front to back: `ftyp`; `moov` with
/// - `mvhd`, its time scale the sample rate, so that every length is in frames;
/// - the audio `trak`: an edit list starting the presentation after the encoder's priming and
///   lasting exactly the session's frames, a `tref`/`chap` naming the chapter track, and a sample
///   table with every packet in one chunk (the file has no other track to interleave), their
///   sizes, and the `roll` group that says each packet needs the one before it to decode;
/// - the chapter `trak` when there are chapters: a disabled QuickTime text track, one sample a
///   chapter lasting until the next one starts, which Apple's players show;
/// - `udta`: iTunes' tags in `meta`/`ilst` (`©nam`, `©ART`, `©alb`, `©too`, and `iTunSMPB`
///   as a `----` atom) and Nero's `chpl` chapter list, which ffmpeg and others read;
///
/// then `mdat`: the chapters' text samples and the audio packets. The `moov` has the same length
/// whatever the packets' sizes, so the muxer reserves its place before the audio and writes it
/// last.
struct MP4Movie {
    /// The file's brand.
    let brand: MP4Muxer.Brand
    /// Frames a second: the movie's and both tracks' time scale.
    let sampleRate: Int
    /// The AAC stream's channels.
    let channelCount: Int
    /// The encoder's `AudioSpecificConfig`, which goes in the `esds` box.
    let audioSpecificConfig: [UInt8]
    /// How many packets the audio has, each ``packetFrames`` long.
    let packetCount: Int64
    /// Frames the packets decode to before the session's first: the edit list's start.
    let priming: Int64
    /// The session's frames: the edit list's length.
    let frameCount: Int64
    /// The title, album, artist and chapters.
    let metadata: AudioMetadata
    /// Each chapter's text sample as QuickTime reads it: the UTF-8 title after its 16-bit length,
    /// then an `encd` box saying the text is UTF-8.
    let chapterSamples: [[UInt8]]
    /// Whether chunk offsets and the `mdat` size take 64 bits: only for a file that could pass
    /// 4 GiB, its packets all as large as AAC-LC allows (6,144 bits a channel), about 15 hours
    /// of stereo at 48 kHz; decided before the first packet, so that the `moov`'s size is known.
    let largeOffsets: Bool
    /// Whether the boxes' times take 64 bits: only past 2³² frames (12 hours at 96 kHz).
    private let wideTimes: Bool

    /// Frames in every AAC packet.
    static let packetFrames = Int64(AACEncoder.frameSize)
    /// What the `©too` tag names as the encoding tool.
    static let encodingTool = "render-session"

    init(
        brand: MP4Muxer.Brand,
        sampleRate: Int,
        channelCount: Int,
        audioSpecificConfig: [UInt8],
        packetCount: Int64,
        priming: Int64,
        frameCount: Int64,
        metadata: AudioMetadata
    ) {
        self.brand = brand
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.audioSpecificConfig = audioSpecificConfig
        self.packetCount = packetCount
        self.priming = priming
        self.frameCount = frameCount
        self.metadata = metadata
        chapterSamples = metadata.chapters.map { chapter in
            let title = Self.prefix(of: chapter.title, maxBytes: Int(UInt16.max))
            var sample = MP4Bytes()
            sample.append(UInt16(title.count))
            sample.append(contentsOf: title)
            sample.box("encd") { $0.append(UInt32(0x100)) }
            return sample.bytes
        }
        let chapterBytes = chapterSamples.reduce(0) { $0 + $1.count }
        let mostAudioBytes = packetCount * 768 * Int64(channelCount)
        largeOffsets = mostAudioBytes + Int64(chapterBytes) + (1 << 20) > Int64(UInt32.max)
        wideTimes = max(frameCount, packetCount * Self.packetFrames) > Int64(UInt32.max)
    }

    /// The `ftyp` box.
    var fileType: [UInt8] {
        var file = MP4Bytes()
        file.box("ftyp") { box in
            box.append(code: brand.rawValue)
            box.append(UInt32(0x200))
            for compatible in [brand.rawValue, "isom", "iso2"] { box.append(code: compatible) }
        }
        return file.bytes
    }

    /// The header of the `mdat` box holding `payloadSize` bytes.
    func mediaDataHeader(payloadSize: Int64) -> [UInt8] {
        var header = MP4Bytes()
        if largeOffsets {
            header.append(UInt32(1))
            header.append(code: "mdat")
            header.append(UInt64(16 + payloadSize))
        } else {
            header.append(UInt32(8 + payloadSize))
            header.append(code: "mdat")
        }
        return header.bytes
    }

    /// The `moov` box: `packetSizes` are the audio packets' sizes in order, `audioOffset` where
    /// the first starts in the file, `chapterOffset` where the first chapter sample does.
    func movie(packetSizes: [UInt32], audioOffset: Int64, chapterOffset: Int64) -> [UInt8] {
        precondition(Int64(packetSizes.count) == packetCount, "the movie indexes every packet")
        let hasChapters = !metadata.chapters.isEmpty
        var file = MP4Bytes(reservingCapacity: 2_048 + 4 * packetSizes.count)
        file.box("moov") { moov in
            movieHeader(&moov, nextTrack: hasChapters ? 3 : 2)
            audioTrack(&moov, packetSizes: packetSizes, offset: audioOffset, chapterTrack: hasChapters)
            if hasChapters { chapterTrack(&moov, offset: chapterOffset) }
            userData(&moov)
        }
        return file.bytes
    }

    // MARK: The movie and its tracks

    private static let identityMatrix: [UInt32] = [0x1_0000, 0, 0, 0, 0x1_0000, 0, 0, 0, 0x4000_0000]

    private func movieHeader(_ moov: inout MP4Bytes, nextTrack: UInt32) {
        moov.fullBox("mvhd", version: wideTimes ? 1 : 0) { box in
            box.append(0, wide: wideTimes)  // created
            box.append(0, wide: wideTimes)  // modified
            box.append(UInt32(sampleRate))
            box.append(frameCount, wide: wideTimes)
            box.append(UInt32(0x1_0000))  // rate 1.0
            box.append(UInt16(0x100))  // volume 1.0
            box.appendZeros(10)
            for value in Self.identityMatrix { box.append(value) }
            box.appendZeros(24)
            box.append(nextTrack)
        }
    }

    private func trackHeader(_ track: inout MP4Bytes, id: UInt32, enabled: Bool, isAudio: Bool) {
        // Flags: in the movie (2), and enabled (1) for the audio; a chapter track is disabled.
        track.fullBox("tkhd", version: wideTimes ? 1 : 0, flags: enabled ? 3 : 2) { box in
            box.append(0, wide: wideTimes)
            box.append(0, wide: wideTimes)
            box.append(id)
            box.append(UInt32(0))
            box.append(frameCount, wide: wideTimes)
            box.appendZeros(8)
            box.append(UInt16(0))  // layer
            box.append(UInt16(isAudio ? 1 : 0))  // alternate group
            box.append(UInt16(isAudio ? 0x100 : 0))  // volume
            box.append(UInt16(0))
            for value in Self.identityMatrix { box.append(value) }
            box.append(UInt32(0))  // width
            box.append(UInt32(0))  // height
        }
    }

    /// An edit list of one edit: `frameCount` frames of the media from `mediaStart`.
    private func editList(_ track: inout MP4Bytes, mediaStart: Int64) {
        track.box("edts") { edits in
            edits.fullBox("elst", version: wideTimes ? 1 : 0) { box in
                box.append(UInt32(1))
                box.append(frameCount, wide: wideTimes)
                box.append(mediaStart, wide: wideTimes)
                box.append(UInt32(0x1_0000))  // rate 1.0
            }
        }
    }

    /// The media header; `language` is packed ISO 639-2 (`und`, 0x55C4) or a Macintosh language
    /// code (0, English).
    private func mediaHeader(_ media: inout MP4Bytes, timeScale: Int, duration: Int64, language: UInt16) {
        media.fullBox("mdhd", version: wideTimes ? 1 : 0) { box in
            box.append(0, wide: wideTimes)
            box.append(0, wide: wideTimes)
            box.append(UInt32(timeScale))
            box.append(duration, wide: wideTimes)
            box.append(language)
            box.append(UInt16(0))
        }
    }

    private func handler(_ media: inout MP4Bytes, type: String, name: String) {
        media.fullBox("hdlr") { box in
            box.append(UInt32(0))
            box.append(code: type)
            box.appendZeros(12)
            box.append(contentsOf: name.utf8)
            box.append(UInt8(0))
        }
    }

    private func dataInformation(_ information: inout MP4Bytes) {
        information.box("dinf") { dinf in
            dinf.fullBox("dref") { dref in
                dref.append(UInt32(1))
                dref.fullBox("url ", flags: 1) { _ in }  // the media is in this file
            }
        }
    }

    /// The sample table's tail, shared by both tracks: sizes, the one chunk's place.
    private func sizesAndChunk(_ table: inout MP4Bytes, sizes: [UInt32], offset: Int64) {
        table.fullBox("stsc") { box in
            box.append(UInt32(1))
            box.append(UInt32(1))  // from the first chunk on,
            box.append(UInt32(sizes.count))  // that many samples a chunk,
            box.append(UInt32(1))  // described by the first entry
        }
        table.fullBox("stsz") { box in
            box.append(UInt32(0))
            box.append(UInt32(sizes.count))
            for size in sizes { box.append(size) }
        }
        table.fullBox(largeOffsets ? "co64" : "stco") { box in
            box.append(UInt32(1))
            box.append(offset, wide: largeOffsets)
        }
    }

    private func audioTrack(_ moov: inout MP4Bytes, packetSizes: [UInt32], offset: Int64, chapterTrack: Bool) {
        moov.box("trak") { track in
            trackHeader(&track, id: 1, enabled: true, isAudio: true)
            editList(&track, mediaStart: priming)
            if chapterTrack {
                track.box("tref") { references in
                    references.box("chap") { $0.append(UInt32(2)) }
                }
            }
            track.box("mdia") { media in
                mediaHeader(
                    &media,
                    timeScale: sampleRate,
                    duration: packetCount * Self.packetFrames,
                    language: 0x55C4
                )
                handler(&media, type: "soun", name: "SoundHandler")
                media.box("minf") { information in
                    information.fullBox("smhd") { $0.append(UInt32(0)) }  // balance, reserved
                    dataInformation(&information)
                    information.box("stbl") { table in
                        table.fullBox("stsd") { box in
                            box.append(UInt32(1))
                            audioSampleEntry(&box, packetSizes: packetSizes)
                        }
                        table.fullBox("stts") { box in
                            box.append(UInt32(1))
                            box.append(UInt32(packetCount))
                            box.append(UInt32(Self.packetFrames))
                        }
                        sizesAndChunk(&table, sizes: packetSizes, offset: offset)
                        // Every packet's roll distance is −1: it decodes right only after the one
                        // before it (the MDCT's overlap), which a player seeking needs to know.
                        table.fullBox("sgpd", version: 1) { box in
                            box.append(code: "roll")
                            box.append(UInt32(2))  // each entry's length
                            box.append(UInt32(1))
                            box.append(Int16(-1))
                        }
                        table.fullBox("sbgp") { box in
                            box.append(code: "roll")
                            box.append(UInt32(1))
                            box.append(UInt32(packetCount))
                            box.append(UInt32(1))
                        }
                    }
                }
            }
        }
    }

    /// The `mp4a` sample entry and its `esds`: MPEG-4 audio (0x40), an audio stream (0x15), the
    /// largest packet as the buffer's size, the most bits in any second and the average.
    private func audioSampleEntry(_ description: inout MP4Bytes, packetSizes: [UInt32]) {
        let rates = bitRates(packetSizes)
        description.box("mp4a") { entry in
            entry.appendZeros(6)
            entry.append(UInt16(1))  // data reference
            entry.appendZeros(8)  // version, revision, vendor
            entry.append(UInt16(channelCount))
            entry.append(UInt16(16))  // sample size
            entry.append(UInt32(0))  // compression, packet size
            // The rate in 16.16 fixed point, 0 where it does not fit (88.2 and 96 kHz): readers
            // take the rate from the AudioSpecificConfig.
            entry.append(UInt32(sampleRate <= Int(UInt16.max) ? sampleRate << 16 : 0))
            entry.fullBox("esds") { box in
                let specific = 5 + audioSpecificConfig.count
                Self.descriptor(&box, tag: 0x03, length: 3 + 5 + 13 + specific + 5 + 1)
                box.append(UInt16(1))  // the elementary stream's id: the track's
                box.append(UInt8(0))
                Self.descriptor(&box, tag: 0x04, length: 13 + specific)
                box.append(UInt8(0x40))
                box.append(UInt8(0x15))
                let largest = packetSizes.max() ?? 0
                box.append(UInt8(truncatingIfNeeded: largest >> 16))
                box.append(UInt16(truncatingIfNeeded: largest))
                box.append(UInt32(clamping: rates.most))
                box.append(UInt32(clamping: rates.average))
                Self.descriptor(&box, tag: 0x05, length: audioSpecificConfig.count)
                box.append(contentsOf: audioSpecificConfig)
                Self.descriptor(&box, tag: 0x06, length: 1)
                box.append(UInt8(0x02))  // the MP4 file's predefined SL packet header
            }
        }
    }

    /// The average bit rate over the packets, and the most bits in any second of them (a
    /// second's worth of packets, rounded up), at least the average; both in bits a second.
    private func bitRates(_ sizes: [UInt32]) -> (average: Int64, most: Int64) {
        guard !sizes.isEmpty else { return (0, 0) }
        let frames = Int64(sizes.count) * Self.packetFrames
        let total = sizes.reduce(Int64(0)) { $0 + Int64($1) }
        let average = total * 8 * Int64(sampleRate) / frames
        let window = min(sizes.count, (sampleRate + Int(Self.packetFrames) - 1) / Int(Self.packetFrames))
        var sum = sizes[..<window].reduce(Int64(0)) { $0 + Int64($1) }
        var most = sum
        for index in window..<sizes.count {
            sum += Int64(sizes[index]) - Int64(sizes[index - window])
            most = max(most, sum)
        }
        let perSecond = most * 8 * Int64(sampleRate) / (Int64(window) * Self.packetFrames)
        return (average, max(average, perSecond))
    }

    /// An MPEG-4 descriptor's tag and its length in the four-byte form libavformat writes.
    private static func descriptor(_ box: inout MP4Bytes, tag: UInt8, length: Int) {
        precondition(length < 0x80, "every descriptor here is shorter than 128 bytes")
        box.append(contentsOf: [tag, 0x80, 0x80, 0x80, UInt8(length)])
    }

    private func chapterTrack(_ moov: inout MP4Bytes, offset: Int64) {
        let chapters = metadata.chapters
        let samples = chapterSamples
        // Each chapter lasts until the next starts, the last until the end: the samples tile the
        // track, as a text track's must. A sample lasts at most 2³² − 1 units: in frames, unless
        // a chapter is longer than that (12 hours at 96 kHz), then in milliseconds.
        let boundaries = chapters.dropFirst().map(\.startFrame.count)
        let inFrames = zip([0] + boundaries, boundaries + [frameCount]).allSatisfy { $1 - $0 <= Int64(UInt32.max) }
        let timeScale = inFrames ? sampleRate : 1_000
        let scaled = ([0] + boundaries + [frameCount]).map { frame in
            inFrames ? frame : (frame * 1_000 + Int64(sampleRate / 2)) / Int64(sampleRate)
        }
        let durations = zip(scaled, scaled.dropFirst()).map { $1 - $0 }
        moov.box("trak") { track in
            trackHeader(&track, id: 2, enabled: false, isAudio: false)
            editList(&track, mediaStart: 0)
            track.box("mdia") { media in
                // Language code 0 (English), as libavformat marks it in the files whose chapters
                // Apple's players were seen to show: they pick chapters by preferred language.
                mediaHeader(&media, timeScale: timeScale, duration: scaled.last ?? 0, language: 0)
                handler(&media, type: "text", name: "SubtitleHandler")
                media.box("minf") { information in
                    information.box("gmhd") { header in
                        header.fullBox("gmin") { box in
                            box.append(UInt16(0x40))  // graphics mode: copy
                            for _ in 0..<3 { box.append(UInt16(0x8000)) }  // op colour
                            box.append(UInt32(0))  // balance, reserved
                        }
                        header.box("text") { box in
                            for value in Self.identityMatrix { box.append(value) }
                        }
                    }
                    dataInformation(&information)
                    information.box("stbl") { table in
                        table.fullBox("stsd") { box in
                            box.append(UInt32(1))
                            Self.textSampleEntry(&box)
                        }
                        var runs: [(count: UInt32, duration: Int64)] = []
                        for duration in durations {
                            if let last = runs.last, last.duration == duration {
                                runs[runs.count - 1].count += 1
                            } else {
                                runs.append((1, duration))
                            }
                        }
                        table.fullBox("stts") { box in
                            box.append(UInt32(runs.count))
                            for run in runs {
                                box.append(run.count)
                                box.append(UInt32(clamping: run.duration))
                            }
                        }
                        sizesAndChunk(&table, sizes: samples.map { UInt32($0.count) }, offset: offset)
                    }
                }
            }
        }
    }

    /// The chapter track's sample entry: QuickTime's `text` with 3GPP's text sample layout, no
    /// background, no box, one style of font 1, and a table naming font 1 (libavformat's stub).
    private static func textSampleEntry(_ description: inout MP4Bytes) {
        description.box("text") { entry in
            entry.appendZeros(6)
            entry.append(UInt16(1))  // data reference
            entry.append(UInt32(1))  // display flags
            entry.appendZeros(2 + 4 + 8)  // justification, background colour, text box
            entry.appendZeros(4)  // the style's first and last character
            entry.append(UInt16(1))  // its font
            entry.appendZeros(2 + 4)  // style, size, colour
            entry.box("ftab") { table in
                table.append(UInt16(1))
                table.append(UInt16(1))  // font 1,
                table.append(UInt8(0))  // with no name
            }
        }
    }

    // MARK: Tags

    private func userData(_ moov: inout MP4Bytes) {
        moov.box("udta") { data in
            data.fullBox("meta") { meta in
                meta.fullBox("hdlr") { box in
                    box.append(UInt32(0))
                    box.append(code: "mdir")
                    box.append(code: "appl")
                    box.appendZeros(8)
                    box.append(UInt8(0))
                }
                meta.box("ilst") { list in
                    let tags: [(String, String?)] = [
                        ("nam", metadata.title), ("ART", metadata.artist), ("alb", metadata.album),
                        ("too", Self.encodingTool),
                    ]
                    for case (let name, let value?) in tags where !value.isEmpty {
                        list.box(code: [0xA9] + Array(name.utf8)) { Self.textData(&$0, value) }
                    }
                    let gapless = MP4GaplessInfo(priming: priming, padding: 0, frameCount: frameCount)
                    list.append(contentsOf: gapless.atom)
                }
            }
            if !metadata.chapters.isEmpty { neroChapters(&data) }
        }
    }

    /// A tag's `data` box: UTF-8 text (type 1), no locale.
    private static func textData(_ item: inout MP4Bytes, _ text: String) {
        item.box("data") { box in
            box.append(UInt32(1))
            box.append(UInt32(0))
            box.append(contentsOf: text.utf8)
        }
    }

    /// Nero's `chpl`: at most 255 chapters, each its start in 100 ns units and a title of at most
    /// 255 bytes (cut where a character ends).
    private func neroChapters(_ data: inout MP4Bytes) {
        let chapters = metadata.chapters.prefix(255)
        data.fullBox("chpl", version: 1) { box in
            box.append(UInt32(0))
            box.append(UInt8(chapters.count))
            for chapter in chapters {
                let start = chapter.startFrame.count
                let rate = Int64(sampleRate)
                // Whole 100 ns ticks, rounded to nearest, without overflowing for long files.
                box.append(UInt64(start / rate * 10_000_000 + (start % rate * 10_000_000 + rate / 2) / rate))
                let title = Self.prefix(of: chapter.title, maxBytes: 255)
                box.append(UInt8(title.count))
                box.append(contentsOf: title)
            }
        }
    }

    /// `text`'s UTF-8, cut to at most `maxBytes` where a character ends.
    private static func prefix(of text: String, maxBytes: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for character in text {
            let utf8 = Array(String(character).utf8)
            guard bytes.count + utf8.count <= maxBytes else { break }
            bytes += utf8
        }
        return bytes
    }
}
