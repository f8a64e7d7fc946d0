#pragma once
// libvorbis's interface is written in libogg's types (ogg_packet, ogg_page), so the two are one
// module: a separate libogg module would give Swift two copies of those types. vorbisenc is
// libvorbis's encoder set-up (qualities and bit rates), a library of its own.
#include <ogg/ogg.h>
#include <vorbis/codec.h>
#include <vorbis/vorbisenc.h>
