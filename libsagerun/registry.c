/* Plugin discovery: find plugin files, load them, negotiate the ABI, keep every rejection. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>

#include "internal.h"
#include "plugin_load.h"
#include "safe_io.h"
#include "script_bridge.h"

typedef struct sr_variant {
    const sagerun_variant_descriptor *desc;
    char *label; /* the name it is found by: desc->name, or name[k=v,...] when bound */
    double values[SAGERUN_PLUGIN_MAX_PARAMS]; /* its parameters' values (defaults unless bound) */
    char *path;
    char sha256[65];
    void *handle; /* dlopen handle, never closed */
    char *extension; /* a script variant's extension module, or NULL */
    char extension_sha256[65];
} sr_variant;

typedef struct sr_rejected {
    char *path;
    char *reason;
} sr_rejected;

typedef struct sr_remembered { /* a verdict the scan cache does not keep, for this registry */
    char *real, sha256[65];
    sr_plugin_verdict v;
} sr_remembered;

typedef struct sr_pin {
    char name[64];
    char sha256[65];
} sr_pin;

struct sagerun_registry {
    sagerun_context *ctx;
    bool allow_unsafe; /* load files writable by others than their owner and root */
    sr_plugin_cache *cache; /* the scanner's verdicts, opened on first use */
    bool cache_opened;
    sr_pin *pins; /* sha256 expected per variant name, checked before any of a file's code runs */
    size_t n_pins;
    sagerun_context *own_ctx; /* a host context made when none was given */
    sr_variant *variants;
    size_t n_variants, cap_variants;
    sr_rejected *rejected;
    size_t n_rejected, cap_rejected;
    /* What is examined once per registry: folders by real path (a plugin path listing one
     * folder 8000 times scanned it 8000 times), and files whose verdict the cache does not keep
     * (a scan that timed out: one hung file, met again, cost its timeout each time). */
    char **folders;
    size_t n_folders;
    sr_remembered *remembered;
    size_t n_remembered;
};

/* Whether real is in list (n entries); else added (false also when memory runs out). */
static bool seen_before(char ***list, size_t *n, const char *real)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*list)[i], real) == 0)
            return true;
    char **grown = realloc(*list, (*n + 1) * sizeof **list), *copy = strdup(real);
    if (grown)
        *list = grown;
    if (grown && copy)
        grown[(*n)++] = copy;
    else
        free(copy);
    return false;
}

sagerun_status sagerun_registry_create(sagerun_context *ctx, sagerun_registry **out,
                                       sagerun_error *err)
{
    if (!out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "registry_create: out is NULL");
    *out = NULL;
    sagerun_registry *reg = calloc(1, sizeof *reg);
    if (!reg)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory creating a registry");
    if (!ctx) {
        sagerun_status st = sagerun_context_create(SAGERUN_BACKEND_HOST, 0, &reg->own_ctx, err);
        if (st != SAGERUN_OK) {
            free(reg);
            return st;
        }
        ctx = reg->own_ctx;
    }
    reg->ctx = ctx;
    *out = reg;
    return SAGERUN_OK;
}

void sagerun_registry_destroy(sagerun_registry *reg)
{
    if (!reg)
        return;
    /* Plugins stay loaded: instances made from them may outlive the registry's bookkeeping only
     * in a buggy caller, and unloading code that might still run is worse than a small leak. */
    for (size_t i = 0; i < reg->n_variants; i++) {
        free(reg->variants[i].path);
        free(reg->variants[i].label);
        free(reg->variants[i].extension);
    }
    for (size_t i = 0; i < reg->n_rejected; i++) {
        free(reg->rejected[i].path);
        free(reg->rejected[i].reason);
    }
    free(reg->variants);
    free(reg->rejected);
    free(reg->pins);
    for (size_t i = 0; i < reg->n_folders; i++)
        free(reg->folders[i]);
    free(reg->folders);
    for (size_t i = 0; i < reg->n_remembered; i++)
        free(reg->remembered[i].real);
    free(reg->remembered);
    sr_plugin_cache_close(reg->cache);
    sagerun_context_destroy(reg->own_ctx);
    free(reg);
}

