#pragma once
// Without pkg-config (CLazyLibraries loads the library): cairo.h finds its own headers beside it.
#include <cairo/cairo.h>
