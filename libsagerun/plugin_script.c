/* Opening a script variant file (script_bridge.h): find sagerun's Python bridge, check it as a
 * plugin file, and ask it for the variants the script declares. No code of the script runs here:
 * the bridge reads its declaration lines; the interpreter starts when a variant is created. */
#include <dlfcn.h>
#include <errno.h>
#include <linux/limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plugin_load.h"
#include "script_bridge.h"

#define SR_BRIDGE_FILE "python/bridge.so"

/* SAGERUN_PYTHON_BRIDGE, or python/bridge.so in the plugins folder of this copy of sagerun. */
static bool bridge_path(char *out, size_t len)
{
    const char *env = secure_getenv("SAGERUN_PYTHON_BRIDGE");
    if (env && *env)
        return (size_t)snprintf(out, len, "%s", env) < len;
    char folder[PATH_MAX];
    if (!sr_default_plugin_folder(folder, sizeof folder))
        return false;
    return (size_t)snprintf(out, len, "%s/" SR_BRIDGE_FILE, folder) < len;
}

/* The bridge runs in the scanner first, as any plugin does (SAGERUN_PYTHON_BRIDGE names any
 * file): a constructor that exits or crashes emptied `sagerun list` with exit 0, or killed it.
 * Once per path and process: the bridge is never unloaded. */
static bool bridge_scanned(const char *path, char *reason, size_t len)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char approved[PATH_MAX + 32];
    pthread_mutex_lock(&lock);
    bool ok = approved[0] && strcmp(approved, path) == 0;
    if (!ok) {
        sr_plugin_verdict v;
        sr_library_scan(path, SR_SCRIPT_ENTRY_NAME, sr_plugin_scan_timeout(), &v);
        if (v.ok)
            snprintf(approved, sizeof approved, "%s", path);
        else
            snprintf(reason, len, "the Python bridge %s: %s", path, v.reason);
        ok = v.ok;
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

/* The bridge's entry point (dlopen gives the same handle each time: it is never closed). */
static sr_script_entry_fn open_bridge(bool allow_unsafe, char *reason, size_t len)
{
    char path[PATH_MAX + 32], why[SR_PLUGIN_REASON_MAX];
    struct stat sb;
    if (!bridge_path(path, sizeof path)) {
        snprintf(reason, len, "Python variants need sagerun's Python bridge (plugins/"
                 SR_BRIDGE_FILE "), and sagerun found no plugins folder");
        return NULL;
    }
    if (stat(path, &sb) != 0) {
        snprintf(reason, len, "Python variants need sagerun's Python bridge %s: %s (it is built "
                 "when the Python headers are installed: python3-dev)", path, strerror(errno));
        return NULL;
    }
    if (!allow_unsafe && sr_plugin_unsafe_reason(path, why, sizeof why)) {
        snprintf(reason, len, "the Python bridge %s: %s", path, why);
        return NULL;
    }
    if (!bridge_scanned(path, reason, len))
        return NULL;
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void *sym = h ? dlsym(h, SR_SCRIPT_ENTRY_NAME) : NULL;
    if (!sym) {
        const char *e = dlerror();
        snprintf(reason, len, "the Python bridge %s cannot be loaded: %s", path,
                 e ? e : "no entry point " SR_SCRIPT_ENTRY_NAME);
        return NULL;
    }
    sr_script_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    return entry;
}

/* The bridge's answer made safe to read: counts in range, strings terminated, descriptors
 * checked as any plugin's (a bad one becomes a refusal naming its line, as the bridge's own do:
 * an inverted parameter range said which variant, not where). */
static void check_answer(sr_script_answer *a)
{
    if (a->n_variants > SR_SCRIPT_MAX_VARIANTS)
        a->n_variants = SR_SCRIPT_MAX_VARIANTS;
    if (a->n_refused > SR_SCRIPT_MAX_REFUSED)
        a->n_refused = SR_SCRIPT_MAX_REFUSED;
    for (uint32_t i = 0; i < a->n_refused; i++)
        a->refused[i][SR_SCRIPT_REASON_MAX - 1] = '\0';
    uint32_t kept = 0;
    for (uint32_t i = 0; i < a->n_variants; i++) {
        char buf[SR_PLUGIN_REASON_MAX];
        const sagerun_variant_descriptor *d = a->variants[i].desc;
        const char *why = d ? sr_descriptor_problem(d, buf, sizeof buf) : "no descriptor";
        if (!why)
            a->variants[kept++] = a->variants[i];
        else if (a->n_refused < SR_SCRIPT_MAX_REFUSED && a->variants[i].line > 0)
            snprintf(a->refused[a->n_refused++], SR_SCRIPT_REASON_MAX, "line %d: %s",
                     a->variants[i].line, why);
        else if (a->n_refused < SR_SCRIPT_MAX_REFUSED)
            snprintf(a->refused[a->n_refused++], SR_SCRIPT_REASON_MAX, "%s", why);
    }
    a->n_variants = kept;
}

int sr_script_open(const char *script, const sagerun_host_services *services, bool allow_unsafe,
                   sr_script_answer *a, char *reason, size_t len)
{
    sr_script_entry_fn entry = open_bridge(allow_unsafe, reason, len);
    if (!entry)
        return SAGERUN_PLUGIN;
    sagerun_plugin_query q = {.struct_size = sizeof q,
                              .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
                              .abi_minor = SAGERUN_PLUGIN_ABI_MINOR,
                              .services = services};
    memset(a, 0, sizeof *a);
    a->struct_size = sizeof *a;
    int rc = entry(&q, script, a);
    a->reason[SR_SCRIPT_REASON_MAX - 1] = '\0';
    if (rc != 0) {
        snprintf(reason, len, "%s", a->reason[0] ? a->reason : "the Python bridge refused it");
        return rc < 0 ? rc : SAGERUN_PLUGIN;
    }
    check_answer(a);
    return 0;
}
