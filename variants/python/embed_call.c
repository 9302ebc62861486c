/* embed.so: the calls of a Python variant's instance. create hands the embedded sagerun module a
 * description of the instance (its declaration, problem, parameters, device, and sagerun's
 * buffers: memoryviews on the host, device addresses on CUDA), which makes the Call with its views
 * and runs the variant's create hook; prepare adds the sage2 tensors; run calls the variant's run.
 * Each call holds the GIL only while Python runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "embed_py.h"

typedef struct py_instance {
    const sagerun_host_services *services;
    const sagerun_plugin_inputs *inputs;
    const py_declared *decl;
    PyObject *call; /* sagerun.Call */
} py_instance;

/* One of sagerun's buffers: a memoryview on the host (q, k, v read-only), the address on CUDA. */
static PyObject *buffer(const py_declared *d, uint64_t addr, uint64_t bytes, bool writable)
{
    if (d->backend == SAGERUN_BACKEND_CUDA)
        return PyLong_FromUnsignedLongLong(addr);
    return PyMemoryView_FromMemory((char *)(uintptr_t)addr, (Py_ssize_t)bytes,
                                   writable ? PyBUF_WRITE : PyBUF_READ);
}

/* Sets d[key] to value (a new reference, taken); false where either failed. */
static bool put(PyObject *d, const char *key, PyObject *value)
{
    bool ok = value && PyDict_SetItemString(d, key, value) == 0;
    Py_XDECREF(value);
    return ok;
}

static uint32_t kv_len_of(const sagerun_problem *p)
{
    return p->kv_len ? p->kv_len : p->seq_len;
}

/* (1.2) The problem's fields beyond one length: kv_len as it is (seq_len where 0), the alignment
 * as a word, the window as None or (left, right), the varlen and paged sizes. */
static bool problem_12(PyObject *d, const sagerun_problem *p)
{
    PyObject *window = p->window ? Py_BuildValue("(ii)", p->window_left, p->window_right)
                                 : (Py_INCREF(Py_None), Py_None);
    return put(d, "kv_len", PyLong_FromUnsignedLong(kv_len_of(p))) &&
           put(d, "align", PyUnicode_FromString(p->align == SAGERUN_ALIGN_BOTTOM_RIGHT
                                                    ? "bottom-right"
                                                    : "top-left")) &&
           put(d, "window", window) && put(d, "softcap", PyFloat_FromDouble(p->softcap)) &&
           put(d, "varlen", PyBool_FromLong(p->varlen != 0)) &&
           put(d, "total_q", PyLong_FromUnsignedLong(p->total_q)) &&
           put(d, "total_kv", PyLong_FromUnsignedLong(p->total_kv)) &&
           put(d, "page_size", PyLong_FromUnsignedLong(p->page_size)) &&
           put(d, "pages", PyLong_FromUnsignedLong(p->pages)) &&
           put(d, "pages_per_seq", PyLong_FromUnsignedLong(p->pages_per_seq));
}

static PyObject *problem_dict(const sagerun_problem *p)
{
    /* the problem's scale, or D^-0.5 as the reference computes it (double precision) */
    double scale = p->sm_scale > 0 ? p->sm_scale : 1.0 / sqrt((double)p->head_dim);
    PyObject *d = Py_BuildValue("{s:I,s:I,s:I,s:I,s:I,s:s,s:s,s:N,s:d}", "batch", p->batch,
                                "seq_len", p->seq_len, "heads_q", p->heads_q, "heads_kv",
                                p->heads_kv, "head_dim", p->head_dim, "layout",
                                p->layout == SAGERUN_LAYOUT_HND ? "HND" : "NHD", "dtype",
                                p->dtype == SAGERUN_DTYPE_BF16 ? "bf16" : "fp16", "causal",
                                PyBool_FromLong(p->causal != 0), "sm_scale", scale);
    if (d && !problem_12(d, p))
        Py_CLEAR(d);
    return d;
}

static PyObject *params_dict(const py_declared *d, const sagerun_plugin_inputs *in)
{
    PyObject *params = PyDict_New();
    for (uint32_t k = 0; params && k < d->n_params && k < in->n_param_values; k++) {
        double v = in->param_values[k];
        int type = d->params[k].type;
        PyObject *value = type == SAGERUN_PARAM_INT    ? PyLong_FromLongLong((long long)v)
                          : type == SAGERUN_PARAM_BOOL ? PyBool_FromLong(v != 0)
                                                       : PyFloat_FromDouble(v);
        if (!value || PyDict_SetItemString(params, d->keys[k], value) != 0)
            Py_CLEAR(params);
        Py_XDECREF(value);
    }
    return params;
}

