/* Script variants: the interface between libsagerun's registry and a script bridge, the plugin
 * that turns a script file declaring variants (a Python NAME.py) into variant descriptors. It is
 * internal to sagerun: the one bridge, plugins/python/bridge.so, is built from variants/python/
 * with this header; it is not part of the plugin ABI (include/sagerun/plugin.h), whose rules the
 * descriptors it gives follow all the same.
 *
 * The registry checks a script as it checks a plugin file (permissions, SHA-256 pins), then calls
 * the bridge's entry point with the script's path. The bridge reads the script's declaration lines
 * only (no code of the script runs) and answers one descriptor per usable declaration, with the
 * extension module it names, and one reason per declaration it refuses. Descriptors and their
 * strings live until the process ends; the same declarations give the same descriptors again (the
 * entry point is idempotent, as plugin.h section 1 asks). */
#ifndef SAGERUN_SCRIPT_BRIDGE_H
#define SAGERUN_SCRIPT_BRIDGE_H

#include <stdint.h>

#include "sagerun/plugin.h"

#define SR_SCRIPT_ENTRY_NAME "sagerun_script_entry"
#define SR_SCRIPT_MAX_VARIANTS 64 /* per script */
#define SR_SCRIPT_MAX_REFUSED 16  /* refused declarations reported per script */
#define SR_SCRIPT_REASON_MAX 512

typedef struct sr_script_variant {
    const sagerun_variant_descriptor *desc;
    const char *extension; /* the extension module (a file) the variant loads, or NULL */
    int line; /* its declaration's line (1-based), named where the registry refuses it */
} sr_script_variant;

typedef struct sr_script_answer {
    uint32_t struct_size; /* set by the registry */
    uint32_t n_variants, n_refused;
    uint32_t reserved;
    sr_script_variant variants[SR_SCRIPT_MAX_VARIANTS];
    char refused[SR_SCRIPT_MAX_REFUSED][SR_SCRIPT_REASON_MAX]; /* "FILE:LINE: why" */
    char reason[SR_SCRIPT_REASON_MAX]; /* why the whole script is refused (entry returns < 0) */
} sr_script_answer;

/* Returns 0 (then n_variants + n_refused >= 1) or a negative sagerun_status with answer->reason:
 * SAGERUN_NOT_FOUND when the file declares no variant (a module that variant files import). */
typedef int (*sr_script_entry_fn)(const sagerun_plugin_query *query, const char *script,
                                  sr_script_answer *answer);

#endif