static sagerun_status reject(sagerun_registry *reg, const char *path, sagerun_error *err,
                             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static sagerun_status reject(sagerun_registry *reg, const char *path, sagerun_error *err,
                             const char *fmt, ...)
{
    char reason[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    if (reg->n_rejected == reg->cap_rejected) {
        size_t cap = reg->cap_rejected ? 2 * reg->cap_rejected : 8;
        sr_rejected *r = realloc(reg->rejected, cap * sizeof *r);
        if (!r)
            return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
        reg->rejected = r;
        reg->cap_rejected = cap;
    }
    sr_rejected *r = &reg->rejected[reg->n_rejected];
    r->path = strdup(path);
    /* escaped once, here: a reason carries a plugin's own bytes (its refusal, a rejected name) */
    r->reason = sagerun_text_escape(reason, 0);
    if (!r->path || !r->reason) {
        free(r->path);
        free(r->reason);
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    }
    reg->n_rejected++;
    const char *debug = getenv("SAGERUN_DEBUG");
    if (debug && *debug)
        fprintf(stderr, "sagerun: rejected %s: %s\n", path, r->reason);
    return SAGERUN_OK;
}

/* What a variant was loaded from: its file (plugin or script) and, for a script variant, the
 * extension module it names. */
typedef struct sr_origin {
    const char *path;
    const char *sha256;
    void *handle;
    const char *extension, *extension_sha256; /* NULL, NULL for plugins */
} sr_origin;

/* Adds a variant under `label` with these parameter values (NULL: the defaults). */
static sagerun_status add_variant(sagerun_registry *reg, const sr_origin *from,
                                  const sagerun_variant_descriptor *d, const char *label,
                                  const double *values, sagerun_error *err)
{
    if (reg->n_variants == reg->cap_variants) {
        size_t cap = reg->cap_variants ? 2 * reg->cap_variants : 8;
        sr_variant *v = realloc(reg->variants, cap * sizeof *v);
        if (!v)
            return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
        reg->variants = v;
        reg->cap_variants = cap;
    }
    sr_variant v = {.desc = d, .path = strdup(from->path), .label = strdup(label),
                    .handle = from->handle,
                    .extension = from->extension ? strdup(from->extension) : NULL};
    if (!v.path || !v.label || (from->extension && !v.extension)) {
        free(v.path);
        free(v.label);
        free(v.extension);
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    }
    snprintf(v.sha256, sizeof v.sha256, "%s", from->sha256);
    snprintf(v.extension_sha256, sizeof v.extension_sha256, "%s",
             from->extension_sha256 ? from->extension_sha256 : "");
    for (uint32_t k = 0; k < sr_descriptor_param_count(d); k++)
        v.values[k] = values ? values[k] : d->params[k].default_value;
    /* Loaded variants stay sorted by name (insertion sort: plugin counts are small); bound ones
     * are appended, so that binding never moves an index already handed out. */
    size_t at = reg->n_variants;
    while (!values && at > 0 && strcmp(reg->variants[at - 1].label, label) > 0)
        at--;
    memmove(&reg->variants[at + 1], &reg->variants[at], (reg->n_variants - at) * sizeof v);
    reg->variants[at] = v;
    reg->n_variants++;
    return SAGERUN_OK;
}

static const sr_pin *pin_of(const sagerun_registry *reg, const char *name)
{
    for (size_t i = 0; i < reg->n_pins; i++)
        if (strcmp(reg->pins[i].name, name) == 0)
            return &reg->pins[i];
    return NULL;
}

/* Writes why the file of this hash may not be variant `name`, or returns false. */
static bool pin_violated(const sagerun_registry *reg, const char *name, const char *path,
                         const char sha256[65], char *buf, size_t len)
{
    const sr_pin *pin = pin_of(reg, name);
    if (!pin || strcasecmp(pin->sha256, sha256) == 0)
        return false;
    snprintf(buf, len, "pinned plugin %s: %s has SHA-256 %s, expected %s (not loaded)", name, path,
             sha256, pin->sha256);
    return true;
}

/* The variant name a file may be, before any of its code ran: the file name by convention
 * (NAME.so), the cached verdict's name otherwise. */
static bool pin_violated_before_running(const sagerun_registry *reg, const char *path,
                                        const char sha256[65], char *buf, size_t len)
{
    const char *base = strrchr(path, '/');
    char name[64];
    snprintf(name, sizeof name, "%s", base ? base + 1 : path);
    size_t n = strlen(name);
    if (n > 3 && (strcmp(name + n - 3, ".so") == 0 || strcmp(name + n - 3, ".py") == 0))
        name[n - 3] = '\0';
    return pin_violated(reg, name, path, sha256, buf, len);
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The scanner's verdict on the file, from the cache or from a scan (then cached). */
/* A transient verdict (not cached: a timeout) kept for the registry's life: a file that hung is
 * examined once per registry, not once per time it is met. */
static void remember(sagerun_registry *reg, const char *real, const char sha256[65],
                     const sr_plugin_verdict *v)
{
    sr_remembered *grown = realloc(reg->remembered, (reg->n_remembered + 1) * sizeof *grown);
    if (!grown)
        return;
    reg->remembered = grown;
    sr_remembered *r = &grown[reg->n_remembered];
    if (!(r->real = strdup(real)))
        return;
    snprintf(r->sha256, sizeof r->sha256, "%s", sha256);
    r->v = *v;
    reg->n_remembered++;
}

static void examine(sagerun_registry *reg, const char *real, const char sha256[65],
                    sr_plugin_verdict *v)
{
    for (size_t i = 0; i < reg->n_remembered; i++)
        if (strcmp(reg->remembered[i].real, real) == 0 &&
            strcmp(reg->remembered[i].sha256, sha256) == 0) {
            *v = reg->remembered[i].v;
            return;
        }
    if (!reg->cache_opened) {
        reg->cache = sr_plugin_cache_open();
        reg->cache_opened = true;
    }
    if (sr_plugin_cache_lookup(reg->cache, real, sha256, v))
        return;
    sr_plugin_scan(real, &reg->ctx->services, sr_plugin_scan_timeout(), v);
    sr_plugin_cache_store(reg->cache, real, sha256, v);
    if (v->transient)
        remember(reg, real, sha256, v);
}

/* One variant of an approved file: refused alone (a duplicate, a pin, the device). */
static sagerun_status load_descriptor(sagerun_registry *reg, const sr_origin *from,
                                      const sagerun_variant_descriptor *d, sagerun_error *err)
{
    char buf[SR_PLUGIN_REASON_MAX];
    const char *path = from->path, *sha256 = from->sha256;
    long dup = sagerun_registry_find(reg, d->name);
    if (dup >= 0)
        return reject(reg, path, err, "duplicate variant name \"%s\" (already loaded from %s)",
                      d->name, reg->variants[dup].path);
    if (pin_violated(reg, d->name, path, sha256, buf, sizeof buf))
        return reject(reg, path, err, "%s", buf);
    if (reg->ctx->backend == SAGERUN_BACKEND_CUDA && d->backend == SAGERUN_BACKEND_CUDA &&
        d->min_compute_capability > reg->ctx->compute_capability)
        return reject(reg, path, err,
                      "needs a newer GPU: variant %s needs compute capability %d.%d, the device "
                      "has %d.%d",
                      d->name, d->min_compute_capability / 10, d->min_compute_capability % 10,
                      reg->ctx->compute_capability / 10, reg->ctx->compute_capability % 10);
    return add_variant(reg, from, d, d->name, NULL, err);
}

/* After the scanner's approval, in this process: what only the registry knows (duplicates, the
 * device) and the file's own checks again (it was examined as it is, but runs here anew). */
static sagerun_status load_approved(sagerun_registry *reg, const char *path,
                                    const char sha256[65], sagerun_error *err)
{
    char buf[SR_PLUGIN_REASON_MAX];
    void *handle;
    const sagerun_variant_descriptor *descs[SR_PLUGIN_MAX_VARIANTS];
    size_t n = 0;
    int saved = sr_stdout_divert();
    bool opened = sr_plugin_open(path, &reg->ctx->services, &handle, descs, &n, buf, sizeof buf);
    sr_stdout_restore(saved);
    if (!opened)
        return reject(reg, path, err, "%s", buf);
    sagerun_status st = SAGERUN_OK;
    const sr_origin from = {.path = path, .sha256 = sha256, .handle = handle};
    for (size_t i = 0; i < n && st == SAGERUN_OK; i++)
        st = load_descriptor(reg, &from, descs[i], err);
    return st;
}

/* One variant a script declares; its extension module, when it names one, is hashed as the
 * script is (the report names both). */
static sagerun_status load_script_variant(sagerun_registry *reg, const char *path,
                                          const char sha256[65], const sr_script_variant *sv,
                                          sagerun_error *err)
{
    char ext_sha[65] = "";
    sagerun_error e = {0};
    if (sv->extension && sagerun_file_sha256(sv->extension, ext_sha, &e) != SAGERUN_OK)
        return reject(reg, path, err, "variant %s: its extension module: %s", sv->desc->name,
                      e.message);
    const sr_origin from = {.path = path, .sha256 = sha256, .extension = sv->extension,
                            .extension_sha256 = sv->extension ? ext_sha : NULL};
    return load_descriptor(reg, &from, sv->desc, err);
}

/* A script (NAME.py): the Python bridge reads its declarations; each one it refuses is a
 * rejection of the file, each usable one a variant whose file is the script. In a folder, a .py
 * file that declares no variant is a module variant files import: passed over, not rejected. */
static sagerun_status load_script(sagerun_registry *reg, const char *path, const char sha256[65],
                                  bool in_folder, sagerun_error *err)
{
    char buf[SR_PLUGIN_REASON_MAX];
    sr_script_answer *a = malloc(sizeof *a);
    if (!a)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    int saved = sr_stdout_divert();
    int rc = sr_script_open(path, &reg->ctx->services, reg->allow_unsafe, a, buf, sizeof buf);
    sr_stdout_restore(saved);
    bool opened = rc == 0, module = rc == SAGERUN_NOT_FOUND && in_folder;
    const char *debug = getenv("SAGERUN_DEBUG");
    if (module && debug && *debug)
        fprintf(stderr, "sagerun: passed over %s: %s\n", path, buf);
    sagerun_status st = opened || module ? SAGERUN_OK : reject(reg, path, err, "%s", buf);
    for (uint32_t i = 0; opened && i < a->n_refused && st == SAGERUN_OK; i++)
        st = reject(reg, path, err, "%s", a->refused[i]);
    for (uint32_t i = 0; opened && i < a->n_variants && st == SAGERUN_OK; i++)
        st = load_script_variant(reg, path, sha256, &a->variants[i], err);
    free(a);
    return st;
}

/* True when a variant of the file at real (a resolved path) is loaded already: the same file met
 * again (named with --plugin and found in a plugin folder too) is not a duplicate of itself. */
static bool file_loaded(const sagerun_registry *reg, const char *real)
{
    char other[PATH_MAX];
    for (size_t i = 0; i < reg->n_variants; i++)
        if (reg->variants[i].path && realpath(reg->variants[i].path, other) && strcmp(other, real) == 0)
            return true;
    return false;
}

/* One file, in the order that runs none of its code before it is judged safe: a regular file,
 * safe permissions, its hash against the pins, then the scanner, then this process. in_folder:
 * found in a folder, not named. */
static sagerun_status load_file(sagerun_registry *reg, const char *path, bool in_folder,
                                sagerun_error *err)
{
    char buf[PATH_MAX + SR_PLUGIN_REASON_MAX], real[PATH_MAX], sha256[65];
    sagerun_error e = {0};
    int fd = sr_open_input(path, &e);
    if (fd < 0)
        return reject(reg, path, err, "%s", e.message);
    close(fd);
    if (!reg->allow_unsafe && sr_plugin_unsafe_reason(path, buf, sizeof buf))
        return reject(reg, path, err, "%s", buf);
    if (!realpath(path, real))
        return reject(reg, path, err, "cannot resolve the path: %s", strerror(errno));
    if (file_loaded(reg, real))
        return SAGERUN_OK;
    if (sagerun_file_sha256(path, sha256, &e) != SAGERUN_OK)
        return reject(reg, path, err, "cannot hash the file: %s", e.message);
    if (pin_violated_before_running(reg, path, sha256, buf, sizeof buf))
        return reject(reg, path, err, "%s", buf);
    if (has_suffix(path, ".py"))
        return load_script(reg, path, sha256, in_folder, err);
    sr_plugin_verdict v;
    examine(reg, real, sha256, &v);
    if (!v.ok)
        return reject(reg, path, err, "%s", v.reason);
    if (pin_violated(reg, v.name, path, sha256, buf, sizeof buf))
        return reject(reg, path, err, "%s", buf);
    return load_approved(reg, path, sha256, err);
}
static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static sagerun_status add_folder(sagerun_registry *reg, const char *dir, sagerun_error *err)
{
    char real[PATH_MAX];
    if (realpath(dir, real) && seen_before(&reg->folders, &reg->n_folders, real)) {
        const char *debug = getenv("SAGERUN_DEBUG");
        if (debug && *debug)
            fprintf(stderr, "sagerun: %s: this folder was searched already\n", dir);
        return SAGERUN_OK;
    }
    DIR *d = opendir(dir);
    if (!d)
        return sr_error_set(err, SAGERUN_IO, "%s: cannot open plugin folder: %s", dir,
                            strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    sagerun_status st = SAGERUN_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !(has_suffix(e->d_name, ".so") || has_suffix(e->d_name, ".py")))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = realloc(names, cap * sizeof *grown);
            if (!grown) {
                st = sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
                break;
            }
            names = grown;
        }
        if (!(names[n] = strdup(e->d_name))) {
            st = sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    if (names)
        qsort(names, n, sizeof *names, compare_names);
    for (size_t i = 0; i < n; i++) {
        if (st == SAGERUN_OK) {
            char path[PATH_MAX];
            int len = snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            if (len < 0 || (size_t)len >= sizeof path)
                st = reject(reg, names[i], err, "path too long in folder %s", dir);
            else
                st = load_file(reg, path, true, err);
        }
        free(names[i]);
    }
    free(names);
    return st;
}

sagerun_status sagerun_registry_add_path(sagerun_registry *reg, const char *path,
                                         sagerun_error *err)
{
    if (!reg || !path || !*path)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "registry_add_path: %s",
                            !reg ? "NULL registry" : !path ? "NULL path" : "empty path");
    struct stat sb;
    if (stat(path, &sb) != 0)
        return sr_error_set(err, SAGERUN_NOT_FOUND, "%s: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return add_folder(reg, path, err);
    /* dlopen searches the library path for names without a slash: make the file explicit. */
    if (!strchr(path, '/')) {
        char local[PATH_MAX];
        snprintf(local, sizeof local, "./%s", path);
        return load_file(reg, local, false, err);
    }
    return load_file(reg, path, false, err);
}

/* The plugins folder that belongs to this copy of sagerun, found from the file this code was
 * loaded from: <libdir>/sagerun/plugins for an installed library, <prefix>/lib/sagerun/plugins
 * for an installed CLI (bin/), <B>/plugins for a sanitizer build, <tree>/plugins for a build
 * tree (build/lib, build/bin, build/test), and last the folder configured at build time. */
bool sr_default_plugin_folder(char *out, size_t len)
{
    if (len < PATH_MAX)
        return false;
    char self[PATH_MAX] = "";
    Dl_info info;
    if (dladdr((void *)sr_default_plugin_folder, &info) && info.dli_fname &&
        realpath(info.dli_fname, self)) {
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
    }
    const char *const candidates[] = {"%s/sagerun/plugins", "%s/../lib/sagerun/plugins",
                                      "%s/../plugins", "%s/../../plugins"};
    for (size_t i = 0; i < SR_ARRAY_LEN(candidates) + 1; i++) {
        char path[PATH_MAX + 32];
        if (i < SR_ARRAY_LEN(candidates)) {
            if (!self[0])
                continue;
            snprintf(path, sizeof path, candidates[i], self);
        } else {
            snprintf(path, sizeof path, "%s", SAGERUN_PLUGINDIR);
        }
        struct stat sb;
        if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) && realpath(path, out))
            return true;
    }
    return false;
}

sagerun_status sagerun_registry_add_default_paths(sagerun_registry *reg, sagerun_error *err)
{
    if (!reg)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "registry is NULL");
    const char *env = secure_getenv("SAGERUN_PLUGIN_PATH");
    if (env && *env) {
        char *copy = strdup(env);
        if (!copy)
            return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
        char *save = NULL;
        sagerun_status st = SAGERUN_OK;
        for (char *dir = strtok_r(copy, ":", &save); dir && st == SAGERUN_OK;
             dir = strtok_r(NULL, ":", &save)) {
            struct stat sb;
            if (stat(dir, &sb) != 0) {
                st = reject(reg, dir, err, "SAGERUN_PLUGIN_PATH entry does not exist");
                continue;
            }
            st = sagerun_registry_add_path(reg, dir, err);
        }
        free(copy);
        if (st != SAGERUN_OK)
            return st;
    }
    char folder[PATH_MAX];
    if (sr_default_plugin_folder(folder, sizeof folder))
        return add_folder(reg, folder, err);
    return SAGERUN_OK;
}

