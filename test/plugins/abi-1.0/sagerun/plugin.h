/* FROZEN: sagerun plugin ABI 1.0 exactly as released, for the 1.0 fixtures (test/plugins/abi10_*.c). Never edit.
 * sagerun plugin ABI, version 1.
 *
 * A plugin is a shared object exporting one function, SAGERUN_PLUGIN_ENTRY_NAME, of type
 * sagerun_plugin_entry_fn. The host calls it once after dlopen:
 *
 *   1. The host fills a sagerun_plugin_query: the highest ABI it speaks (major, minor) and its
 *      host-services table.
 *   2. The plugin answers in a sagerun_plugin_answer: the ABI it uses (the major must equal the
 *      host's; the minor may be lower) and a pointer to its variant descriptor — or returns non-zero
 *      after writing a reason into answer->reason (the host reports the file as "init failed").
 *
 * Every struct that crosses the boundary starts with its size (struct_size, in bytes, as the
 * writer compiled it) and only ever grows at the end. A reader never looks at a field the size does
 * not cover; a field it does not know is ignored. The host rejects a descriptor whose struct_size
 * is smaller than the version-1 size (it would miss required fields).
 *
 * Lifetimes: the query and services table outlive every call into the plugin (the host never
 * unloads a plugin it has loaded). The descriptor and its strings must stay valid and unchanged
 * until the process ends (use static storage). Instance state belongs to the plugin from create to
 * destroy.
 *
 * Threads: the host calls a plugin from one thread at a time. Services may be called only from
 * inside a call the host made into the plugin (create, prepare, run, destroy), on that thread.
 *
 * Errors: calls return 0 on success or a negative sagerun_status (sagerun.h); on failure they write
 * a NUL-terminated reason into the `err`/`errlen` buffer the host provides. Plugins never call
 * exit() or abort() and never print to stdout; they log through services->log. */
#ifndef SAGERUN_PLUGIN_H
#define SAGERUN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <sagerun/sagerun.h> /* frozen copy: the only line changed */

