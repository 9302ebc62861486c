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

/* The size of the version-1 descriptor: everything up to and including destroy. A plugin built
 * against a later minor may send a larger struct; one sending less lacks required fields. */
#define SR_DESCRIPTOR_V1_SIZE                                                                      \
    (offsetof(sagerun_variant_descriptor, destroy) + sizeof(void (*)(void *)))

typedef struct sr_variant {
    const sagerun_variant_descriptor *desc;
    char *path;
    char sha256[65];
    void *handle; /* dlopen handle, never closed */
} sr_variant;

typedef struct sr_rejected {
    char *path;
    char *reason;
} sr_rejected;

struct sagerun_registry {
    sagerun_context *ctx;
    bool allow_unsafe; /* load files writable by others than their owner and root */
    sagerun_context *own_ctx; /* a host context made when none was given */
    sr_variant *variants;
    size_t n_variants, cap_variants;
    sr_rejected *rejected;
    size_t n_rejected, cap_rejected;
};

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
    for (size_t i = 0; i < reg->n_variants; i++)
        free(reg->variants[i].path);
    for (size_t i = 0; i < reg->n_rejected; i++) {
        free(reg->rejected[i].path);
        free(reg->rejected[i].reason);
    }
    free(reg->variants);
    free(reg->rejected);
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
    r->reason = strdup(reason);
    if (!r->path || !r->reason) {
        free(r->path);
        free(r->reason);
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    }
    reg->n_rejected++;
    const char *debug = getenv("SAGERUN_DEBUG");
    if (debug && *debug)
        fprintf(stderr, "sagerun: rejected %s: %s\n", path, reason);
    return SAGERUN_OK;
}

static bool valid_variant_name(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-'))
            return false;
    }
    return true;
}

/* Checks a descriptor; returns NULL when it is usable, else the reason. */
static const char *descriptor_problem(const sagerun_variant_descriptor *d, char *buf, size_t len)
{
    if (d->struct_size < SR_DESCRIPTOR_V1_SIZE) {
        snprintf(buf, len,
                 "variant descriptor too small: struct_size %u, ABI 1 needs at least %zu bytes",
                 d->struct_size, (size_t)SR_DESCRIPTOR_V1_SIZE);
        return buf;
    }
    if (d->abi_major != SAGERUN_PLUGIN_ABI_MAJOR) {
        snprintf(buf, len, "variant descriptor says ABI %u, the answer said %u", d->abi_major,
                 SAGERUN_PLUGIN_ABI_MAJOR);
        return buf;
    }
    if (!valid_variant_name(d->name)) {
        snprintf(buf, len, "invalid variant name \"%s\" (want [a-z0-9._-], 1 to 63 characters)",
                 d->name ? d->name : "(null)");
        return buf;
    }
    if (d->backend != SAGERUN_BACKEND_HOST && d->backend != SAGERUN_BACKEND_CUDA) {
        snprintf(buf, len, "variant %s: unknown backend %d", d->name, d->backend);
        return buf;
    }
    if (d->input_kind != SAGERUN_INPUT_FP16 && d->input_kind != SAGERUN_INPUT_SAGE2) {
        snprintf(buf, len, "variant %s: unknown input kind %d", d->name, d->input_kind);
        return buf;
    }
    const char *missing = !d->geometry ? "geometry"
                          : !d->create ? "create"
                          : !d->run    ? "run"
                          : !d->destroy ? "destroy"
                                        : NULL;
    if (missing) {
        snprintf(buf, len, "variant %s: required function %s is NULL", d->name, missing);
        return buf;
    }
    return NULL;
}

static sagerun_status add_variant(sagerun_registry *reg, const char *path, void *handle,
                                  const sagerun_variant_descriptor *d, sagerun_error *err)
{
    if (reg->n_variants == reg->cap_variants) {
        size_t cap = reg->cap_variants ? 2 * reg->cap_variants : 8;
        sr_variant *v = realloc(reg->variants, cap * sizeof *v);
        if (!v)
            return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
        reg->variants = v;
        reg->cap_variants = cap;
    }
    sr_variant v = {.desc = d, .path = strdup(path), .handle = handle};
    if (!v.path)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    sagerun_error e = {0};
    if (sr_sha256_file(path, v.sha256, &e) != SAGERUN_OK) {
        free(v.path);
        return reject(reg, path, err, "cannot hash the file: %s", e.message);
    }
    /* Keep the list sorted by name (insertion sort: plugin counts are small). */
    size_t at = reg->n_variants;
    while (at > 0 && strcmp(reg->variants[at - 1].desc->name, d->name) > 0)
        at--;
    memmove(&reg->variants[at + 1], &reg->variants[at], (reg->n_variants - at) * sizeof v);
    reg->variants[at] = v;
    reg->n_variants++;
    return SAGERUN_OK;
}

