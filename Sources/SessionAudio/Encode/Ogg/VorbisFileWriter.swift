internal import CVorbis
package import SessionTimeline

#if canImport(Glibc)
import Glibc
#endif

/// Writes Ogg Vorbis with libvorbisenc, libvorbis and libogg, so that every decoder (libvorbisfile,
/// libsndfile, ffmpeg) gives back exactly the frames written.
///
/// The exact length comes from the stream's granule positions: at ``close()`` the encoder is told
/// the input has ended (`vorbis_analysis_wrote(0)`), so libvorbis gives the last packet the total
/// frame count as its granule position and marks it end-of-stream, and libogg puts it on the last
/// page. Decoders trim the final block to that position. Nothing here counts blocks or pads.
///
/// Title, album, artist and chapters (`CHAPTER001=HH:MM:SS.mmm`, `CHAPTER001NAME=…`,
/// ``VorbisChapterComments``) go into the comment header as it is made.
///
/// Owns libvorbis's encoder state, libogg's stream state and the file's descriptor; ``close()``
/// finishes and closes the file, and fails unless exactly the promised frames were written.
package final class VorbisFileWriter: AudioFileSink {
    /// oggenc's `-q 3` (libvorbis's nominal 112 kb/s for 44.1 kHz stereo, less for mono and for
    /// lower rates). Speech alone would be clear lower down, but a session also holds gongs, bells
    /// and their long, quiet, reverberant tails, where Vorbis's low qualities are known to smear the
    /// highs and leave pre-echo; 3 is the lowest step generally held to be free of that, and the
    /// file stays a fraction of FLAC's. (Chosen by that reasoning, not by a listening test.)
    package static let defaultQuality = 3.0

    /// Frames handed to libvorbis at a time: its analysis buffer grows to the largest request.
    private static let chunkFrames = 4_096

    /// The file being written.
    package let path: String
    /// Frames written so far.
    package var framesWritten: Frames { Frames(promise.written) }
    /// How the file is encoded: a quality, or a nominal bit rate.
    package let encoding: AudioEncoding

    private let channels: Int
    private var promise: FramePromise
    /// The file's descriptor, −1 once closed.
    private var descriptor: Int32
    /// Writes to ``descriptor``; replaced when the file is opened.
    private var output: DescriptorOutput
    private var bytesAtLastWriteBack: Int64 = 0

    // libvorbis and libogg keep pointers between these (the DSP state to the info, the block to
    // the DSP state), so each lives at an address of its own for the writer's lifetime.
    private let info: UnsafeMutablePointer<vorbis_info>
    private let comment: UnsafeMutablePointer<vorbis_comment>
    private let dsp: UnsafeMutablePointer<vorbis_dsp_state>
    private let block: UnsafeMutablePointer<vorbis_block>
    private let stream: UnsafeMutablePointer<ogg_stream_state>
    /// Which of the states above have been initialized, and so must be cleared.
    private var dspReady = false
    private var blockReady = false
    private var streamReady = false
    /// Set once the end of the input has been given to libvorbis, or a write failed: nothing more goes in.
    private var finished = false

    /// Creates `path` (replacing any file there) for exactly `frameCount` frames at
    /// `settings.quality` (oggenc's `-q`, −1 … 10, default ``defaultQuality``) or a nominal
    /// `settings.bitrate` in kb/s, with `metadata`'s tags and chapters, and writes the three
    /// Vorbis headers.
    ///
    /// The corresponding libvorbis calls are `vorbis_encode_init_vbr` (quality / 10) or
    /// `vorbis_encode_init` (a nominal bit rate, no minimum or maximum), `vorbis_comment_add_tag`,
    /// `vorbis_analysis_init`, `vorbis_block_init` and `vorbis_analysis_headerout`; libogg's are
    /// `ogg_stream_init`, `ogg_stream_packetin` and `ogg_stream_flush`.
    ///
    /// - Throws: ``AudioError`` with code `unsupportedFormat` when the settings are not Vorbis's or
    ///   libvorbisenc has no mode for them (a bit rate out of reach at this rate and channel count),
    ///   `cannotWrite` when the file cannot be created or written, `cannotEncode` when libvorbis fails.
    package init(
        path: String,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        settings: EncoderSettings,
        metadata: AudioMetadata,
        frameCount: Frames,
        reusing _: SpanReuse? = nil
    ) throws(AudioError) {
        guard settings.format == .vorbis else {
            throw AudioError(.unsupportedFormat, path: path, reason: "\(settings.format) is written by its own writer")
        }
        self.path = path
        self.channels = channelCount.count
        self.promise = FramePromise(path: path, frameCount: frameCount.count, wording: .vorbisFile)
        encoding =
            if let bitrate = settings.bitrate {
                AudioEncoding(container: "ogg", codec: "vorbis", bitrate: bitrate)
            } else {
                AudioEncoding(container: "ogg", codec: "vorbis", quality: settings.quality ?? Self.defaultQuality)
            }
        descriptor = -1
        output = DescriptorOutput(descriptor: -1)
        info = .allocate(capacity: 1)
        comment = .allocate(capacity: 1)
        dsp = .allocate(capacity: 1)
        block = .allocate(capacity: 1)
        stream = .allocate(capacity: 1)
        info.initialize(to: vorbis_info())
        comment.initialize(to: vorbis_comment())
        dsp.initialize(to: vorbis_dsp_state())
        block.initialize(to: vorbis_block())
        stream.initialize(to: ogg_stream_state())
        vorbis_info_init(info)
        vorbis_comment_init(comment)
        // From here on the writer is whole: a throw runs deinit, which clears what was set up.
        let result =
            if let bitrate = settings.bitrate {
                vorbis_encode_init(info, channelCount.count, sampleRate.hertz, -1, bitrate * 1_000, -1)
            } else {
                vorbis_encode_init_vbr(info, channelCount.count, sampleRate.hertz, Float((encoding.quality ?? 0) / 10))
            }
        guard result == 0 else {
            let asked = settings.bitrate.map { "a nominal \($0) kb/s" } ?? "quality \(encoding.quality ?? 0)"
            throw AudioError(.unsupportedFormat, path: path, Self.describe(result)) {
                "libvorbis cannot encode \(sampleRate.hertz) Hz, \(channelCount.count) channels at \(asked): \($0)"
            }
        }
        let tags = [("TITLE", metadata.title), ("ALBUM", metadata.album), ("ARTIST", metadata.artist)]
        var comments = tags.compactMap { field, value in value.flatMap { $0.isEmpty ? nil : (field, $0) } }
        for (index, chapter) in metadata.chapters.enumerated() {
            comments += VorbisChapterComments.entries(index + 1, chapter, sampleRate: sampleRate)
        }
        for (field, value) in comments { vorbis_comment_add_tag(comment, field, value) }

        try check(vorbis_analysis_init(dsp, info), "vorbis_analysis_init")
        dspReady = true
        try check(vorbis_block_init(dsp, block), "vorbis_block_init")
        blockReady = true
        // Any serial number will do for a file of one stream; a fixed one keeps the output reproducible.
        let initialized = ogg_stream_init(stream, 0x5345_5353)
        guard initialized == 0 else {
            throw encodingFailure(
                "libogg: ogg_stream_init failed",
                libraryCode: AudioError.LibraryCode(.libogg, initialized)
            )
        }
        streamReady = true

        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(errno)))
        }
        self.descriptor = descriptor
        output = DescriptorOutput(descriptor: descriptor)
        try writeHeaders()
    }

    deinit {
        if streamReady { ogg_stream_clear(stream) }
        if blockReady { vorbis_block_clear(block) }
        if dspReady { vorbis_dsp_clear(dsp) }
        vorbis_comment_clear(comment)
        vorbis_info_clear(info)
        for pointer in [UnsafeMutableRawPointer(info), .init(comment), .init(dsp), .init(block), .init(stream)] {
            pointer.deallocate()
        }
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// Writes the identification header alone on the first page, as the Ogg Vorbis spec requires,
    /// then the comment and setup headers on pages of their own, so audio starts on a fresh page.
    /// The corresponding calls are `vorbis_analysis_headerout`, `ogg_stream_packetin` and `ogg_stream_flush`.
    private func writeHeaders() throws(AudioError) {
        var identification = ogg_packet()
        var comments = ogg_packet()
        var setup = ogg_packet()
        try check(
            vorbis_analysis_headerout(dsp, comment, &identification, &comments, &setup),
            "vorbis_analysis_headerout"
        )
        try packetIn(&identification)
        try flushPages()
        try packetIn(&comments)
        try packetIn(&setup)
        try flushPages()
    }

    /// Writes the first `frames` frames of interleaved `samples`, floats in −1 … 1.
    /// The corresponding libvorbis calls are `vorbis_analysis_buffer` and `vorbis_analysis_wrote`.
    package func write(_ samples: [Float], frames: Int) throws(AudioError) {
        precondition(
            samples.count >= frames * channels,
            "write(_:frames:) was given fewer samples than frames × channels"
        )
        try checkRoom(for: Int64(frames))
        let channels = self.channels
        var done = 0
        while done < frames {
            let chunk = min(frames - done, Self.chunkFrames)
            try analyze(frames: chunk) { planes in
                samples.withUnsafeBufferPointer { source in
                    for channel in 0..<channels {
                        let plane = planes[channel]!
                        var index = done * channels + channel
                        for frame in 0..<chunk {
                            plane[frame] = source[index]
                            index += channels
                        }
                    }
                }
            }
            done += chunk
        }
    }

    /// Writes `frames` frames of digital silence. Stops early, between blocks, if the task is cancelled.
    package func writeSilence(frames: Frames) throws(AudioError) {
        try checkRoom(for: frames.count)
        let channels = self.channels
        var remaining = frames.count
        while remaining > 0, !Task.isCancelled {
            let chunk = Int(min(remaining, Int64(Self.chunkFrames)))
            try analyze(frames: chunk) { planes in
                for channel in 0..<channels { planes[channel]!.update(repeating: 0, count: chunk) }
            }
            remaining -= Int64(chunk)
        }
    }

    /// Ends the stream, writes its last pages, flushes the file to disk and closes it.
    ///
    /// Fails unless exactly the promised frames were written. The corresponding calls are
    /// libvorbis's `vorbis_analysis_wrote` with 0, `fsync` and `close`.
    @discardableResult
    package func close() throws(AudioError) -> AudioEncoding {
        guard descriptor >= 0 else { return encoding }
        do {
            try promise.checkKept()
        } catch {
            closeDescriptor()
            throw error
        }
        do throws(AudioError) {
            guard !finished else { throw AudioError(.cannotWrite, path: path, reason: "an earlier write failed") }
            finished = true
            try check(vorbis_analysis_wrote(dsp, 0), "vorbis_analysis_wrote")
            try drain()
            try flushPages()
        } catch {
            closeDescriptor()
            throw error
        }
        let synced = fsync(descriptor) == 0
        let reason = String(cString: strerror(errno))
        let closed = Glibc.close(descriptor) == 0
        descriptor = -1
        guard synced, closed else {
            throw AudioError(
                .cannotWrite,
                path: path,
                reason: synced ? String(cString: strerror(errno)) : reason
            )
        }
        return encoding
    }

    private func closeDescriptor() {
        finished = true
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Fails when the file is closed, or when `frames` more frames would pass the promised count.
    private func checkRoom(for frames: Int64) throws(AudioError) {
        guard descriptor >= 0, !finished else {
            throw AudioError(.cannotWrite, path: path, reason: "the file is already closed")
        }
        try promise.checkRoom(for: frames)
    }

    /// Has `fill` put `frames` frames into libvorbis's analysis buffer, one plane per channel, and
    /// encodes what that completes.
    private func analyze(
        frames: Int,
        _ fill: (UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) -> Void
    ) throws(AudioError) {
        guard frames > 0 else { return }
        guard let planes = vorbis_analysis_buffer(dsp, Int32(frames)) else {
            throw encodingFailure("libvorbis: vorbis_analysis_buffer failed")
        }
        fill(planes)
        try check(vorbis_analysis_wrote(dsp, Int32(frames)), "vorbis_analysis_wrote")
        promise.record(Int64(frames))
        try drain()
    }

    /// Encodes every block libvorbis has ready and writes every page that fills.
    /// The corresponding calls are `vorbis_analysis_blockout`, `vorbis_analysis`,
    /// `vorbis_bitrate_addblock`, `vorbis_bitrate_flushpacket` and `ogg_stream_pageout`.
    private var audioPacketCount = 0

    private func drain() throws(AudioError) {
        while true {
            let ready = vorbis_analysis_blockout(dsp, block)
            guard ready == 1 else {
                try check(ready, "vorbis_analysis_blockout")
                return
            }
            try check(vorbis_analysis(block, nil), "vorbis_analysis")
            try check(vorbis_bitrate_addblock(block), "vorbis_bitrate_addblock")
            var packet = ogg_packet()
            while true {
                let flushed = vorbis_bitrate_flushpacket(dsp, &packet)
                guard flushed == 1 else {
                    try check(flushed, "vorbis_bitrate_flushpacket")
                    break
                }
                try packetIn(&packet)
                audioPacketCount += 1
                var page = ogg_page()
                if audioPacketCount == 2, packet.e_o_s == 0 {
                    // The first audio page ends here: ffmpeg 5.1 trims the end only on a last
                    // page that is not also the first, so a short file would decode long.
                    try flushPages()
                }
                while ogg_stream_pageout(stream, &page) != 0 { try writePage(&page) }
            }
        }
    }

    /// The corresponding libogg call is `ogg_stream_packetin`.
    private func packetIn(_ packet: inout ogg_packet) throws(AudioError) {
        let added = ogg_stream_packetin(stream, &packet)
        guard added == 0 else {
            throw encodingFailure(
                "libogg: ogg_stream_packetin failed",
                libraryCode: AudioError.LibraryCode(.libogg, added)
            )
        }
    }

    /// Writes out every packet libogg holds, on as many pages as they take.
    /// The corresponding libogg call is `ogg_stream_flush`.
    private func flushPages() throws(AudioError) {
        var page = ogg_page()
        while ogg_stream_flush(stream, &page) != 0 { try writePage(&page) }
    }

    /// Writes a page's header and body; every 4 MiB, starts the kernel writing them to disk.
    private func writePage(_ page: inout ogg_page) throws(AudioError) {
        let parts = [
            UnsafeRawBufferPointer(start: page.header, count: page.header_len),
            UnsafeRawBufferPointer(start: page.body, count: page.body_len),
        ]
        for part in parts where !output.write(part) {
            finished = true
            throw AudioError(.cannotWrite, path: path, reason: output.failure ?? "the write failed")
        }
        if output.byteCount - bytesAtLastWriteBack >= 4 << 20 {
            bytesAtLastWriteBack = output.byteCount
            WriteBack.start(descriptor)
        }
    }

    /// Fails with libvorbis's meaning of `result` when it is negative.
    private func check(_ result: Int32, _ call: String) throws(AudioError) {
        guard result < 0 else { return }
        let message = Self.describe(result)
        throw encodingFailure("libvorbis: \(call): \(message.text)", libraryCode: message.code)
    }

    private func encodingFailure(_ reason: String, libraryCode: AudioError.LibraryCode? = nil) -> AudioError {
        finished = true
        return AudioError(.cannotEncode, path: path, reason: reason, libraryCode: libraryCode)
    }

    /// libvorbis's error codes (`OV_E…` in codec.h) as phrases; libvorbis has no strerror of its own.
    private static func describe(_ code: Int32) -> LibraryMessage {
        let meaning =
            switch code {
            case OV_EFAULT: "internal fault"
            case OV_EIMPL: "no encoding mode for this request"
            case OV_EINVAL: "invalid argument"
            default: "error"
            }
        return LibraryMessage("\(meaning) (code \(code))", .libvorbis, code)
    }
}
