#pragma once
#include <opus.h>

/* opus_encoder_ctl is variadic, which Swift cannot call. Every request this package makes takes
   one opus_int32 (the OPUS_SET_… setters) or a pointer to one (the getters). */

static inline int copus_set(OpusEncoder *encoder, int request, opus_int32 value) {
    return opus_encoder_ctl(encoder, request, value);
}

static inline int copus_get(OpusEncoder *encoder, int request, opus_int32 *value) {
    return opus_encoder_ctl(encoder, request, value);
}