/* A plugin runs with the user's rights: a file, or a folder holding it, that someone other than
 * its owner (the user or root) can write could be swapped for hostile code. Returns the reason
 * the file is unsafe, or NULL. */
static const char *unsafe_reason(const char *path, char *buf, size_t len)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    const char *const what[2] = {"file", "folder"};
    const char *const paths[2] = {path, dir[0] ? dir : "/"};
    for (int i = 0; i < 2; i++) {
        struct stat sb;
        if (stat(paths[i], &sb) != 0) {
            snprintf(buf, len, "cannot stat %s %s: %s", what[i], paths[i], strerror(errno));
            return buf;
        }
        bool sticky_dir = i == 1 && (sb.st_mode & S_ISVTX);
        if ((sb.st_mode & (S_IWGRP | S_IWOTH)) && !sticky_dir) {
            snprintf(buf, len,
                     "unsafe permissions: the %s %s is writable by %s (mode %04o); fix with "
                     "chmod go-w, or pass --allow-unsafe-plugins",
                     what[i], paths[i], (sb.st_mode & S_IWOTH) ? "everyone" : "its group",
                     (unsigned)(sb.st_mode & 07777));
            return buf;
        }
        if (sb.st_uid != 0 && sb.st_uid != geteuid()) {
            snprintf(buf, len,
                     "unsafe owner: the %s %s belongs to uid %u, neither you nor root; pass "
                     "--allow-unsafe-plugins to load it anyway",
                     what[i], paths[i], (unsigned)sb.st_uid);
            return buf;
        }
    }
    return NULL;
}

static sagerun_status load_file(sagerun_registry *reg, const char *path, sagerun_error *err)
{
    if (!reg->allow_unsafe) {
        char why[PATH_MAX + 256];
        const char *unsafe = unsafe_reason(path, why, sizeof why);
        if (unsafe)
            return reject(reg, path, err, "%s", unsafe);
    }
    dlerror();
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        return reject(reg, path, err, "not a loadable plugin: %s", why ? why : "dlopen failed");
    }
    dlerror();
    void *sym = dlsym(handle, SAGERUN_PLUGIN_ENTRY_NAME);
    if (!sym) {
        dlclose(handle);
        return reject(reg, path, err, "no entry point [%s] in shared library [%s]",
                      SAGERUN_PLUGIN_ENTRY_NAME, path);
    }
    sagerun_plugin_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    sagerun_plugin_query q = {.struct_size = sizeof q,
                              .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
                              .abi_minor = SAGERUN_PLUGIN_ABI_MINOR,
                              .services = &reg->ctx->services};
    sagerun_plugin_answer a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    int rc = entry(&q, &a);
    a.reason[sizeof a.reason - 1] = '\0';
    char buf[512];
    const char *problem = NULL;
    if (rc != 0) {
        snprintf(buf, sizeof buf, "init failed: %s (%s returned %d)",
                 a.reason[0] ? a.reason : "no reason given", SAGERUN_PLUGIN_ENTRY_NAME, rc);
        problem = buf;
    } else if (a.abi_major != SAGERUN_PLUGIN_ABI_MAJOR) {
        snprintf(buf, sizeof buf,
                 "ABI mismatch: [%s] answered plugin ABI %u.%u, this sagerun speaks %u.%u",
                 SAGERUN_PLUGIN_ENTRY_NAME, a.abi_major, a.abi_minor, SAGERUN_PLUGIN_ABI_MAJOR,
                 SAGERUN_PLUGIN_ABI_MINOR);
        problem = buf;
    } else if (a.abi_minor > SAGERUN_PLUGIN_ABI_MINOR) {
        snprintf(buf, sizeof buf,
                 "ABI mismatch: plugin needs ABI %u.%u, this sagerun speaks up to %u.%u",
                 a.abi_major, a.abi_minor, SAGERUN_PLUGIN_ABI_MAJOR, SAGERUN_PLUGIN_ABI_MINOR);
        problem = buf;
    } else if (!a.variant) {
        snprintf(buf, sizeof buf, "init failed: [%s] returned no variant descriptor",
                 SAGERUN_PLUGIN_ENTRY_NAME);
        problem = buf;
    } else {
        problem = descriptor_problem(a.variant, buf, sizeof buf);
    }
    if (!problem) {
        long dup = sagerun_registry_find(reg, a.variant->name);
        if (dup >= 0) {
            snprintf(buf, sizeof buf, "duplicate variant name \"%s\" (already loaded from %s)",
                     a.variant->name, reg->variants[dup].path);
            problem = buf;
        }
    }
    if (!problem && reg->ctx->backend == SAGERUN_BACKEND_CUDA &&
        a.variant->backend == SAGERUN_BACKEND_CUDA &&
        a.variant->min_compute_capability > reg->ctx->compute_capability) {
        snprintf(buf, sizeof buf,
                 "needs a newer GPU: variant %s needs compute capability %d.%d, the device has "
                 "%d.%d",
                 a.variant->name, a.variant->min_compute_capability / 10,
                 a.variant->min_compute_capability % 10, reg->ctx->compute_capability / 10,
                 reg->ctx->compute_capability % 10);
        problem = buf;
    }
    if (problem) {
        /* The handle stays open when the plugin's code may already be referenced (a duplicate of
         * a loaded file shares its handle); closing a never-used handle is safe. */
        if (rc != 0 || !a.variant)
            dlclose(handle);
        return reject(reg, path, err, "%s", problem);
    }
    return add_variant(reg, path, handle, a.variant, err);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static sagerun_status add_folder(sagerun_registry *reg, const char *dir, sagerun_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return sr_error_set(err, SAGERUN_IO, "%s: cannot open plugin folder: %s", dir,
                            strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    sagerun_status st = SAGERUN_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !has_suffix(e->d_name, ".so"))
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
                st = load_file(reg, path, err);
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
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "registry_add_path: empty path");
    struct stat sb;
    if (stat(path, &sb) != 0)
        return sr_error_set(err, SAGERUN_NOT_FOUND, "%s: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return add_folder(reg, path, err);
    /* dlopen searches the library path for names without a slash: make the file explicit. */
    if (!strchr(path, '/')) {
        char local[PATH_MAX];
        snprintf(local, sizeof local, "./%s", path);
        return load_file(reg, local, err);
    }
    return load_file(reg, path, err);
}

