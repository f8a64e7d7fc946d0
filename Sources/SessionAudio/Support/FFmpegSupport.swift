internal import CFFmpeg

/// What every use of FFmpeg's libraries shares: their log kept quiet, their error codes as words
/// (with the code kept, for an ``AudioError``).
enum FFmpegError {
    /// Loads FFmpeg's libraries (``LazyLibrary/ffmpeg``) and prepares them (``prepared``): the
    /// first step of every use.
    /// - Throws: ``AudioError`` with `code` when the libraries cannot be loaded.
    static func prepare(or code: AudioError.Code, path: String? = nil) throws(AudioError) {
        try LazyLibrary.ffmpeg.load(or: code, path: path)
        prepared
    }

    /// Keeps libavformat's and libavcodec's log off standard error, where it would break the
    /// one-line rule (what goes wrong reaches the user as an ``AudioError`` instead), and caps
    /// their allocations at ``maximumAllocation``. Evaluated once, before the first call into FFmpeg.
    private static let prepared: Void = {
        av_log_set_level(AV_LOG_QUIET)
        av_max_alloc(maximumAllocation)
    }()

    /// The largest single block FFmpeg's libraries may allocate (`av_max_alloc`; FFmpeg's own
    /// default is `INT_MAX`, 2 GiB): what bounds a hostile file's cost where a demuxer believes a
    /// size it reads (a compressed movie's, a sample table's) before it has read that much. The
    /// largest block a render of ours needs is the MP4 muxer's sample table of a 24-hour M4A,
    /// 64 bytes a packet: 260 MB at 48 kHz.
    static let maximumAllocation = 512 << 20

    /// `av_strerror`'s text for `code`, with the code: `Invalid argument (code -22)`; `library`
    /// is the one whose call returned it.
    static func message(_ library: AudioError.Library, _ code: Int32) -> LibraryMessage {
        LibraryMessage("\(words(code)) (code \(code))", library, code)
    }

    /// `av_strerror`'s text for `code` alone: a system error reads as the system says it,
    /// `No space left on device`, as the other writers report it.
    static func text(_ library: AudioError.Library, _ code: Int32) -> LibraryMessage {
        LibraryMessage(words(code), library, code)
    }

    /// The corresponding libavutil call is `av_strerror`.
    private static func words(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        av_strerror(code, &buffer, buffer.count)
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
