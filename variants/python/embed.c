/* embed.so: the one Python interpreter of the process, started as the interpreter bridge.so found
 * (its program name, hence its prefix and virtual environment, and its sys.path), with the GIL
 * released whenever no Python code runs; the embedded sagerun module (python/sagerun/_bridge.py); Python
 * exceptions turned into sagerun errors. Built against the stable ABI only (Py_LIMITED_API). */
#include <stdio.h>
#include <string.h>

#include "embed_py.h"

extern const char py_sagerun_source[]; /* python/sagerun/_bridge.py, embedded by the Makefile (NUL-terminated) */

py_helper py_sagerun;

static PyObject *helper_function(PyObject *module, const char *name)
{
    PyObject *fn = PyObject_GetAttrString(module, name);
    if (fn && !PyCallable_Check(fn)) {
        Py_DECREF(fn);
        PyErr_Format(PyExc_TypeError, "sagerun.%s is not callable", name);
        return NULL;
    }
    return fn;
}

/* The module of the calls. In sagerun's own interpreter: the embedded source
 * (python/sagerun/_bridge.py) imported as `sagerun`, what variant files import. In a Python
 * program that imported the sagerun package (python/): that package's `sagerun._bridge`, the same
 * source, so that its Unsupported is the one variant files raise: one module, not two. */
static PyObject *helper_module(const py_interpreter *interp)
{
    PyObject *modules = interp ? NULL : PyImport_GetModuleDict(); /* borrowed */
    PyObject *package = modules ? PyDict_GetItemString(modules, "sagerun._bridge") : NULL;
    if (package) {
        Py_INCREF(package);
        return package;
    }
    PyObject *code = Py_CompileString(py_sagerun_source, "<sagerun>/sagerun.py", Py_file_input);
    PyObject *module = code ? PyImport_ExecCodeModule("sagerun", code) : NULL;
    Py_XDECREF(code);
    return module;
}

/* Imports the module of the calls and keeps its functions; path: the interpreter's sys.path
 * (NULL: leave the running interpreter's alone). */
static int load_helper(const py_interpreter *interp)
{
    PyObject *module = helper_module(interp);
    if (!module)
        return -1;
    py_sagerun = (py_helper){helper_function(module, "_create"), helper_function(module, "_prepare"),
                             helper_function(module, "_run"), helper_function(module, "_destroy"),
                             helper_function(module, "_describe")};
    int rc = py_sagerun.create && py_sagerun.prepare && py_sagerun.run && py_sagerun.destroy &&
                     py_sagerun.describe ? 0 : -1;
    if (rc == 0 && interp) {
        PyObject *path = PyList_New(0);
        for (size_t i = 0; path && i < interp->n_path; i++) {
            PyObject *entry = PyUnicode_DecodeFSDefault(interp->path[i]);
            if (!entry || PyList_Append(path, entry) != 0)
                Py_CLEAR(path);
            Py_XDECREF(entry);
        }
        PyObject *start = path ? helper_function(module, "_start") : NULL;
        PyObject *r = start ? PyObject_CallFunctionObjArgs(start, path, NULL) : NULL;
        rc = r ? 0 : -1;
        Py_XDECREF(r);
        Py_XDECREF(start);
        Py_XDECREF(path);
    }
    Py_DECREF(module);
    return rc;
}

/* The reason of a failed start, from the pending exception. */
static void start_error(char *err, size_t errlen)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *text = value ? PyObject_Str(value) : NULL;
    PyObject *bytes = text ? PyUnicode_AsUTF8String(text) : NULL;
    snprintf(err, errlen, "starting Python's sagerun module failed: %s",
             bytes ? PyBytes_AsString(bytes) : "no reason given");
    PyErr_Clear();
    Py_XDECREF(bytes);
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

static int start_interpreter(const py_interpreter *interp, char *err, size_t errlen)
{
    bool ours = !Py_IsInitialized();
    PyGILState_STATE gil = PyGILState_UNLOCKED;
    if (ours) {
        /* Python keeps the program name's pointer: decoded once, never freed. */
        wchar_t *name = interp ? Py_DecodeLocale(interp->executable, NULL) : NULL;
        if (!name) {
            snprintf(err, errlen, "cannot decode the interpreter's path %s",
                     interp ? interp->executable : "(none)");
            return SAGERUN_PLUGIN;
        }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        Py_SetProgramName(name); /* as that interpreter: its prefix, its pyvenv.cfg */
#pragma GCC diagnostic pop
        Py_InitializeEx(0);      /* no signal handlers: SIGINT stays sagerun's */
    } else {
        gil = PyGILState_Ensure();
    }
    int rc = load_helper(ours ? interp : NULL);
    if (rc != 0)
        start_error(err, errlen);
    if (ours)
        PyEval_SaveThread(); /* the GIL is taken by each call into Python */
    else
        PyGILState_Release(gil);
    return rc == 0 ? 0 : SAGERUN_PLUGIN;
}

static int embed_start(const py_interpreter *interp, char *err, size_t errlen)
{
    PY_LSAN_DISABLE(); /* as every call into Python (embed_py.h) */
    int rc = start_interpreter(interp, err, errlen);
    PY_LSAN_ENABLE();
    return rc;
}

/* "Type: message" and the traceback of the exception value, or -1. */
static int describe(PyObject *value, char *err, size_t errlen, PyObject **traceback,
                    bool *unsupported)
{
    PyObject *d = PyObject_CallFunctionObjArgs(py_sagerun.describe, value, NULL);
    PyObject *line = d && PyTuple_Check(d) && PyTuple_Size(d) == 3 ? PyTuple_GetItem(d, 0) : NULL;
    PyObject *bytes = line ? PyUnicode_AsUTF8String(line) : NULL;
    if (bytes) {
        snprintf(err, errlen, "%s", PyBytes_AsString(bytes));
        *traceback = PyUnicode_AsUTF8String(PyTuple_GetItem(d, 1));
        *unsupported = PyObject_IsTrue(PyTuple_GetItem(d, 2)) == 1;
    }
    Py_XDECREF(bytes);
    Py_XDECREF(d);
    PyErr_Clear();
    return bytes ? 0 : -1;
}

int py_error(const sagerun_host_services *s, const char *variant, char *err, size_t errlen)
{
    PyObject *type, *value, *tb, *text = NULL;
    bool unsupported = false;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && tb)
        PyException_SetTraceback(value, tb);
    if (!value || describe(value, err, errlen, &text, &unsupported) != 0)
        snprintf(err, errlen, "a Python exception that could not be described");
    if (text && PyBytes_AsString(text))
        s->log(s->host, SAGERUN_LOG_DEBUG, "variant %s: %s", variant, PyBytes_AsString(text));
    PyErr_Clear();
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return unsupported ? SAGERUN_UNSUPPORTED : SAGERUN_VARIANT;
}

static const py_embed_api embed_api = {
    .struct_size = sizeof(py_embed_api),
    .start = embed_start,
    .create = py_call_create,
    .prepare = py_call_prepare,
    .run = py_call_run,
    .destroy = py_call_destroy,
};

SAGERUN_PLUGIN_EXPORT const py_embed_api *sagerun_python_embed(void);
SAGERUN_PLUGIN_EXPORT const py_embed_api *sagerun_python_embed(void)
{
    return &embed_api;
}