/* The plugins folder that belongs to this copy of sagerun, found from the file this code was
 * loaded from: <libdir>/sagerun/plugins for an installed library, <prefix>/lib/sagerun/plugins
 * for an installed CLI (bin/), <B>/plugins for a sanitizer build, <tree>/plugins for a build
 * tree (build/lib, build/bin, build/test), and last the folder configured at build time. */
static bool default_plugin_folder(char *out, size_t len)
{
    if (len < PATH_MAX)
        return false;
    char self[PATH_MAX] = "";
    Dl_info info;
    if (dladdr((void *)default_plugin_folder, &info) && info.dli_fname &&
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
    if (default_plugin_folder(folder, sizeof folder))
        return add_folder(reg, folder, err);
    return SAGERUN_OK;
}

void sagerun_registry_allow_unsafe(sagerun_registry *reg, int allow)
{
    if (reg)
        reg->allow_unsafe = allow != 0;
}

sagerun_status sagerun_registry_expect_sha256(const sagerun_registry *reg, const char *name,
                                              const char *hex, sagerun_error *err)
{
    if (!reg || !name || !hex)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "expect_sha256: NULL argument");
    long i = sagerun_registry_find(reg, name);
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

sagerun_status sagerun_registry_variant_info(const sagerun_registry *reg, size_t index,
                                             sagerun_variant_info *info, sagerun_error *err)
{
    if (!reg || !info || index >= reg->n_variants)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "variant index %zu out of range",
                            index);
    const sr_variant *v = &reg->variants[index];
    sagerun_variant_info i;
    memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    i.name = v->desc->name;
    i.version = v->desc->version ? v->desc->version : "";
    i.description = v->desc->description ? v->desc->description : "";
    i.backend = v->desc->backend;
    i.min_compute_capability = v->desc->min_compute_capability;
    i.input_kind = v->desc->input_kind;
    i.path = v->path;
    memcpy(i.sha256, v->sha256, sizeof i.sha256);
    uint32_t size = info->struct_size && info->struct_size < sizeof i ? info->struct_size
                                                                      : (uint32_t)sizeof i;
    memcpy(info, &i, size);
    info->struct_size = size;
    return SAGERUN_OK;
}

long sagerun_registry_find(const sagerun_registry *reg, const char *name)
{
    if (!reg || !name)
        return -1;
    for (size_t i = 0; i < reg->n_variants; i++)
        if (strcmp(reg->variants[i].desc->name, name) == 0)
            return (long)i;
    return -1;
}

size_t sagerun_registry_rejection_count(const sagerun_registry *reg)
{
    return reg ? reg->n_rejected : 0;
}

sagerun_status sagerun_registry_rejection(const sagerun_registry *reg, size_t index,
                                          sagerun_rejection *out, sagerun_error *err)
{
    if (!reg || !out || index >= reg->n_rejected)
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
