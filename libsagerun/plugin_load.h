/* Loading one plugin file, in steps that registry.c takes in order, each a file of its own:
 *   plugin_perms.c  is the file safe to load (ssh's StrictModes, on the real path)?
 *   plugin_scan.c   examine it in a separate process first (crash, exit, hang: a verdict)
 *   plugin_cache.c  the scanner's verdicts, kept per (path, device, inode, size, mtime, sha256)
 *   plugin_open.c   dlopen, the entry point, ABI negotiation, the descriptor's checks
 *   plugin_script.c a script (NAME.py) instead: the Python bridge reads its declarations */
#ifndef SAGERUN_PLUGIN_LOAD_H
#define SAGERUN_PLUGIN_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "internal.h"

#define SR_PLUGIN_REASON_MAX 768

/* ---- plugin_perms.c ---- */
/* Why loading path would run code that users other than its owner could have swapped, or NULL.
 * The symlinks of path are resolved; the file and every folder up to / (of the real path, and of
 * the folder holding a symlink) must belong to the user or root and not be writable by others,
 * nor by the group unless it is the owner's own; a sticky folder (/tmp) may be writable by all. */
const char *sr_plugin_unsafe_reason(const char *path, char *buf, size_t len);

/* ---- plugin_open.c ---- */
/* The most variants one file (a factory) may hold. */
#define SR_PLUGIN_MAX_VARIANTS 64
/* Opens path in this process and negotiates: the handle and the checked descriptors (descs has
 * room for SR_PLUGIN_MAX_VARIANTS; *n of them are set), or false with the reason. The handle is
 * closed again on failure when nothing of it can be in use. */
bool sr_plugin_open(const char *path, const sagerun_host_services *services, void **handle,
                    const sagerun_variant_descriptor **descs, size_t *n, char *reason,
                    size_t len);
/* Why a descriptor is unusable (the reason, in buf), or NULL when it is usable. */
const char *sr_descriptor_problem(const sagerun_variant_descriptor *d, char *buf, size_t len);

/* ---- plugin_script.c ---- */
struct sr_script_answer;
/* Asks the Python bridge for the variants the script declares: 0 with *answer (the descriptors
 * checked as sr_plugin_open checks a plugin's), or a negative status with the reason (no bridge,
 * an unsafe bridge; SAGERUN_NOT_FOUND: the file declares no variant). allow_unsafe: as for
 * plugins, for the bridge's file. */
int sr_script_open(const char *script, const sagerun_host_services *services, bool allow_unsafe,
                    struct sr_script_answer *answer, char *reason, size_t len);

/* ---- registry.c ---- */
/* The plugins folder of this copy of sagerun (its real path), or false when there is none. */
bool sr_default_plugin_folder(char *out, size_t len);

/* ---- plugin_scan.c ---- */
typedef struct sr_plugin_verdict {
    bool ok;
    bool transient; /* not cached: a timeout, a refusal the plugin answered, a failed fork */
    char name[64];                      /* the variant's name, when ok */
    char reason[SR_PLUGIN_REASON_MAX];  /* why not, when not ok */
} sr_plugin_verdict;
/* Runs sr_plugin_open on path in a child process of its own process group, which is then ended
 * with everything it started: a constructor or entry point that crashes, exits, or runs past
 * timeout_s gives a verdict saying so; sagerun itself runs none of the file's code. */
void sr_plugin_scan(const char *path, const sagerun_host_services *services, double timeout_s,
                    sr_plugin_verdict *v);
/* The same for a library that is not a plugin (the Python bridge): loaded in the scanner's
 * child, and entry looked up there, before this process loads it. */
void sr_library_scan(const char *path, const char *entry, double timeout_s, sr_plugin_verdict *v);
/* The scanner's limit: SAGERUN_PLUGIN_SCAN_TIMEOUT (seconds) or 10 s. */
double sr_plugin_scan_timeout(void);

/* ---- plugin_cache.c ---- */
typedef struct sr_plugin_cache sr_plugin_cache;
/* The cache of scan verdicts: SAGERUN_CACHE_DIR (empty: no cache), else $XDG_CACHE_HOME/sagerun,
 * else ~/.cache/sagerun. NULL when there is none (or its folder is not safe: another user could
 * forge verdicts). */
sr_plugin_cache *sr_plugin_cache_open(void);
void sr_plugin_cache_close(sr_plugin_cache *c);
/* The file the cache lives in (for 'sagerun list'), or NULL. */
const char *sr_plugin_cache_path(const sr_plugin_cache *c);
/* A cached verdict for the file path (already hashed: sha256), true when found. */
bool sr_plugin_cache_lookup(sr_plugin_cache *c, const char *path, const char sha256[65],
                            sr_plugin_verdict *v);
/* Records a verdict and rewrites the cache file (atomically; failures are ignored: a cache). */
void sr_plugin_cache_store(sr_plugin_cache *c, const char *path, const char sha256[65],
                           const sr_plugin_verdict *v);

#endif
