// Opens FFmpeg's and cairo's libraries on first use (LazyLibraries.h), for the forwarders
// LazySymbols.c generates.

#include "LazyDeclarations.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAZY_TEXT(x) #x
#define LAZY_NUMBER(x) LAZY_TEXT(x)

/// One library: where it is, which Debian package has it, its functions, and how loading went.
typedef struct {
    /// The file name with the ABI version the headers were built against: another major version
    /// lays its structures out differently, so it must not be loaded in its place.
    const char *file;
    const char *package;
    const char *const *names;
    void **pointers;
    pthread_once_t once;
    int loaded;
    char error[512];
} lazy_entry;

static lazy_entry entries[] = {
    [LAZY_AVUTIL] = {
        "libavutil.so." LAZY_NUMBER(LIBAVUTIL_VERSION_MAJOR),
        "libavutil" LAZY_NUMBER(LIBAVUTIL_VERSION_MAJOR),
        lazy_names_avutil, lazy_pointers_avutil, PTHREAD_ONCE_INIT, 0, {0},
    },
    [LAZY_AVFORMAT] = {
        "libavformat.so." LAZY_NUMBER(LIBAVFORMAT_VERSION_MAJOR),
        "libavformat" LAZY_NUMBER(LIBAVFORMAT_VERSION_MAJOR),
        lazy_names_avformat, lazy_pointers_avformat, PTHREAD_ONCE_INIT, 0, {0},
    },
    [LAZY_CAIRO] = {"libcairo.so.2", "libcairo2", lazy_names_cairo, lazy_pointers_cairo, PTHREAD_ONCE_INIT, 0, {0}},
};

/// Opens `entry`'s library (for good: its functions stay valid for the process's life) and
/// looks up each of its functions; on failure, says why in its `error`.
static void load(lazy_entry *entry) {
    void *handle = dlopen(entry->file, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *reason = dlerror();
        snprintf(entry->error, sizeof entry->error, "cannot load %s (apt-get install %s): %s", entry->file,
                 entry->package, reason ? reason : "unknown error");
        return;
    }
    for (int index = 0; entry->names[index]; index++) {
        // dlsym with a handle looks in the library and the ones it depends on (libavformat's
        // libavcodec and libavutil), never in the program itself.
        void *address = dlsym(handle, entry->names[index]);
        if (!address) {
            snprintf(entry->error, sizeof entry->error, "%s has no function %s (install %s of the version built with)",
                     entry->file, entry->names[index], entry->package);
            dlclose(handle);
            return;
        }
        entry->pointers[index] = address;
    }
    entry->loaded = 1;
}

// pthread_once calls a function without arguments: one for each library.
static void load_avutil(void) { load(&entries[LAZY_AVUTIL]); }
static void load_avformat(void) { load(&entries[LAZY_AVFORMAT]); }
static void load_cairo(void) { load(&entries[LAZY_CAIRO]); }
static void (*const loaders[])(void) = {
    [LAZY_AVUTIL] = load_avutil,
    [LAZY_AVFORMAT] = load_avformat,
    [LAZY_CAIRO] = load_cairo,
};

int lazy_library_load(lazy_library library, char *error, size_t capacity) {
    lazy_entry *entry = &entries[library];
    // After the first call this is one atomic load: the forwarders call it on every call.
    pthread_once(&entry->once, loaders[library]);
    if (entry->loaded) return 0;
    if (error && capacity > 0) snprintf(error, capacity, "%s", entry->error);
    return -1;
}

void *lazy_library_symbol(lazy_library library, int index) {
    if (lazy_library_load(library, NULL, 0) != 0) {
        fprintf(stderr, "render-session: %s\n", entries[library].error);
        abort();
    }
    return entries[library].pointers[index];
}
