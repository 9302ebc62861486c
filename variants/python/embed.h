/* The two halves of sagerun's Python bridge and what passes between them.
 *
 *   bridge.so  what the registry loads (script_bridge.h): reads the declaration lines of .py
 *              files, gives each declared variant a descriptor, and on first use finds the
 *              interpreter (interpreter.c), loads its libpython with RTLD_GLOBAL and then
 *              embed.so. It has no Python symbol, so it loads with RTLD_NOW anywhere.
 *   embed.so   built against Python's stable ABI (Py_LIMITED_API, abi3): one build runs with any
 *              CPython from PY_EMBED_MIN_VERSION on. Its Py* symbols resolve against the libpython
 *              bridge.so loaded; it exports one function, PY_EMBED_API_NAME, giving this table.
 *
 * Plain C types only: bridge.c is compiled without Python.h. */
#ifndef SAGERUN_PYTHON_EMBED_H
#define SAGERUN_PYTHON_EMBED_H

#include <linux/limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sagerun/plugin.h>

#define PY_EMBED_API_NAME "sagerun_python_embed"
#define PY_EMBED_MIN_VERSION 0x03090000 /* Py_LIMITED_API of embed.so: CPython 3.9 */
#define PY_NAME_MAX 64                  /* variant names, Python function names */
#define PY_MAX_HEAD_DIMS 16             /* head_dims= entries of one declaration */

/* One declared variant: a declaration line of a .py file, parsed (declare.c). */
typedef struct py_declared {
    char name[PY_NAME_MAX];
    char version[32];
    char description[256];
    char script[PATH_MAX]; /* the .py file, real path */
    int line;              /* of the declaration */
    /* Python functions of the script: run is required, the hooks are optional ("") */
    char run[PY_NAME_MAX], create[PY_NAME_MAX], prepare[PY_NAME_MAX], destroy[PY_NAME_MAX];
    int backend;    /* sagerun_backend */
    int input_kind; /* sagerun_input_kind */
    int min_cc;
    bool graph;     /* declares SAGERUN_VARIANT_GRAPH_CAPTURABLE */
    float v_range;  /* sage2: V's FP8 range (448: fp32+fp32 accumulation) */
    char extension[PATH_MAX]; /* the extension module it loads ("" none), resolved */
    /* (ABI 1.2) what it does beyond the 1.1 problem (features=), the dtypes it takes (dtypes=:
     * bits 1u << sagerun_dtype, 0: both) and the head dims (head_dims=, none: any) */
    uint32_t features, dtypes, n_head_dims;
    uint32_t head_dims[PY_MAX_HEAD_DIMS];
    uint32_t n_params;
    sagerun_param_decl params[SAGERUN_PLUGIN_MAX_PARAMS]; /* key, description point below */
    char keys[SAGERUN_PLUGIN_MAX_PARAMS][SAGERUN_PLUGIN_MAX_KEY + 1];
    char param_text[SAGERUN_PLUGIN_MAX_PARAMS][128];
} py_declared;

/* The interpreter bridge.so found: what embed.so starts. */
typedef struct py_interpreter {
    const char *executable;  /* sys.executable of the interpreter (a venv's own python) */
    const char *const *path; /* its sys.path, n_path entries */
    size_t n_path;
} py_interpreter;

typedef struct py_embed_api {
    uint32_t struct_size;
    /* Starts the one interpreter of the process (then releases the GIL). Called once. */
    int (*start)(const py_interpreter *interp, char *err, size_t errlen);
    /* The plugin.h calls of a Python variant; state is embed.so's. */
    int (*create)(const py_declared *v, const sagerun_host_services *services,
                  const sagerun_plugin_inputs *inputs, void **state, char *err, size_t errlen);
    int (*prepare)(void *state, char *err, size_t errlen);
    int (*run)(void *state, char *err, size_t errlen);
    void (*destroy)(void *state);
} py_embed_api;

typedef const py_embed_api *(*py_embed_api_fn)(void);

#endif
