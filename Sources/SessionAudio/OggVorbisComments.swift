internal import CVorbis

#if canImport(Glibc)
import Glibc
#endif

/// Adds Vorbis comments to a finished Ogg Vorbis file by rewriting its comment header with libogg
/// and libvorbis.
///
/// libsndfile writes only the comments it has names for (title, artist, album, …), and chapters
/// need names of their own (`CHAPTER001`, `CHAPTER001NAME`). The comment header is the stream's
/// second packet: the file is copied page by page to a temporary file beside it, the header pages
/// rebuilt with the longer comment packet, and every audio page after them copied as it is but for
/// its sequence number and CRC (the header may now take another number of pages). Granule
/// positions, and so the exact length, are untouched; nothing is decoded or encoded again. The copy
/// then replaces the file.
enum OggVorbisComments {
    /// Appends `comments` (field, value) to the comment header of the Ogg Vorbis file at `path`.
    ///
    /// The corresponding libogg and libvorbis calls are `ogg_sync_pageout`, `ogg_stream_packetout`,
    /// `vorbis_synthesis_headerin`, `vorbis_comment_add_tag`, `vorbis_commentheader_out`,
    /// `ogg_stream_flush` and `ogg_page_checksum_set`.
    static func append(_ comments: [(String, String)], to path: String) throws(AudioError) {
        guard !comments.isEmpty else { return }
        let input = open(path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(errno))) }
        defer { Glibc.close(input) }
        let temporaryPath = path + ".comments"
        let output = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard output >= 0 else {
            throw AudioError(.cannotWrite, path: temporaryPath, reason: String(cString: strerror(errno)))
        }
        let rewriter = Rewriter(path: path, output: output, comments: comments)
        do {
            try rewriter.copy(from: input)
        } catch {
            Glibc.close(output)
            unlink(temporaryPath)
            throw error
        }
        guard fsync(output) == 0, Glibc.close(output) == 0, rename(temporaryPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw AudioError(.cannotWrite, path: path, reason: "cannot replace it with its rewritten copy: \(reason)")
        }
    }

    /// The page-by-page copy: owns libogg's sync and stream states.
    private final class Rewriter {
        let path: String
        let output: Int32
        let comments: [(String, String)]
        private var sync = ogg_sync_state()
        private var stream = ogg_stream_state()
        private var streamStarted = false
        /// The three header packets' bytes, as they are read.
        private var headers: [[UInt8]] = []
        /// Header pages read and written: audio page `n` of the input becomes `n − read + written`.
        private var headerPagesRead = 0
        private var headerPagesWritten = 0

        init(path: String, output: Int32, comments: [(String, String)]) {
            self.path = path
            self.output = output
            self.comments = comments
            ogg_sync_init(&sync)
        }

        deinit {
            ogg_sync_clear(&sync)
            if streamStarted { ogg_stream_clear(&stream) }
        }

        private func failure(_ reason: String) -> AudioError {
            AudioError(.cannotWrite, path: path, reason: "cannot add the chapter comments: \(reason)")
        }

        func copy(from input: Int32) throws(AudioError) {
            var page = ogg_page()
            while true {
                guard let buffer = ogg_sync_buffer(&sync, 65_536) else { throw failure("libogg: out of memory") }
                let count = read(input, buffer, 65_536)
                guard count >= 0 else { throw failure(String(cString: strerror(errno))) }
                if count == 0 { break }
                ogg_sync_wrote(&sync, count)
                while ogg_sync_pageout(&sync, &page) == 1 {
                    if headers.count < 3 {
                        try readHeader(&page)
                    } else {
                        try copyAudio(&page)
                    }
                }
            }
            guard headers.count == 3 else { throw failure("the file ends inside its Vorbis headers") }
        }

        /// Takes in a header page; once the third header is in, writes the new header pages.
        private func readHeader(_ page: inout ogg_page) throws(AudioError) {
            if !streamStarted {
                ogg_stream_init(&stream, ogg_page_serialno(&page))
                streamStarted = true
            }
            guard ogg_stream_pagein(&stream, &page) == 0 else { throw failure("libogg refused a header page") }
            headerPagesRead += 1
            var packet = ogg_packet()
            while headers.count < 3, ogg_stream_packetout(&stream, &packet) == 1 {
                headers.append(Array(UnsafeRawBufferPointer(start: packet.packet, count: packet.bytes)))
            }
            guard headers.count == 3 else { return }
            guard ogg_stream_packetout(&stream, &packet) == 0 else {
                throw failure("an audio packet shares a page with the Vorbis headers")
            }
            try writeHeaders(serial: ogg_page_serialno(&page))
        }

        /// Writes the identification, new comment and setup headers as libvorbis's examples do:
        /// the first alone on the first page, the other two flushed onto pages of their own.
        private func writeHeaders(serial: Int32) throws(AudioError) {
            var info = vorbis_info()
            var comment = vorbis_comment()
            vorbis_info_init(&info)
            vorbis_comment_init(&comment)
            defer {
                vorbis_comment_clear(&comment)
                vorbis_info_clear(&info)
            }
            for (index, bytes) in headers.enumerated() {
                var bytes = bytes
                let result = bytes.withUnsafeMutableBufferPointer { buffer in
                    var packet = ogg_packet(
                        packet: buffer.baseAddress,
                        bytes: buffer.count,
                        b_o_s: index == 0 ? 1 : 0,
                        e_o_s: 0,
                        granulepos: 0,
                        packetno: Int64(index)
                    )
                    return vorbis_synthesis_headerin(&info, &comment, &packet)
                }
                guard result == 0 else { throw failure("header \(index + 1) is not a Vorbis header (code \(result))") }
            }
            for (field, value) in comments { vorbis_comment_add_tag(&comment, field, value) }
            var commentPacket = ogg_packet()
            guard vorbis_commentheader_out(&comment, &commentPacket) == 0 else {
                throw failure("libvorbis cannot make the comment header")
            }
            defer { ogg_packet_clear(&commentPacket) }
            var out = ogg_stream_state()
            ogg_stream_init(&out, serial)
            defer { ogg_stream_clear(&out) }
            var identification = headers[0]
            var setup = headers[2]
            var page = ogg_page()
            identification.withUnsafeMutableBufferPointer { buffer in
                var packet = ogg_packet(
                    packet: buffer.baseAddress,
                    bytes: buffer.count,
                    b_o_s: 1,
                    e_o_s: 0,
                    granulepos: 0,
                    packetno: 0
                )
                _ = ogg_stream_packetin(&out, &packet)
            }
            while ogg_stream_flush(&out, &page) != 0 { try write(&page) }
            commentPacket.packetno = 1
            _ = ogg_stream_packetin(&out, &commentPacket)
            setup.withUnsafeMutableBufferPointer { buffer in
                var packet = ogg_packet(
                    packet: buffer.baseAddress,
                    bytes: buffer.count,
                    b_o_s: 0,
                    e_o_s: 0,
                    granulepos: 0,
                    packetno: 2
                )
                _ = ogg_stream_packetin(&out, &packet)
            }
            while ogg_stream_flush(&out, &page) != 0 { try write(&page) }
        }

        /// Copies an audio page under its new sequence number.
        private func copyAudio(_ page: inout ogg_page) throws(AudioError) {
            if headerPagesRead != headerPagesWritten {
                let number = UInt32(truncatingIfNeeded: ogg_page_pageno(&page) - headerPagesRead + headerPagesWritten)
                for index in 0..<4 { page.header[18 + index] = UInt8(truncatingIfNeeded: number >> (8 * index)) }
                ogg_page_checksum_set(&page)
            }
            try write(&page, counted: false)
        }

        private func write(_ page: inout ogg_page, counted: Bool = true) throws(AudioError) {
            if counted { headerPagesWritten += 1 }
            for (start, count) in [
                (UnsafeRawPointer(page.header), page.header_len), (UnsafeRawPointer(page.body), page.body_len),
            ] {
                var done = 0
                while done < count {
                    let written = Glibc.write(output, start! + done, count - done)
                    if written < 0, errno == EINTR { continue }
                    guard written > 0 else { throw failure(String(cString: strerror(errno))) }
                    done += written
                }
            }
        }
    }
}
