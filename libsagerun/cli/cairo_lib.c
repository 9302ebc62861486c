/* cairo_lib.h: libcairo.so.2 and libfontconfig.so.1 loaded on first use. */
#define SR_CAIRO_LOADER
#include "cairo_lib.h"

#include <dlfcn.h>
#include <stdio.h>

sr_cairo_table sr_cairo;
static bool loaded;

/* the sonames of the Debian packages libcairo2 and libfontconfig1 */
static const char *const cairo_soname = "libcairo.so.2", *const fontconfig_soname =
                                                             "libfontconfig.so.1";

bool sr_cairo_loaded(void)
{
    return loaded;
}

/* what to say when drawing cannot start */
static bool cannot_draw(sagerun_error *err, const char *why)
{
    sr_cli_error_set(err, SAGERUN_UNSUPPORTED,
                     "cannot draw: %s (figures need cairo %s or later and fontconfig: apt install "
                     "libcairo2 libfontconfig1; every other command runs without them)",
                     why, CAIRO_VERSION_STRING);
    return false;
}

bool sr_cairo_load(sagerun_error *err)
{
    if (loaded)
        return true;
    void *cairo = dlopen(cairo_soname, RTLD_NOW | RTLD_LOCAL);
    void *fontconfig = cairo ? dlopen(fontconfig_soname, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!cairo || !fontconfig) {
        const char *e = dlerror();
        char why[256]; /* copied: dlclose frees dlerror's string */
        snprintf(why, sizeof why, "%s", e ? e : cairo ? fontconfig_soname : cairo_soname);
        if (cairo)
            dlclose(cairo);
        return cannot_draw(err, why);
    }
    sr_cairo_table t;
    char why[160];
#define SR_CAIRO_RESOLVE(lib, name)                                                                \
    if (!(*(void **)&t.name = dlsym(lib, #name))) {                                                \
        snprintf(why, sizeof why, "%s has no %s", lib##_soname, #name);                            \
        dlclose(fontconfig);                                                                       \
        dlclose(cairo);                                                                            \
        return cannot_draw(err, why);                                                              \
    }
    SR_CAIRO_FUNCTIONS(SR_CAIRO_RESOLVE)
#undef SR_CAIRO_RESOLVE
    sr_cairo = t; /* the libraries stay loaded for the process's life */
    loaded = true;
    return true;
}
