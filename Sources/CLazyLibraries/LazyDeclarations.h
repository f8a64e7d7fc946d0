#pragma once
// The headers whose functions LazySymbols.c forwards: the same ones the CFFmpeg and CCairo
// modules import, so that each forwarder is checked against the declaration Swift calls.
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/opt.h>
#include <libavutil/tx.h>
#include <cairo/cairo.h>

#include "LazyLibraries.h"

/// The function `index` of `library`'s table, its library loaded first if it is not yet. A
/// library that cannot be loaded ends the process with why: SessionAudio calls
/// lazy_library_load before a library's first use and reports the error itself, so this happens
/// only if a caller forgot to.
void *lazy_library_symbol(lazy_library library, int index);

/// Each library's function names (ended by a null pointer) and where their addresses go, in
/// LazySymbols.c.
extern const char *const lazy_names_avutil[];
extern const char *const lazy_names_avformat[];
extern const char *const lazy_names_cairo[];
extern void *lazy_pointers_avutil[];
extern void *lazy_pointers_avformat[];
extern void *lazy_pointers_cairo[];
