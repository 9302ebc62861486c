/* bridge.so inside: the descriptors of the declared Python variants (slots.c), their calls,
 * forwarded to embed.so once the interpreter runs (bridge.c), and the interpreter's discovery
 * (interpreter.c). */
#ifndef SAGERUN_PYTHON_BRIDGE_H
#define SAGERUN_PYTHON_BRIDGE_H

#include "embed.h"

/* ---- slots.c ---- */
/* The most Python variants one process declares (distinct declarations over all .py files). */
#define PY_MAX_SLOTS 64
/* The descriptor of declaration d: the same one for the same declaration (idempotent), or NULL
 * with the reason when every slot is taken. *kept: the declaration as the slot keeps it (lives
 * until the process ends). */
const sagerun_variant_descriptor *py_slot_intern(const py_declared *d, const py_declared **kept,
                                                 char *err, size_t errlen);

/* ---- bridge.c: the plugin.h calls of every slot ---- */
int py_bridge_create(const py_declared *d, const sagerun_host_services *services,
                     const sagerun_plugin_inputs *inputs, void **state, char *err, size_t errlen);
int py_bridge_prepare(void *state, char *err, size_t errlen);
int py_bridge_run(void *state, char *err, size_t errlen);
void py_bridge_destroy(void *state);

/* ---- interpreter.c ---- */
/* Finds the interpreter (SAGERUN_PYTHON, else $VIRTUAL_ENV/bin/python3, else python3 on PATH),
 * loads its libpython with RTLD_GLOBAL, then embed.so (beside bridge.so), and starts the
 * interpreter. Returns embed.so's table, or NULL with the reason. Once per process. */
const py_embed_api *py_interpreter_load(const sagerun_host_services *services, char *err,
                                        size_t errlen);

#endif
