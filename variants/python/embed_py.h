/* embed.so inside (built with Py_LIMITED_API): the interpreter and the embedded sagerun module
 * (embed.c), the calls of a variant's instances (embed_call.c). */
#ifndef SAGERUN_PYTHON_EMBED_PY_H
#define SAGERUN_PYTHON_EMBED_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "embed.h"

/* Limited-API builds before 3.11 lack these names; the values are CPython's since 3.3. */
#ifndef PyBUF_READ
#define PyBUF_READ 0x100
#define PyBUF_WRITE 0x200
#endif

/* The functions of the embedded sagerun module (sagerun.py) the calls use. */
typedef struct py_helper {
    PyObject *create, *prepare, *run, *destroy, *describe;
} py_helper;
extern py_helper py_sagerun;

/* The pending Python exception as err ("ValueError: ..."), its traceback logged at debug level
 * (shown under SAGERUN_DEBUG). Returns SAGERUN_UNSUPPORTED for sagerun.Unsupported, else
 * SAGERUN_VARIANT. Called with the GIL held. */
int py_error(const sagerun_host_services *s, const char *variant, char *err, size_t errlen);

/* ---- embed_call.c ---- */
int py_call_create(const py_declared *v, const sagerun_host_services *services,
                   const sagerun_plugin_inputs *inputs, void **state, char *err, size_t errlen);
int py_call_prepare(void *state, char *err, size_t errlen);
int py_call_run(void *state, char *err, size_t errlen);
void py_call_destroy(void *state);

#endif