static PyObject *device_dict(const sagerun_plugin_device *dev)
{
    static const sagerun_plugin_device none = {.struct_size = sizeof none};
    const sagerun_plugin_device *x = dev ? dev : &none;
    return Py_BuildValue("{s:s,s:i,s:I,s:I,s:I,s:I,s:I}", "name", x->name, "compute_capability",
                         x->compute_capability, "sm_count", x->sm_count,
                         "shared_memory_per_block", x->shared_memory_per_block,
                         "shared_memory_per_block_optin", x->shared_memory_per_block_optin,
                         "shared_memory_per_sm", x->shared_memory_per_sm, "l2_bytes",
                         x->l2_bytes);
}

/* An int32 array of sagerun's of n entries (cu_seqlens, the block table), or None where the
 * problem has none (address 0). */
static PyObject *int32_buffer(const py_declared *d, uint64_t addr, uint64_t n)
{
    if (!addr)
        return Py_INCREF(Py_None), Py_None;
    return buffer(d, addr, n * sizeof(int32_t), false);
}

/* Q, K, V, O as stored (sagerun.h's sagerun_problem_q_elements / _kv_elements: packed [total, H,
 * D] varlen, the page cache paged, kv_len rows of K and V dense) and the sequences' arrays. */
static PyObject *buffers_dict(const py_declared *d, const sagerun_plugin_inputs *in)
{
    const sagerun_problem *p = &in->problem;
    uint64_t q_rows = p->varlen ? p->total_q : (uint64_t)p->batch * p->seq_len;
    uint64_t kv_rows = p->page_size ? (uint64_t)p->pages * p->page_size
                       : p->varlen  ? p->total_kv
                                    : (uint64_t)p->batch * kv_len_of(p);
    uint64_t q = q_rows * p->heads_q * p->head_dim * 2;
    uint64_t kv = kv_rows * p->heads_kv * p->head_dim * 2;
    uint64_t table = (uint64_t)p->batch * p->pages_per_seq;
    return Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:N,s:N}", "q", buffer(d, in->q, q, false), "k",
                         buffer(d, in->k, kv, false), "v", buffer(d, in->v, kv, false), "o",
                         buffer(d, in->o, q, true), "cu_seqlens_q",
                         int32_buffer(d, in->cu_seqlens_q, p->batch + 1ull), "cu_seqlens_kv",
                         int32_buffer(d, in->cu_seqlens_kv, p->batch + 1ull), "block_table",
                         int32_buffer(d, in->block_table, table));
}

/* What sagerun._create makes the Call from. */
static PyObject *instance_spec(const py_declared *d, const sagerun_host_services *s,
                               const sagerun_plugin_inputs *in)
{
    bool has_stream = s->struct_size >= offsetof(sagerun_host_services, cuda_stream) +
                                            sizeof s->cuda_stream && s->cuda_stream;
    uintptr_t stream = has_stream ? (uintptr_t)s->cuda_stream(s->host) : 0;
    PyObject *extension = d->extension[0] ? PyUnicode_DecodeFSDefault(d->extension)
                                          : (Py_INCREF(Py_None), Py_None);
    PyObject *functions = Py_BuildValue("{s:s,s:s,s:s,s:s}", "run", d->run, "create", d->create,
                                        "prepare", d->prepare, "destroy", d->destroy);
    return Py_BuildValue("{s:s,s:N,s:i,s:s,s:s,s:N,s:N,s:N,s:N,s:N,s:N,s:K}", "name", d->name,
                         "script", PyUnicode_DecodeFSDefault(d->script), "line", d->line,
                         "backend", d->backend == SAGERUN_BACKEND_CUDA ? "cuda" : "host",
                         "input", d->input_kind == SAGERUN_INPUT_SAGE2 ? "sage2" : "fp16",
                         "functions", functions, "problem", problem_dict(&in->problem), "params",
                         params_dict(d, in), "device", device_dict(in->device), "extension",
                         extension, "buffers", buffers_dict(d, in), "stream",
                         (unsigned long long)stream);
}