void sagerun_registry_allow_unsafe(sagerun_registry *reg, int allow)
{
    if (reg)
        reg->allow_unsafe = allow != 0;
}

sagerun_status sagerun_registry_pin(sagerun_registry *reg, const char *name, const char *hex,
                               sagerun_error *err)
{
    if (!reg || !name || !hex)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "registry_pin: NULL argument");
    if (!*name || strlen(name) > 63) /* a variant name's limits (plugin.h) */
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "pinned plugin '%.80s%s': not a variant name (1 to 63 characters)",
                            name, strlen(name) > 80 ? "..." : "");
    if (strlen(hex) != 64 || strspn(hex, "0123456789abcdefABCDEF") != 64)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "pinned plugin %s: '%.80s%s' is not a SHA-256 (64 hex digits)", name,
                            hex, strlen(hex) > 80 ? "..." : "");
    const sr_pin *old = pin_of(reg, name);
    if (old && strcasecmp(old->sha256, hex) == 0)
        return SAGERUN_OK;
    if (old)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "pinned plugin %s: pinned already, to %s", name, old->sha256);
    sr_pin *grown = realloc(reg->pins, (reg->n_pins + 1) * sizeof *grown);
    if (!grown)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    reg->pins = grown;
    snprintf(grown[reg->n_pins].name, sizeof grown->name, "%s", name);
    snprintf(grown[reg->n_pins].sha256, sizeof grown->sha256, "%s", hex);
    reg->n_pins++;
    return SAGERUN_OK;
}

