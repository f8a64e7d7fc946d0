internal import CLazyLibraries

/// A library SessionAudio opens on first use instead of linking (CLazyLibraries): FFmpeg's and
/// cairo's. Linked, they made every run of the command map well over a hundred shared libraries
/// (libavcodec's x264, x265, libvpx, librsvg; cairo's X11 and fontconfig): 39 ms and 50 MiB for
/// `--help` alone, against 10 ms and 26 MiB now (docs/performance.md). Opened on first use, only
/// a run that writes or reads MP4, aligns speech or draws a PNG pays for them.
///
/// Each caller loads the library before its first call into it, so that a library that cannot be
/// loaded is an ``AudioError`` naming the Debian package, not the process ending in a forwarder.
enum LazyLibrary {
    /// libavutil alone, for its FFT (``RealFourierTransform``).
    case fourierTransform
    /// libavformat with libavcodec and libavutil.
    case ffmpeg
    /// libcairo (``RasterCanvas``).
    case cairo

    /// Loads the library, once per process (later calls cost one atomic load).
    /// - Throws: ``AudioError`` with `code`, naming `path` (or nothing), the library file and the
    ///   package to install: `cannot load libavformat.so.59 (apt-get install libavformat59): …`.
    func load(or code: AudioError.Code, path: String? = nil) throws(AudioError) {
        let library =
            switch self {
            case .fourierTransform: LAZY_AVUTIL
            case .ffmpeg: LAZY_AVFORMAT
            case .cairo: LAZY_CAIRO
            }
        var error = [CChar](repeating: 0, count: 512)
        guard lazy_library_load(library, &error, error.count) != 0 else { return }
        let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw AudioError(code, path: path, reason: reason)
    }
}