int py_call_create(const py_declared *d, const sagerun_host_services *s,
                   const sagerun_plugin_inputs *in, void **state, char *err, size_t errlen)
{
    py_instance *inst = calloc(1, sizeof *inst);
    if (!inst) {
        snprintf(err, errlen, "out of memory");
        return SAGERUN_OUT_OF_MEMORY;
    }
    *inst = (py_instance){.services = s, .inputs = in, .decl = d};
    PyGILState_STATE gil = py_enter();
    PyObject *spec = instance_spec(d, s, in);
    inst->call = spec ? PyObject_CallFunctionObjArgs(py_sagerun.create, spec, NULL) : NULL;
    Py_XDECREF(spec);
    int rc = inst->call ? 0 : py_error(s, d->name, err, errlen);
    py_leave(gil);
    if (rc != 0) {
        free(inst);
        return rc;
    }
    *state = inst;
    return 0;
}

/* The sage2 tensors (filled by the host before prepare) for sagerun._prepare. */
static PyObject *sage2_dict(const py_declared *d, const sagerun_plugin_inputs *in)
{
    const sagerun_problem *p = &in->problem;
    const sagerun_sage2_tensors *t = in->sage2;
    const sagerun_sage2_quant_params *g = &t->params;
    uint64_t B = p->batch, N = p->seq_len, KV = kv_len_of(p), Hq = p->heads_q, Hkv = p->heads_kv;
    uint64_t D = p->head_dim; /* dense only (the host's quantizer): K has kv_len rows */
    return Py_BuildValue(
        "{s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:d}",
        "q_int8", buffer(d, t->q_int8, B * N * Hq * D, false),
        "q_scale", buffer(d, t->q_scale, B * Hq * t->q_scale_per_head * 4, false),
        "k_int8", buffer(d, t->k_int8, B * KV * Hkv * D, false),
        "k_scale", buffer(d, t->k_scale, B * Hkv * t->k_scale_per_head * 4, false),
        "v_fp8", buffer(d, t->v_fp8, B * Hkv * D * t->v_len, false),
        "v_scale", buffer(d, t->v_scale, B * Hkv * D * 4, false),
        "k_mean", buffer(d, t->k_mean, B * Hkv * D * 2, false),
        "q_scale_per_head", t->q_scale_per_head, "k_scale_per_head", t->k_scale_per_head,
        "v_len", t->v_len, "q_group_rows", g->q_group_rows, "q_block_rows", g->q_block_rows,
        "k_block_rows", g->k_block_rows, "v_pad_rows", g->v_pad_rows, "v_range",
        (double)g->v_range);
}

int py_call_prepare(void *state, char *err, size_t errlen)
{
    py_instance *inst = state;
    const sagerun_plugin_inputs *in = inst->inputs;
    PyGILState_STATE gil = py_enter();
    PyObject *sage2 = inst->decl->input_kind == SAGERUN_INPUT_SAGE2 && in->sage2
                          ? sage2_dict(inst->decl, in)
                          : (Py_INCREF(Py_None), Py_None);
    PyObject *r = sage2 ? PyObject_CallFunctionObjArgs(py_sagerun.prepare, inst->call, sage2, NULL)
                        : NULL;
    int rc = r ? 0 : py_error(inst->services, inst->decl->name, err, errlen);
    Py_XDECREF(r);
    Py_XDECREF(sage2);
    py_leave(gil);
    return rc;
}

int py_call_run(void *state, char *err, size_t errlen)
{
    py_instance *inst = state;
    PyGILState_STATE gil = py_enter();
    PyObject *r = PyObject_CallFunctionObjArgs(py_sagerun.run, inst->call, NULL);
    int rc = r ? 0 : py_error(inst->services, inst->decl->name, err, errlen);
    Py_XDECREF(r);
    py_leave(gil);
    return rc;
}

void py_call_destroy(void *state)
{
    py_instance *inst = state;
    char err[SAGERUN_PLUGIN_MIN_ERRLEN];
    PyGILState_STATE gil = py_enter();
    PyObject *r = PyObject_CallFunctionObjArgs(py_sagerun.destroy, inst->call, NULL);
    if (!r && py_error(inst->services, inst->decl->name, err, sizeof err) != 0)
        inst->services->log(inst->services->host, SAGERUN_LOG_WARNING, "variant %s: destroy: %s",
                            inst->decl->name, err);
    Py_XDECREF(r);
    Py_DECREF(inst->call);
    py_leave(gil);
    free(inst);
}