const char *sagerun_registry_cache_path(const sagerun_registry *reg)
{
    return reg ? sr_plugin_cache_path(reg->cache) : NULL;
}

sagerun_status sagerun_registry_expect_sha256(const sagerun_registry *reg, const char *name,
                                              const char *hex, sagerun_error *err)
{
    if (!reg || !name || !hex)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "expect_sha256: NULL argument");
    long i = sagerun_registry_find(reg, name);
    char prefix[96];
    snprintf(prefix, sizeof prefix, "pinned plugin %s:", name);
    for (size_t k = 0; i < 0 && k < reg->n_rejected; k++) /* refused before loading: say why */
        if (strncmp(reg->rejected[k].reason, prefix, strlen(prefix)) == 0)
            return sr_error_set(err, SAGERUN_PLUGIN, "%s", reg->rejected[k].reason);
    if (i < 0)
        return sr_error_set(err, SAGERUN_NOT_FOUND,
                            "pinned plugin %s: no variant of that name was loaded", name);
    if (strlen(hex) != 64 || strspn(hex, "0123456789abcdefABCDEF") != 64)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "pinned plugin %s: '%s' is not a SHA-256 (64 hex digits)", name, hex);
    if (strcasecmp(hex, reg->variants[i].sha256) != 0)
        return sr_error_set(err, SAGERUN_PLUGIN,
                            "pinned plugin %s: %s has SHA-256 %s, expected %s", name,
                            reg->variants[i].path, reg->variants[i].sha256, hex);
    return SAGERUN_OK;
}

