#pragma once
#include <stddef.h>

/// The libraries SessionAudio opens on first use instead of linking: FFmpeg's and cairo's
/// (docs/performance.md, "Pay only for what you use"). Loading libavformat maps libavcodec, every
/// codec it was built with (x264, x265, libvpx, …) and their dependencies; loading cairo maps X11's
/// client libraries and fontconfig. A WAV render uses none of them, so it loads none of them.
typedef enum {
    /// libavutil alone: its FFT (av_tx), for speech alignment.
    LAZY_AVUTIL = 0,
    /// libavformat, and with it libavcodec and libavutil: AAC in MP4 written and read, and the
    /// containers the other decoders cannot read.
    LAZY_AVFORMAT = 1,
    /// libcairo: pictures drawn as PNG.
    LAZY_CAIRO = 2,
} lazy_library;

/// Opens `library` and looks up every function SessionAudio calls in it, once per process (later
/// calls give the first call's result at the cost of one atomic load): 0 when it is ready, or -1
/// with why in `error` (at most `capacity` bytes, ended by a NUL), naming the library and the
/// Debian package that has it.
int lazy_library_load(lazy_library library, char *error, size_t capacity);
