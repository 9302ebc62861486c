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

/* Entering Python: the GIL; and, in an AddressSanitizer build, LeakSanitizer told that what the
 * interpreter allocates meanwhile is the interpreter's. The one interpreter of the process is never
 * finalized (its objects live until the process ends) and CPython is not built for LeakSanitizer,
 * which would report them as leaks of sagerun's. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define PY_LSAN_DISABLE() __lsan_disable()
#define PY_LSAN_ENABLE() __lsan_enable()
#else
#define PY_LSAN_DISABLE() ((void)0)
#define PY_LSAN_ENABLE() ((void)0)
#endif

static inline PyGILState_STATE py_enter(void)
{
    PY_LSAN_DISABLE();
    return PyGILState_Ensure();
}

static inline void py_leave(PyGILState_STATE gil)
{
    PyGILState_Release(gil);
    PY_LSAN_ENABLE();
}

/* The functions of the embedded sagerun module (python/sagerun/_bridge.py) the calls use. */
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