size_t sagerun_registry_variant_count(const sagerun_registry *reg)
{
    return reg ? reg->n_variants : 0;
}

const char *sagerun_feature_name(uint32_t bit)
{
    return sr_feature_name(bit);
}

/* What a descriptor declares it does (plugin ABI 1.2): a 1.0/1.1 descriptor, which has no such
 * fields, does the 1.1 problem only; declaring no dtype means F16 and BF16, as the host reads it
 * (sr_features_check). */
static void declared_capabilities(const sagerun_variant_descriptor *d, sagerun_variant_info *i)
{
    bool v12 = d->struct_size >= offsetof(sagerun_variant_descriptor, head_dims) +
                                     sizeof d->head_dims;
    i->features = v12 ? d->features : 0;
    i->dtypes = v12 && d->dtypes ? d->dtypes
                                 : (1u << SAGERUN_DTYPE_F16) | (1u << SAGERUN_DTYPE_BF16);
    i->n_head_dims = v12 && d->head_dims ? d->n_head_dims : 0;
    i->head_dims = i->n_head_dims ? d->head_dims : NULL;
}

sagerun_status sagerun_registry_variant_info(const sagerun_registry *reg, size_t index,
                                             sagerun_variant_info *info, sagerun_error *err)
{
    if (!reg || !info)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "registry_variant_info: NULL argument");
    if (index >= reg->n_variants)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "variant index %zu out of range",
                            index);
    const sr_variant *v = &reg->variants[index];
    sagerun_variant_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    i.name = v->label;
    i.version = v->desc->version ? v->desc->version : "";
    i.description = v->desc->description ? v->desc->description : "";
    i.backend = v->desc->backend;
    i.min_compute_capability = v->desc->min_compute_capability;
    const sr_input_provider *kind = sr_descriptor_input_kind(v->desc).provider;
    i.input_kind = kind ? kind->kind : v->desc->input_kind; /* named by id too */
    i.path = v->path;
    memcpy(i.sha256, v->sha256, sizeof i.sha256);
    i.base_name = v->desc->name;
    i.n_params = sr_descriptor_param_count(v->desc);
    i.flags = sr_descriptor_flags(v->desc);
    i.extension_path = v->extension;
    memcpy(i.extension_sha256, v->extension_sha256, sizeof i.extension_sha256);
    declared_capabilities(v->desc, &i);
    uint32_t size = info->struct_size && info->struct_size < sizeof i ? info->struct_size
                                                                      : (uint32_t)sizeof i;
    memcpy(info, &i, size);
    info->struct_size = size;
    return SAGERUN_OK;
}

