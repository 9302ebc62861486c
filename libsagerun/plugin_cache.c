/* The plugin scanner's verdicts, cached so that a warm `sagerun list` forks nothing. An entry
 * holds for one file as it was: its real path, device, inode, size, mtime and SHA-256; any
 * change and the file is examined again. The cache is a text file, one verdict a line, rewritten
 * atomically; its folder must belong to the user and be writable by nobody else (a forged
 * verdict would let a crashing plugin into the main process), else there is no cache. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_load.h"
#include "safe_io.h"

#define SR_CACHE_HEADER "sagerun-plugin-scan-cache 1"
#define SR_CACHE_FILE "plugin-scan.txt"

typedef struct entry {
    char *path;
    unsigned long long dev, ino, size, mtime_ns;
    char sha256[65];
    sr_plugin_verdict v;
} entry;

struct sr_plugin_cache {
    char *file;
    entry *e;
    size_t n;
};

/* The folder, created 0700 when missing; NULL when unset or unsafe. */
static char *cache_dir(void)
{
    const char *env = secure_getenv("SAGERUN_CACHE_DIR"), *xdg = secure_getenv("XDG_CACHE_HOME");
    const char *home = secure_getenv("HOME");
    char *dir = NULL;
    if (env)
        dir = *env ? strdup(env) : NULL;
    else if (xdg && *xdg == '/' && asprintf(&dir, "%s/sagerun", xdg) < 0)
        dir = NULL;
    else if (!dir && home && *home == '/' && asprintf(&dir, "%s/.cache/sagerun", home) < 0)
        dir = NULL;
    if (!dir)
        return NULL;
    if (!env) { /* ~/.cache itself may be missing */
        char *slash = strrchr(dir, '/');
        *slash = '\0';
        mkdir(dir, 0700);
        *slash = '/';
    }
    mkdir(dir, 0700);
    struct stat sb;
    if (lstat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode) || sb.st_uid != geteuid() ||
        (sb.st_mode & (S_IWGRP | S_IWOTH))) {
        free(dir);
        return NULL;
    }
    return dir;
}

static bool parse_line(char *line, entry *e)
{
    char *f[9];
    int n = 0;
    for (char *t = line; t && n < 9; n++) {
        f[n] = t;
        if ((t = strchr(t, '\t')))
            *t++ = '\0';
    }
    if (n != 9 || strlen(f[4]) != 64 || strlen(f[6]) >= sizeof e->v.name ||
        strlen(f[7]) >= sizeof e->v.reason)
        return false;
    memset(e, 0, sizeof *e);
    e->dev = strtoull(f[0], NULL, 10);
    e->ino = strtoull(f[1], NULL, 10);
    e->size = strtoull(f[2], NULL, 10);
    e->mtime_ns = strtoull(f[3], NULL, 10);
    memcpy(e->sha256, f[4], 65);
    e->v.ok = strcmp(f[5], "ok") == 0;
    strcpy(e->v.name, f[6]);
    strcpy(e->v.reason, f[7]);
    return (e->path = strdup(f[8])) != NULL;
}

static void load(sr_plugin_cache *c)
{
    sagerun_error err = {0};
    FILE *f = sr_fopen_input(c->file, &err);
    if (!f)
        return;
    char line[4096 + SR_PLUGIN_REASON_MAX + 256];
    if (!fgets(line, sizeof line, f) || strncmp(line, SR_CACHE_HEADER "\n", sizeof line) != 0) {
        fclose(f);
        return;
    }
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        entry *grown = realloc(c->e, (c->n + 1) * sizeof *grown);
        if (!grown)
            break;
        c->e = grown;
        if (parse_line(line, &c->e[c->n]))
            c->n++;
    }
    fclose(f);
}

sr_plugin_cache *sr_plugin_cache_open(void)
{
    char *dir = cache_dir();
    sr_plugin_cache *c = dir ? calloc(1, sizeof *c) : NULL;
    if (c && asprintf(&c->file, "%s/" SR_CACHE_FILE, dir) < 0) {
        free(c);
        c = NULL;
    }
    free(dir);
    if (c)
        load(c);
    return c;
}

void sr_plugin_cache_close(sr_plugin_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free(c->e[i].path);
    free(c->e);
    free(c->file);
    free(c);
}

const char *sr_plugin_cache_path(const sr_plugin_cache *c)
{
    return c ? c->file : NULL;
}

/* The key of the file as it is now: false when it cannot be read or named in the cache. */
static bool key_of(const char *path, const char sha256[65], entry *k)
{
    struct stat sb;
    memset(k, 0, sizeof *k);
    if (strpbrk(path, "\t\n") || stat(path, &sb) != 0)
        return false;
    k->path = (char *)path;
    k->dev = (unsigned long long)sb.st_dev;
    k->ino = (unsigned long long)sb.st_ino;
    k->size = (unsigned long long)sb.st_size;
    k->mtime_ns = (unsigned long long)sb.st_mtim.tv_sec * 1000000000ull +
                  (unsigned long long)sb.st_mtim.tv_nsec;
    memcpy(k->sha256, sha256, 65);
    return true;
}

static entry *find(sr_plugin_cache *c, const char *path)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (strcmp(c->e[i].path, path) == 0)
            return &c->e[i];
    return NULL;
}

bool sr_plugin_cache_lookup(sr_plugin_cache *c, const char *path, const char sha256[65],
                            sr_plugin_verdict *v)
{
    entry k, *e = find(c, path);
    if (!e || !key_of(path, sha256, &k) || e->dev != k.dev || e->ino != k.ino ||
        e->size != k.size || e->mtime_ns != k.mtime_ns || strcmp(e->sha256, k.sha256) != 0)
        return false;
    *v = e->v;
    return true;
}

static bool write_cb(FILE *f, const void *user)
{
    const sr_plugin_cache *c = user;
    fputs(SR_CACHE_HEADER "\n", f);
    for (size_t i = 0; i < c->n; i++) {
        const entry *e = &c->e[i];
        fprintf(f, "%llu\t%llu\t%llu\t%llu\t%s\t%s\t%s\t%s\t%s\n", e->dev, e->ino, e->size,
                e->mtime_ns, e->sha256, e->v.ok ? "ok" : "rejected", e->v.name, e->v.reason,
                e->path);
    }
    return !ferror(f);
}

void sr_plugin_cache_store(sr_plugin_cache *c, const char *path, const char sha256[65],
                           const sr_plugin_verdict *v)
{
    entry k, *e;
    if (!c || v->transient || !key_of(path, sha256, &k))
        return;
    if (!(e = find(c, path))) {
        entry *grown = realloc(c->e, (c->n + 1) * sizeof *grown);
        char *copy = strdup(path);
        if (!grown || !copy) {
            free(copy);
            if (grown)
                c->e = grown;
            return;
        }
        c->e = grown;
        e = &c->e[c->n++];
        k.path = copy;
    } else {
        k.path = e->path;
    }
    k.v = *v;
    for (char *t = k.v.reason; *t; t++) /* one line per entry, tab-separated */
        if (*t == '\t' || *t == '\n' || *t == '\r')
            *t = ' ';
    *e = k;
    mode_t old = umask(077);
    sr_write_file_atomic(c->file, write_cb, c, NULL);
    umask(old);
}