#ifdef __cplusplus
extern "C" {
#endif

#define SAGERUN_PLUGIN_ABI_MAJOR 1
#define SAGERUN_PLUGIN_ABI_MINOR 0
#define SAGERUN_PLUGIN_ENTRY_NAME "sagerun_plugin_entry"
#define SAGERUN_PLUGIN_REASON_SIZE 256

#define SAGERUN_PLUGIN_EXPORT __attribute__((visibility("default")))

/* ---- Host services -----------------------------------------------------------------------------
 * Functions the host offers to plugins. Opaque handles (module, function) are owned by the host and
 * live as long as the host (the plugin never frees them). Device addresses are uint64_t. Every
 * function returns 0 or a negative sagerun_status and writes a reason into err (errlen bytes). */
typedef struct sagerun_module sagerun_module;
typedef struct sagerun_function sagerun_function;

typedef enum sagerun_log_level {
    SAGERUN_LOG_ERROR = 0,
    SAGERUN_LOG_WARNING = 1,
    SAGERUN_LOG_INFO = 2,
    SAGERUN_LOG_DEBUG = 3
} sagerun_log_level;

/* Granularities of the sage2 quantizer (SAGE2.md section 1), chosen by the variant. */
typedef struct sagerun_sage2_quant_params {
    uint32_t struct_size;
    uint32_t q_group_rows;  /* rows per Q scale: 32 for the sm89 kernel (16 on Hopper) */
    uint32_t q_block_rows;  /* rows per Q block the scale array is padded to: 128 (64) */
    uint32_t k_block_rows;  /* rows per K scale: 64 (128) */
    uint32_t v_pad_rows;    /* V8's sequence axis is padded to a multiple of this: 64 (128) */
    float v_range;          /* R: 448 for fp32+fp32 accumulation, 2.25 for fp32+fp16 */
} sagerun_sage2_quant_params;

/* sage2-quantized inputs in device (or host) memory; shapes per SAGE2.md section 1. */
typedef struct sagerun_sage2_tensors {
    uint32_t struct_size;
    sagerun_sage2_quant_params params;
    uint64_t q_int8, q_scale;  /* [B,N,Hq,D] (layout), [B,Hq,ceil(N/q_block_rows)*q_block_rows/q_group_rows] */
    uint64_t k_int8, k_scale;  /* [B,N,Hkv,D] (layout), [B,Hkv,ceil(N/k_block_rows)] */
    uint64_t v_fp8, v_scale;   /* [B,D,Hkv,L] NHD or [B,Hkv,D,L] HND, [B,Hkv,D] */
    uint64_t k_mean;           /* [B,1,Hkv,D] fp16 */
    uint32_t q_scale_per_head; /* entries of q_scale per (b, h) */
    uint32_t k_scale_per_head; /* entries of k_scale per (b, h) */
    uint32_t v_len;            /* L */
    uint32_t reserved;
} sagerun_sage2_tensors;

typedef struct sagerun_host_services {
    uint32_t struct_size; /* sizeof as the host compiled it; read only fields it covers */
    uint32_t abi_minor;   /* the host's SAGERUN_PLUGIN_ABI_MINOR */
    void *host;           /* first argument of every call below */

    /* Logging, any level; the host decides what is shown. fmt is printf-style. */
    void (*log)(void *host, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

    /* The backend and compute capability (major*10+minor; 0 on the host backend) of the context
     * the plugin runs in. */
    int (*backend)(void *host);
    int (*compute_capability)(void *host);

    /* Loads a GPU image (fatbin, cubin or NUL-terminated PTX) embedded in the plugin. The image must
     * stay valid while the module is used (static storage). CUDA backend only. A fatbin already
     * loaded in this context (the same bytes) gives the same module: instances of one variant
     * share their code, and module-wide state (globals) with it. */
    int (*module_load)(void *host, const void *image, sagerun_module **module, char *err,
                       size_t errlen);
    int (*module_get_function)(void *host, sagerun_module *module, const char *name,
                               sagerun_function **fn, char *err, size_t errlen);
    /* Raises the function's limit of dynamic shared memory to `bytes` (needed above 48 KiB). */
    int (*function_set_max_dynamic_smem)(void *host, sagerun_function *fn, uint32_t bytes,
                                         char *err, size_t errlen);
    /* Launches on the context's stream; params is the kernel parameter array as for
     * cuLaunchKernel. Launch errors are reported here; errors of the running kernel surface at
     * the next synchronisation. */
    int (*launch)(void *host, sagerun_function *fn, const uint32_t grid[3],
                  const uint32_t block[3], uint32_t dynamic_smem_bytes, void **params, char *err,
                  size_t errlen);

    /* Memory of the context (device memory on CUDA, host memory on the host backend). */
    int (*mem_alloc)(void *host, uint64_t bytes, uint64_t *addr, char *err, size_t errlen);
    void (*mem_free)(void *host, uint64_t addr);
    int (*mem_fill)(void *host, uint64_t addr, uint8_t byte, uint64_t bytes, char *err,
                    size_t errlen);

    /* The sage2 quantizer (SAGE2.md section 1) on the context's backend, for variants that
     * quantize themselves (e.g. with other granularities, or inside their own timed run); a
     * variant declaring SAGERUN_INPUT_SAGE2 gets its inputs quantized by the host without this.
     * Allocates every tensor of *out; free them with sage2_tensors_free. Synchronous. */
    int (*sage2_quantize)(void *host, const sagerun_problem *problem, uint64_t q, uint64_t k,
                          uint64_t v, const sagerun_sage2_quant_params *params,
                          sagerun_sage2_tensors *out, char *err, size_t errlen);
    void (*sage2_tensors_free)(void *host, sagerun_sage2_tensors *tensors);
} sagerun_host_services;

/* ---- Problems as the plugin sees them ----------------------------------------------------------
 * The inputs of one instance. Which fields are set depends on the descriptor's input_kind; all
 * addresses are in the context's memory and owned by the host. */
typedef enum sagerun_input_kind {
    SAGERUN_INPUT_FP16 = 0,  /* q, k, v in the problem's dtype and layout */
    SAGERUN_INPUT_SAGE2 = 1  /* sage2 (quantized by the host with the descriptor's quant params) */
} sagerun_input_kind;

typedef struct sagerun_plugin_inputs {
    uint32_t struct_size;
    sagerun_problem problem;
    uint64_t q, k, v;                 /* always set */
    const sagerun_sage2_tensors *sage2; /* set for SAGERUN_INPUT_SAGE2, else NULL */
    uint64_t o;                       /* output: problem dtype and layout, owned by the host */
} sagerun_plugin_inputs;

/* Launch geometry of a variant for a problem: the report's "scheduler". */
typedef struct sagerun_launch_geometry {
    uint32_t struct_size;
    uint32_t cta_q, cta_k, warp_q, warp_k;
    uint32_t threads_per_cta;
    uint32_t dynamic_shared_memory_bytes;
    uint64_t grid_ctas;
} sagerun_launch_geometry;

/* ---- The variant descriptor --------------------------------------------------------------------*/
typedef struct sagerun_variant_descriptor {
    uint32_t struct_size; /* sizeof(sagerun_variant_descriptor) as the plugin compiled it */
    uint32_t abi_major;   /* SAGERUN_PLUGIN_ABI_MAJOR the plugin was built against */
    const char *name;        /* unique variant name: [a-z0-9._-]+, at most 63 characters */
    const char *version;     /* free-form, e.g. "1.0.0" */
    const char *description; /* one line */
    int backend;                /* sagerun_backend */
    int min_compute_capability; /* major*10+minor, 0 for host variants */
    int input_kind;             /* sagerun_input_kind */
    sagerun_sage2_quant_params quant; /* read for SAGERUN_INPUT_SAGE2 only */

    /* Says whether the variant can run `problem` and fills its geometry. Returns
     * SAGERUN_UNSUPPORTED with a reason ("head_dim 96 not supported, only 64 and 128") when not.
     * Must not call services. Required. */
    int (*geometry)(const sagerun_problem *problem, sagerun_launch_geometry *geometry, char *err,
                    size_t errlen);
    /* Creates the instance state for one set of inputs (load modules, allocate scratch). The
     * inputs struct and the memory it names stay valid until destroy. Required. */
    int (*create)(const sagerun_host_services *services, const sagerun_plugin_inputs *inputs,
                  void **state, char *err, size_t errlen);
    /* Work done once before the timed runs. Optional (NULL). */
    int (*prepare)(void *state, char *err, size_t errlen);
    /* One attention call writing inputs->o; the timed region. CUDA variants only enqueue work on
     * the host's stream (services->launch) and return. Required. */
    int (*run)(void *state, char *err, size_t errlen);
    /* Frees everything create made. state may be NULL. Required. */
    void (*destroy)(void *state);
} sagerun_variant_descriptor;

/* ---- The entry point ---------------------------------------------------------------------------*/
typedef struct sagerun_plugin_query {
    uint32_t struct_size;
    uint32_t abi_major; /* the host's SAGERUN_PLUGIN_ABI_MAJOR */
    uint32_t abi_minor; /* the host's SAGERUN_PLUGIN_ABI_MINOR */
    uint32_t reserved;
    const sagerun_host_services *services;
} sagerun_plugin_query;

typedef struct sagerun_plugin_answer {
    uint32_t struct_size; /* set by the host: the bytes the plugin may write */
    uint32_t abi_major;   /* set by the plugin */
    uint32_t abi_minor;   /* set by the plugin */
    uint32_t reserved;
    const sagerun_variant_descriptor *variant; /* set by the plugin */
    char reason[SAGERUN_PLUGIN_REASON_SIZE];   /* set by the plugin when it refuses */
} sagerun_plugin_answer;

typedef int (*sagerun_plugin_entry_fn)(const sagerun_plugin_query *query,
                                       sagerun_plugin_answer *answer);

/* Plugins define exactly this function:
 *   SAGERUN_PLUGIN_EXPORT int sagerun_plugin_entry(const sagerun_plugin_query *query,
 *                                                  sagerun_plugin_answer *answer);
 * It may be called more than once (e.g. once per registry) and must be idempotent. */
SAGERUN_PLUGIN_EXPORT int sagerun_plugin_entry(const sagerun_plugin_query *query,
                                               sagerun_plugin_answer *answer);

/* Defines sagerun_plugin_entry for the usual plugin, one static descriptor: a host of another ABI
 * major is refused with both versions in the reason; otherwise the answer is this header's ABI
 * and the descriptor. Use once, at file scope: SAGERUN_PLUGIN_DEFINE_ENTRY(my_descriptor) */
#define SAGERUN_PLUGIN_DEFINE_ENTRY(descriptor)                                                    \
    SAGERUN_PLUGIN_EXPORT int sagerun_plugin_entry(const sagerun_plugin_query *query,              \
                                                   sagerun_plugin_answer *answer)                  \
    {                                                                                              \
        if (query->abi_major != SAGERUN_PLUGIN_ABI_MAJOR) {                                        \
            snprintf(answer->reason, sizeof answer->reason,                                        \
                     "built for plugin ABI %d.%d, the host speaks %u.%u",                          \
                     SAGERUN_PLUGIN_ABI_MAJOR, SAGERUN_PLUGIN_ABI_MINOR, query->abi_major,         \
                     query->abi_minor);                                                            \
            return -1;                                                                             \
        }                                                                                          \
        answer->abi_major = SAGERUN_PLUGIN_ABI_MAJOR;                                              \
        answer->abi_minor = SAGERUN_PLUGIN_ABI_MINOR;                                              \
        answer->variant = &(descriptor);                                                           \
        return 0;                                                                                  \
    }

#ifdef __cplusplus
}
#endif
#endif
