internal import CEbur128
internal import CFFmpeg
internal import CFLAC
internal import CLame
internal import CMPG123
internal import COpus
internal import CSndFile
internal import CSoxr
internal import CVorbis

/// The C libraries SessionAudio links and loads, each with the version it reports at run time:
/// what `render-session --version` lists, so that a bug report says which build of each was used.
package enum LibraryVersions {
    /// `(libsndfile, 1.2.0)`, …, in the order audio passes through them.
    package static var all: [(name: String, version: String)] {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        ebur128_get_version(&major, &minor, &patch)
        // FFmpeg's libraries are opened on first use (LazyLibrary): asking their versions opens them.
        let ffmpeg: (codec: String, format: String)
        do {
            try LazyLibrary.ffmpeg.load(or: .cannotOpen)
            ffmpeg = (version(avcodec_version()), version(avformat_version()))
        } catch {
            ffmpeg = ("not loadable: \(error.reason)", "not loadable")
        }
        return [
            // Debian 12's libmpg123 (1.31) predates mpg123_distversion: its API version is what it tells.
            ("libmpg123", "API \(MPG123_API_VERSION)"),
            ("libsndfile", text(sf_version_string()).replacing("libsndfile-", with: "")),
            ("libsoxr", text(soxr_version()).replacing("libsoxr-", with: "")),
            ("libebur128", "\(major).\(minor).\(patch)"),
            ("LAME", text(get_lame_version())),
            ("libopus", text(opus_get_version_string()).replacing("libopus ", with: "")),
            ("libvorbis", text(vorbis_version_string()).replacing("Xiph.Org libVorbis ", with: "")),
            ("libFLAC", text(flac_version_string())),
            ("libavcodec", ffmpeg.codec),
            ("libavformat", ffmpeg.format),
            ("eSpeak NG", EmbeddedVoice.engineVersion() ?? "not loadable"),
        ]
    }

    /// FFmpeg's `AV_VERSION_INT` (major << 16 | minor << 8 | micro) as `59.37.100`.
    private static func version(_ packed: UInt32) -> String {
        "\(packed >> 16).\((packed >> 8) & 0xFF).\(packed & 0xFF)"
    }

    private static func text(_ pointer: UnsafePointer<CChar>?) -> String {
        pointer.map { String(cString: $0) } ?? "unknown"
    }
}