static long find_label(const sagerun_registry *reg, const char *label)
{
    for (size_t i = 0; i < reg->n_variants; i++)
        if (strcmp(reg->variants[i].label, label) == 0)
            return (long)i;
    return -1;
}

/* The canonical label of a spec NAME[k=v,...] and the index of NAME's plain entry. */
static sagerun_status resolve_spec(const sagerun_registry *reg, const char *spec, long *base,
                                   double values[SAGERUN_PLUGIN_MAX_PARAMS], char *label,
                                   size_t len, sagerun_error *err)
{
    char name[64];
    char *args = NULL;
    sagerun_status st = sr_variant_spec_split(spec, name, &args, err);
    if (st != SAGERUN_OK)
        return st;
    *base = find_label(reg, name);
    if (*base < 0)
        st = sr_error_set(err, SAGERUN_NOT_FOUND, "no variant named %s", name);
    else
        st = sr_params_parse(reg->variants[*base].desc, args, values, err);
    free(args);
    if (st == SAGERUN_OK && !sr_params_label(reg->variants[*base].desc, values, label, len))
        st = sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                          "variant %s: the label of these values is longer than %zu characters",
                          name, len - 1);
    return st;
}

long sagerun_registry_find(const sagerun_registry *reg, const char *name)
{
    if (!reg || !name)
        return -1;
    long i = find_label(reg, name);
    if (i >= 0 || !strchr(name, '['))
        return i;
    long base;
    double values[SAGERUN_PLUGIN_MAX_PARAMS];
    char label[SR_LABEL_MAX];
    if (resolve_spec(reg, name, &base, values, label, sizeof label, NULL) != SAGERUN_OK)
        return -1;
    return find_label(reg, label);
}

