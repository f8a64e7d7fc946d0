#pragma once
#include <opusenc.h>

/* ope_encoder_ctl is variadic, which Swift cannot call. Every request this package makes takes
   one opus_int32 (the OPUS_SET_… and OPE_SET_… setters) or a pointer to one (the getters). */

static inline int copusenc_set(OggOpusEnc *encoder, int request, opus_int32 value) {
    return ope_encoder_ctl(encoder, request, value);
}

static inline int copusenc_get(OggOpusEnc *encoder, int request, opus_int32 *value) {
    return ope_encoder_ctl(encoder, request, value);
}

/* OPE_SET_PACKET_CALLBACK takes a function and its user data. */
static inline int copusenc_set_packet_callback(OggOpusEnc *encoder, ope_packet_func callback, void *user_data) {
    return ope_encoder_ctl(encoder, OPE_SET_PACKET_CALLBACK_REQUEST, callback, user_data);
}
