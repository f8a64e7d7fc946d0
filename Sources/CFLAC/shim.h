#pragma once
#include <FLAC/metadata.h>

/// libFLAC's sentence for a metadata chain's status: Swift cannot index the C array
/// `FLAC__Metadata_ChainStatusString`, whose size the header leaves open.
static inline const char *cflac_chain_status_string(FLAC__Metadata_ChainStatus status) {
    return FLAC__Metadata_ChainStatusString[status];
}

/// libFLAC's version: a C global Swift 6 will not read outside an isolation domain, returned by a
/// function instead.
static inline const char *flac_version_string(void) { return FLAC__VERSION_STRING; }
