/* The descriptors of the Python variants declared in this process. plugin.h's create does not say
 * which variant it is called for (descriptors are static, each with its own functions), so every
 * slot has a create of its own that passes its declaration on; prepare, run and destroy get the
 * instance's state and are shared. A declaration seen again (another registry, the same file)
 * gets its slot back: the entry point stays idempotent. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"

typedef struct py_slot {
    py_declared decl; /* canonical: its params' key/description pointers NULL */
    sagerun_param_decl params[SAGERUN_PLUGIN_MAX_PARAMS]; /* pointing into decl */
    sagerun_sage2_quant_params quant; /* input=sage2: the sm89 kernel's granularities */
    sagerun_variant_descriptor desc;
} py_slot;

static py_slot *slots[PY_MAX_SLOTS];
static unsigned n_slots;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

#define PY_SLOT_LIST(X)                                                                            \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16)   \
    X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)     \
    X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39) X(40) X(41) X(42) X(43) X(44) X(45) X(46)     \
    X(47) X(48) X(49) X(50) X(51) X(52) X(53) X(54) X(55) X(56) X(57) X(58) X(59) X(60) X(61)     \
    X(62) X(63)

#define PY_SLOT_CREATE(i)                                                                          \
    static int slot_create_##i(const sagerun_host_services *s, const sagerun_plugin_inputs *in,  \
                               void **state, char *err, size_t errlen)                             \
    {                                                                                              \
        return py_bridge_create(&slots[i]->decl, s, in, state, err, errlen);                     \
    }
PY_SLOT_LIST(PY_SLOT_CREATE)

typedef int (*py_create_fn)(const sagerun_host_services *, const sagerun_plugin_inputs *, void **,
                            char *, size_t);
#define PY_SLOT_ENTRY(i) slot_create_##i,
static const py_create_fn slot_creates[PY_MAX_SLOTS] = {PY_SLOT_LIST(PY_SLOT_ENTRY)};
_Static_assert(sizeof slot_creates / sizeof slot_creates[0] == PY_MAX_SLOTS, "one per slot");

/* A Python variant has no launch geometry of its own (the report then has no "scheduler"). */
static int py_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *err,
                       size_t errlen)
{
    (void)p, (void)g, (void)err, (void)errlen;
    return 0;
}

static void fill_descriptor(py_slot *s, unsigned index)
{
    const py_declared *d = &s->decl;
    for (uint32_t k = 0; k < d->n_params; k++) {
        s->params[k] = d->params[k];
        s->params[k].key = d->keys[k];
        s->params[k].description = d->param_text[k];
    }
    s->quant = (sagerun_sage2_quant_params){
        .struct_size = sizeof s->quant, .q_group_rows = 32, .q_block_rows = 128,
        .k_block_rows = 64, .v_pad_rows = 64, .v_range = d->v_range};
    s->desc = (sagerun_variant_descriptor){
        .struct_size = sizeof s->desc,
        .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
        .name = d->name,
        .version = d->version,
        .description = d->description,
        .backend = d->backend,
        .min_compute_capability = d->backend == SAGERUN_BACKEND_CUDA ? d->min_cc : 0,
        /* input=sage2 asks for the sage2 extension by id (sage2.h), else plain fp16 inputs */
        .input_id = d->input_kind == SAGERUN_INPUT_SAGE2 ? SAGERUN_SAGE2_EXTENSION_ID : NULL,
        .input_params = d->input_kind == SAGERUN_INPUT_SAGE2 ? &s->quant : NULL,
        .geometry = py_geometry,
        .create = slot_creates[index],
        .prepare = py_bridge_prepare,
        .run = py_bridge_run,
        .destroy = py_bridge_destroy,
        .flags = d->graph ? SAGERUN_VARIANT_GRAPH_CAPTURABLE : 0,
        .n_params = d->n_params,
        .params = d->n_params ? s->params : NULL,
        /* 1.2: the host refuses, before create, a problem needing what is not declared */
        .features = d->features,
        .dtypes = d->dtypes,
        .n_head_dims = d->n_head_dims,
        .head_dims = d->n_head_dims ? d->head_dims : NULL,
    };
}

const sagerun_variant_descriptor *py_slot_intern(const py_declared *d, const py_declared **kept,
                                                 char *err, size_t errlen)
{
    py_slot *canon = calloc(1, sizeof *canon);
    if (!canon) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    canon->decl = *d;
    for (uint32_t k = 0; k < SAGERUN_PLUGIN_MAX_PARAMS; k++)
        canon->decl.params[k].key = canon->decl.params[k].description = NULL;
    pthread_mutex_lock(&slots_lock);
    py_slot *s = NULL;
    for (unsigned i = 0; i < n_slots && !s; i++)
        if (memcmp(&slots[i]->decl, &canon->decl, sizeof canon->decl) == 0)
            s = slots[i];
    if (!s && n_slots < PY_MAX_SLOTS) {
        fill_descriptor(canon, n_slots);
        s = slots[n_slots++] = canon; /* kept until the process ends */
        canon = NULL;
    }
    pthread_mutex_unlock(&slots_lock);
    free(canon);
    if (!s) {
        snprintf(err, errlen, "more than %d Python variants in one process", PY_MAX_SLOTS);
        return NULL;
    }
    *kept = &s->decl;
    return &s->desc;
}