sagerun_status sagerun_registry_bind(sagerun_registry *reg, const char *spec, long *index,
                                     sagerun_error *err)
{
    if (!reg || !spec || !index)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "registry_bind: NULL argument");
    *index = find_label(reg, spec);
    if (*index >= 0)
        return SAGERUN_OK;
    long base;
    double values[SAGERUN_PLUGIN_MAX_PARAMS];
    char label[SR_LABEL_MAX];
    sagerun_status st = resolve_spec(reg, spec, &base, values, label, sizeof label, err);
    if (st != SAGERUN_OK)
        return st;
    if ((*index = find_label(reg, label)) >= 0)
        return SAGERUN_OK;
    const sr_variant b = reg->variants[base]; /* copied: add_variant may move the array */
    const sr_origin from = {.path = b.path, .sha256 = b.sha256, .handle = b.handle,
                            .extension = b.extension,
                            .extension_sha256 = b.extension ? b.extension_sha256 : NULL};
    if ((st = add_variant(reg, &from, b.desc, label, values, err)) != SAGERUN_OK)
        return st;
    *index = find_label(reg, label);
    return SAGERUN_OK;
}

sagerun_status sagerun_registry_variant_param(const sagerun_registry *reg, size_t index,
                                              uint32_t k, sagerun_variant_param *out,
                                              sagerun_error *err)
{
    if (!reg || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "registry_variant_param: NULL argument");
    if (index >= reg->n_variants)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "variant index %zu out of range",
                            index);
    const sr_variant *v = &reg->variants[index];
    if (k >= sr_descriptor_param_count(v->desc))
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT,
                            "variant %s: parameter %u out of range (it has %u)", v->label, k,
                            sr_descriptor_param_count(v->desc));
    const sagerun_param_decl *d = &v->desc->params[k];
    sagerun_variant_param p = {.struct_size = sizeof p,
                               .key = d->key,
                               .description = d->description ? d->description : "",
                               .type = d->type,
                               .value = v->values[k],
                               .default_value = d->default_value,
                               .min_value = d->min_value,
                               .max_value = d->max_value};
    uint32_t size = out->struct_size && out->struct_size < sizeof p ? out->struct_size
                                                                    : (uint32_t)sizeof p;
    memcpy(out, &p, size);
    out->struct_size = size;
    return SAGERUN_OK;
}

size_t sagerun_registry_rejection_count(const sagerun_registry *reg)
{
    return reg ? reg->n_rejected : 0;
}

sagerun_status sagerun_registry_rejection(const sagerun_registry *reg, size_t index,
                                          sagerun_rejection *out, sagerun_error *err)
{
    if (!reg || !out)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "registry_rejection: NULL argument");
    if (index >= reg->n_rejected)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "rejection index %zu out of range",
                            index);
    /* Fill only what the caller's struct covers (it may predate later fields). */
    sagerun_rejection r = {.struct_size = sizeof r,
                           .path = reg->rejected[index].path,
                           .reason = reg->rejected[index].reason};
    uint32_t size = out->struct_size && out->struct_size < sizeof r ? out->struct_size
                                                                    : (uint32_t)sizeof r;
    memcpy(out, &r, size);
    out->struct_size = size;
    return SAGERUN_OK;
}

const sagerun_variant_descriptor *sr_registry_descriptor(const sagerun_registry *reg,
                                                         size_t index)
{
    return index < reg->n_variants ? reg->variants[index].desc : NULL;
}

const double *sr_registry_values(const sagerun_registry *reg, size_t index)
{
    return index < reg->n_variants ? reg->variants[index].values : NULL;
}
