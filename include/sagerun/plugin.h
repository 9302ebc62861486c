/* sagerun plugin ABI, version 1.2 — the specification.
 *
 * This header is the whole contract between sagerun (the host) and a variant plugin, with the
 * headers of the extensions a plugin asks for (section 10; sage2.h). A plugin written from these
 * texts alone is correct; nothing elsewhere adds rules. MUST, MUST NOT and MAY
 * are meant as in RFC 2119. Tags in brackets say where a call happens, as clap/plugin.h does:
 * [loader] the thread that loads plugins; [instance-thread] the thread that owns the instance;
 * [any] any thread. (CLAP and LV2 are the models; nothing is copied from them.)
 *
 * 1. Loading [loader]
 *    A plugin is a shared object exporting one function, SAGERUN_PLUGIN_ENTRY_NAME, of type
 *    sagerun_plugin_entry_fn. The host dlopens it (RTLD_NOW | RTLD_LOCAL) in a scanner process
 *    first (unless it holds a verdict on the same file), then in its own, and calls the entry
 *    point once per registry: it runs more than once and MUST be idempotent and side-effect
 *    free (no allocation that must be freed, no device work, no printing).
 *    The host fills a sagerun_plugin_query (its highest ABI: major, minor). The plugin answers:
 *    the ABI it uses (major MUST equal the host's; minor MAY be lower, MUST NOT be higher) and
 *    either one descriptor (answer->variant, ABI 1.0) or, from 1.1, a factory (answer->factory,
 *    several variants per file; written only when answer->struct_size covers it). To refuse it
 *    returns a negative sagerun_status after writing a NUL-terminated reason into answer->reason.
 *    Once the entry point has run, the host never unloads the plugin (no dlclose): descriptors
 *    and code stay valid until the process ends.
 *
 * 2. Sizes [all structs]
 *    Every struct that crosses the boundary starts with struct_size (bytes, as its writer
 *    compiled it) and only ever grows at the end. A reader MUST NOT read a field the size does not
 *    cover, and ignores fields it does not know. The host rejects a descriptor smaller than the
 *    1.0 size. Fields marked (1.1) are read wherever struct_size covers them, whatever minor the
 *    answer gives: a descriptor built with 1.1 headers has them (zero them to leave them out).
 *
 * 3. Lifetimes and ownership
 *    - query and answer: valid only during the entry call. The plugin MUST NOT keep pointers to
 *      them, nor to query->services (a table of the loading context; it is not the table `create`
 *      receives).
 *    - descriptors, factories, parameter declarations and their strings: static storage, valid and
 *      unchanged until the process ends.
 *    - services (argument of create): valid from create until destroy of that instance returns;
 *      the plugin MAY keep it in its state. Opaque handles it returns (module, function) are the
 *      host's, live as long as the host's context, and are never freed by the plugin.
 *    - inputs (argument of create), the memory it names, the output o: the host's, valid until
 *      destroy returns.
 *    - state (*state of create): the plugin's, from a successful create until destroy.
 *
 * 4. The lifecycle of an instance (one variant bound to one set of inputs)
 *
 *        geometry ──► create ──ok──► CREATED ──prepare──► PREPARED ──run──► PREPARED ...
 *                       │             │  ▲ fail              │
 *                       fail          │  └──── (again) ◄─────┘
 *                       ▼             ▼                      ▼
 *                     (gone)        destroy ◄──────────── destroy
 *
 *    - geometry (or geometry_with, 1.1) is called [loader or instance-thread] before create
 *      and MAY be called at any time for any problem, with no instance. It MUST be a pure function
 *      of its arguments: no services, no allocation, no device work.
 *    - create failing (non-zero): the host does NOT call destroy; the plugin MUST free whatever
 *      it allocated before returning, and *state is ignored.
 *    - prepare is called once before the first run. When it fails the instance stays CREATED; the
 *      host MAY call prepare again (it does so before a later run), or destroy. prepare MUST
 *      therefore be callable again after a failure. A NULL prepare counts as a success.
 *    - run is called only in PREPARED, any number of times. A failing run leaves the instance
 *      PREPARED (the host MAY run again, or destroy).
 *    - destroy is called exactly once per successful create, in any state, and MUST release
 *      everything create and prepare made. destroy MAY be given NULL (do nothing).
 *    - Several instances of one variant (and of one file) are alive at once (an A/A comparison,
 *      a baseline and its candidate). Instances MUST NOT share mutable state except through
 *      what the host shares (a module loaded twice is one module, 1.1 services).
 *
 * 5. Threads
 *    An instance is called from one thread at a time ([instance-thread]); the library allows one
 *    instance per thread concurrently, so different instances MAY be called from different
 *    threads at the same time. The entry point and geometry MUST be reentrant. Services MUST be
 *    called only from inside a call the host made into that instance (create, prepare, run,
 *    destroy), on that thread. log is the exception: [any] during those calls.
 *
 * 6. Rules of run (the timed region)
 *    run MUST enqueue the whole attention call on the host's stream and return: on the CUDA
 *    backend it MUST NOT synchronise (device, context or stream), allocate or free memory (device
 *    or pinned), load modules, print, or use any stream but the host's. On the host backend it
 *    computes synchronously. With SAGERUN_VARIANT_GRAPH_CAPTURABLE (1.1) it additionally MUST
 *    be capturable into a CUDA graph: only kernel launches and async copies/fills on the host's
 *    stream, the same work every call (no host-side branching on device results).
 *
 * 7. The output contract
 *    What it computes: for batch b, query head h, query row i, O = softmax(s * Q K^T) V over the
 *    keys j of KV head h / (Hq / Hkv) (grouped-query attention: consecutive query heads share one
 *    KV head), with s = sagerun_problem_sm_scale(&inputs->problem) (problem.sm_scale 0 means
 *    D^-0.5: a plugin MAY call that one function, or compute the same), and with causal, only
 *    the keys j <= i. The rounding of the output dtype is the variant's own: byte-exactness with
 *    the baseline is what the comparison judges, accuracy against exact attention beside it.
 *    On the host backend every address (q, k, v, o, the inputs of an input kind) is a CPU
 *    pointer cast to uint64_t; on CUDA a device address.
 *    The output o (inputs->o) has the problem's dtype and layout, batch*seq_len*heads_q*head_dim
 *    elements, starts 256-byte aligned (on CUDA at a 2 MiB page of its own) and is owned by the
 *    host; q, k, v are 256-byte aligned too. Before each checked call (hashing, accuracy) the host
 *    fills o with 0xFF bytes (NaN in fp16/bf16); timed calls run over the previous output. Every
 *    run MUST therefore write every element of o (one it skips shows as NaN and as different
 *    bytes). The host reads o only after synchronising its stream. q, k, v (and the inputs of an
 *    input kind a variant is given, section 10) MUST NOT be written: every variant of a comparison
 *    shares them. `sagerun compare` keeps a copy and checks them after every checked call: a
 *    variant that wrote into them fails ("wrote into the inputs the variants share") and the
 *    copy is put back for the others. Nothing past the end of o may be written either: the host
 *    fills the 64 KiB after it once and checks them at every checked call ("wrote past the end
 *    of its output"; sagerun_instance_check_output_end, which `run` and `profile` call too). On
 *    the host backend the pages before o and after that guard are inaccessible, as around every
 *    input: a write there faults in the call that makes it, a crash of that variant.
 *
 * 8. Errors
 *    Every call returning int returns 0 on success or a negative sagerun_status (sagerun.h);
 *    SAGERUN_UNSUPPORTED from geometry or create means "this variant does not do that problem".
 *    On failure it writes a NUL-terminated reason into err, truncating to errlen bytes; the host
 *    gives errlen >= SAGERUN_PLUGIN_MIN_ERRLEN. Texts (reasons, names, versions, descriptions,
 *    log lines) SHOULD be UTF-8; the host shows a byte that is not, or a control character, as
 *    \xNN, so a reason cut inside a character costs nothing. Plugins MUST NOT call exit(), abort() or
 *    longjmp out of a call, MUST NOT write to stdout, and SHOULD log through services->log.
 *    Nor may they change what the whole process shares: signal dispositions, umask, resource
 *    limits, the standard descriptors 0-2, or leave threads running after destroy (sagerun
 *    compare repairs some of it between calls; a thread's crash is blamed on the call open then).
 *    A plugin that breaks these rules is reported, not trusted: `sagerun compare` runs variants
 *    in a child process, so a crash or a hang becomes an error naming the variant and the call.
 *
 * 9. Reach (1.1)
 *    - services->cuda_stream / cuda_context: the host's stream and CUDA context as opaque
 *      pointers; runtime-API code in the plugin MAY cast them to cudaStream_t / CUcontext (the
 *      context is the device's primary context, the one the CUDA runtime uses, so a kernel
 *      launched with <<<grid, block, smem, stream>>> runs in the host's context and order).
 *    - sagerun_plugin_device: given to geometry_with (with the parameter values) and in
 *      inputs->device.
 *    - parameters: a variant declares typed parameters (sagerun_param_decl); the host validates
 *      values (type, range) and passes them at create in inputs->param_values, in declaration
 *      order, defaults filled in. The host's name for a variant with values is its label,
 *      "name[key=value,...]".
 *    - factory: several variants per file.
 *
 * 10. Extensions and input kinds
 *    The generic core is attention on q, k, v in the problem's dtype and layout. What belongs to
 *    one kernel family is an extension: named by a versioned id ("sagerun.NAME/N"; a change of
 *    meaning takes a new N) and specified in a header of its own, sagerun/NAME.h. The one today
 *    is sage2 (sage2.h, SAGERUN_SAGE2_EXTENSION_ID "sagerun.sage2/1"): SageAttention2's
 *    quantized inputs and the quantizer that makes them.
 *    - Asking (1.2): services->get_extension(host, id) returns the extension's table of functions
 *      (static; struct_size first; its functions take `host` first and follow the rules of the
 *      services), or NULL for an id this host does not know. A plugin that needs one and gets
 *      NULL refuses (create returns SAGERUN_UNSUPPORTED naming the id) or does without.
 *    - Input kinds (1.2): an extension may give a variant inputs besides q, k, v. A descriptor
 *      names its kind in input_id with the kind's parameters in input_params (static; their type
 *      is the extension's: sage2 takes a sagerun_sage2_quant_params). The host refuses at load a
 *      variant naming an id it does not know ("unknown input kind id"), or the kind without
 *      usable parameters, the variant named. Before the variant's first prepare the host makes the
 *      kind's inputs (sage2: variants asking for the same granularities as the first share one
 *      quantization, at the same addresses); the instance reaches them through the extension
 *      (sage2: instance_tensors).
 *      A new kind is a new id: nothing here grows for it.
 *    - The 1.0/1.1 spelling, kept: input_kind = SAGERUN_INPUT_SAGE2 with the descriptor's `quant`
 *      is the kind "sagerun.sage2/1" with quant as its parameters; inputs->sage2 points at the
 *      tensors of an instance of that kind however it named it; services->sage2_quantize and
 *      sage2_tensors_free are the extension's quantize and tensors_free. A 1.2 plugin MAY use them.
 *      A descriptor setting both input_id and an input_kind other than FP16 (one that also loads
 *      in a 1.1 host) MUST make them agree, the same kind with equal parameters: they are then
 *      one kind; a contradiction is refused at load, the variant and both spellings named.
 *
 * 11. Problems beyond one length (1.2)
 *    sagerun_problem grew (sagerun.h): kv_len, the alignment of causal and window, a sliding
 *    window, a logit soft-cap, variable lengths (packed Q, K, V, O with cu_seqlens) and a paged
 *    K/V cache (a block table). What the output contract (section 7) computes for them is
 *    sagerun.h's: query i of sequence b attends the keys sagerun_problem_key_range gives (a row
 *    attending none writes 0), its logits soft-capped where softcap > 0. A variant declares in
 *    `features` which of these it does, in `dtypes` and `head_dims` what it takes; the host
 *    refuses at create, before geometry, any problem needing what it does not declare, naming the
 *    feature. Causal where q_len = kv_len needs no feature (the two alignments agree there), so a
 *    1.0 or 1.1 plugin, which declares nothing, keeps running what it ran.
 *    Layout: sagerun_plugin_inputs embeds sagerun_problem, which grew; the host gives a plugin
 *    whose descriptor does not cover `features` (built with a 1.0 or 1.1 header) the inputs in
 *    the layout of that header, and only problems it can state: nothing changes for it. */
#ifndef SAGERUN_PLUGIN_H
#define SAGERUN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sagerun.h"
#include "sage2.h" /* the sage2 extension, for the 1.0/1.1 spelling of its fields */

#ifdef __cplusplus
extern "C" {
#endif

#define SAGERUN_PLUGIN_ABI_MAJOR 1
#define SAGERUN_PLUGIN_ABI_MINOR 2
#define SAGERUN_PLUGIN_ENTRY_NAME "sagerun_plugin_entry"
#define SAGERUN_PLUGIN_REASON_SIZE 256
/* The smallest errlen the host passes to any call (section 8). */
#define SAGERUN_PLUGIN_MIN_ERRLEN 256
/* The most parameters a variant may declare (1.1), and the longest key. */
#define SAGERUN_PLUGIN_MAX_PARAMS 16
#define SAGERUN_PLUGIN_MAX_KEY 31

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

typedef struct sagerun_host_services {
    uint32_t struct_size; /* sizeof as the host compiled it; read only fields it covers */
    uint32_t abi_minor;   /* the host's SAGERUN_PLUGIN_ABI_MINOR */
    void *host;           /* first argument of every call below */

    /* Logging, any level; the host decides what is shown (sagerun: error and warning on stderr,
     * info and debug only with SAGERUN_DEBUG set, each line after the name of the variant in
     * whose call it came, control characters escaped). fmt is printf-style. */
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

    /* Memory of the context (device memory on CUDA, host memory on the host backend). mem_free
     * frees only a block this variant's mem_alloc returned (anything else is left alone and the
     * refusal logged); mem_fill writes only within such a block or the instance's output o
     * (anything else is SAGERUN_INVALID_ARGUMENT): the inputs are every variant's. */
    int (*mem_alloc)(void *host, uint64_t bytes, uint64_t *addr, char *err, size_t errlen);
    void (*mem_free)(void *host, uint64_t addr);
    int (*mem_fill)(void *host, uint64_t addr, uint8_t byte, uint64_t bytes, char *err,
                    size_t errlen);

    /* The sage2 extension's quantize and tensors_free (sage2.h sagerun_sage2_extension), in
     * their 1.0/1.1 place (section 10): nothing an attention variant needs. */
    int (*sage2_quantize)(void *host, const sagerun_problem *problem, uint64_t q, uint64_t k,
                          uint64_t v, const sagerun_sage2_quant_params *params,
                          sagerun_sage2_tensors *out, char *err, size_t errlen);
    void (*sage2_tensors_free)(void *host, sagerun_sage2_tensors *tensors);

    /* (1.1) The context's stream and context: a CUstream / CUcontext, usable as cudaStream_t
     * and as the runtime's current context (it is the device's primary context). NULL on the
     * host backend. Valid while the instance lives; the plugin MUST NOT destroy them. */
    void *(*cuda_stream)(void *host);
    void *(*cuda_context)(void *host);

    /* (1.2) [any] The extension named `id` (section 10): its table of functions, static, struct_size
     * first (sage2.h: const sagerun_sage2_extension *), or NULL for an id this host does not
     * know (or NULL). */
    const void *(*get_extension)(void *host, const char *id);
} sagerun_host_services;

/* (1.1) The device a variant runs on, for geometry and create. On the host backend every field
 * but struct_size and backend is 0. */
typedef struct sagerun_plugin_device {
    uint32_t struct_size;
    int backend;                       /* sagerun_backend */
    int compute_capability;            /* major*10+minor */
    uint32_t sm_count;                 /* multiprocessors */
    uint32_t shared_memory_per_block;  /* bytes a launch gets without opting in (48 KiB) */
    uint32_t shared_memory_per_block_optin; /* the most function_set_max_dynamic_smem allows */
    uint32_t shared_memory_per_sm;     /* bytes per multiprocessor */
    uint32_t l2_bytes;                 /* L2 cache size */
    char name[96];                     /* the device's name, NUL-terminated */
} sagerun_plugin_device;

/* (1.1) Typed variant parameters. Values travel as double; an INT parameter's value is integral
 * (the host refuses 1.5 for it). BOOL values are 0 or 1. */
typedef enum sagerun_param_type {
    SAGERUN_PARAM_INT = 0,
    SAGERUN_PARAM_FLOAT = 1,
    SAGERUN_PARAM_BOOL = 2
} sagerun_param_type;

typedef struct sagerun_param_decl {
    uint32_t struct_size;
    int type;                /* sagerun_param_type */
    const char *key;         /* [a-z0-9_]+, at most SAGERUN_PLUGIN_MAX_KEY characters, unique */
    const char *description; /* one line */
    double default_value;    /* within [min_value, max_value] */
    double min_value, max_value;
} sagerun_param_decl;

/* ---- Problems as the plugin sees them ----------------------------------------------------------
 * The inputs of one instance; all addresses are in the context's memory and owned by the host.
 * The input kinds of the 1.0/1.1 descriptor (input_kind): from 1.2 a kind is named by its id
 * (section 10) and this enum does not grow. */
typedef enum sagerun_input_kind {
    SAGERUN_INPUT_FP16 = 0,  /* q, k, v in the problem's dtype (fp16 or bf16, whatever the
                                name) and layout: the generic core */
    SAGERUN_INPUT_SAGE2 = 1  /* the 1.0/1.1 spelling of input_id "sagerun.sage2/1" (sage2.h),
                                with the descriptor's quant as its parameters */
} sagerun_input_kind;

typedef struct sagerun_plugin_inputs {
    uint32_t struct_size;
    sagerun_problem problem;
    uint64_t q, k, v;                 /* always set */
    /* The sage2 tensors of an instance of the sage2 kind (named by id or by input_kind), else
     * NULL: the 1.0/1.1 spelling of sagerun_sage2_extension's instance_tensors (section 10). */
    const sagerun_sage2_tensors *sage2;
    uint64_t o;                       /* output: problem dtype and layout, owned by the host */
    /* (1.1) The variant's parameter values, in declaration order (defaults filled in); NULL when
     * it declares none. */
    const double *param_values;
    uint32_t n_param_values;
    uint32_t reserved;
    const sagerun_plugin_device *device; /* (1.1) the device the instance runs on */
    /* ---- (1.2) The lengths and block table of a varlen or paged problem (sagerun_sequences),
     * in the context's memory (device addresses on CUDA) and, the same values, on the host for
     * planning launches; 0 / NULL where the problem has none. ---- */
    uint64_t cu_seqlens_q;  /* int32 [batch + 1]: sequence b's queries are rows
                             * cu_seqlens_q[b] .. cu_seqlens_q[b+1] - 1 of the packed Q and O */
    uint64_t cu_seqlens_kv; /* int32 [batch + 1]: its keys; packed K, V rows (varlen), or the keys
                             * it has in its pages (paged) */
    uint64_t block_table;   /* int32 [batch, pages_per_seq] (paged) */
    const int32_t *host_cu_seqlens_q, *host_cu_seqlens_kv, *host_block_table;
} sagerun_plugin_inputs;

/* Launch geometry of a variant for a problem: the report's "scheduler". */
typedef struct sagerun_launch_geometry {
    uint32_t struct_size;
    uint32_t cta_q, cta_k, warp_q, warp_k;
    uint32_t threads_per_cta;
    uint32_t dynamic_shared_memory_bytes;
    uint64_t grid_ctas;
} sagerun_launch_geometry;

/* (1.1) What geometry_with knows besides the problem. Valid during the call only. */
typedef struct sagerun_geometry_args {
    uint32_t struct_size;
    uint32_t n_param_values;
    const sagerun_plugin_device *device;
    const double *param_values; /* as inputs->param_values: declaration order, defaults filled */
} sagerun_geometry_args;

/* ---- The variant descriptor --------------------------------------------------------------------*/
typedef struct sagerun_variant_descriptor {
    uint32_t struct_size; /* sizeof(sagerun_variant_descriptor) as the plugin compiled it */
    uint32_t abi_major;   /* SAGERUN_PLUGIN_ABI_MAJOR the plugin was built against */
    const char *name;        /* unique variant name: [a-z0-9._-]+, at most 63 characters */
    const char *version;     /* free-form, e.g. "1.0.0" */
    const char *description; /* one line */
    int backend;                /* sagerun_backend */
    int min_compute_capability; /* major*10+minor, 0 for host variants */
    int input_kind;             /* sagerun_input_kind (1.0/1.1 spelling; from 1.2: input_id) */
    sagerun_sage2_quant_params quant; /* read for SAGERUN_INPUT_SAGE2 only (1.0/1.1 spelling) */

    /* [loader or instance-thread, no instance] Says whether the variant can run `problem` and
     * fills its geometry (the report's "scheduler"; dynamic_shared_memory_bytes MUST be what the
     * launch really uses). Returns SAGERUN_UNSUPPORTED with a reason ("head_dim 96 not supported,
     * only 64 and 128") when not. The host zeroes *geometry and sets its struct_size before the
     * call: a host-backend variant may leave it so (its reports show no scheduler). MUST NOT call
     * services. Required (a 1.1 variant with
     * geometry_with may point geometry at a device-less fallback). */
    int (*geometry)(const sagerun_problem *problem, sagerun_launch_geometry *geometry, char *err,
                    size_t errlen);
    /* [instance-thread, -> CREATED] Creates the instance state for one set of inputs (load
     * modules, allocate scratch). MAY call services. On failure it frees what it made (no destroy
     * follows). The inputs of an input kind (section 10; sage2: *inputs->sage2) are zero until
     * prepare. Required. */
    int (*create)(const sagerun_host_services *services, const sagerun_plugin_inputs *inputs,
                  void **state, char *err, size_t errlen);
    /* [instance-thread, CREATED -> PREPARED] Work done before the timed runs (uploads, tables,
     * function_set_max_dynamic_smem); MAY call services and block. Called again after it failed.
     * Optional (NULL). */
    int (*prepare)(void *state, char *err, size_t errlen);
    /* [instance-thread, PREPARED] One attention call writing every element of inputs->o; the
     * timed region, under the rules of section 6 (enqueue on the host's stream and return).
     * Required. */
    int (*run)(void *state, char *err, size_t errlen);
    /* [instance-thread, any state -> gone] Frees everything create and prepare made; MAY call
     * services (mem_free) and block. state may be NULL. Required. */
    void (*destroy)(void *state);

    /* ---- (1.1) ---- */
    uint32_t flags;    /* SAGERUN_VARIANT_* */
    uint32_t n_params; /* entries of params, at most SAGERUN_PLUGIN_MAX_PARAMS */
    const sagerun_param_decl *params;
    /* [loader or instance-thread, no instance] As geometry, knowing the device and the parameter
     * values (args); the host calls it instead of geometry when set. Same rules; it is where a
     * parameter value the variant cannot launch with is refused (SAGERUN_UNSUPPORTED). Optional
     * (NULL). */
    int (*geometry_with)(const sagerun_geometry_args *args, const sagerun_problem *problem,
                         sagerun_launch_geometry *geometry, char *err, size_t errlen);

    /* ---- (1.2) What the variant does (section 11). ---- */
    uint32_t features;  /* SAGERUN_FEATURE_* beyond the 1.1 problem */
    uint32_t dtypes;    /* bits 1u << sagerun_dtype of Q, K, V it takes; 0: F16 and BF16 */
    uint32_t n_head_dims;          /* entries of head_dims; 0: any D (geometry decides) */
    const uint32_t *head_dims;     /* the D it takes, static */

    /* ---- (1.2) The input kind by id (section 10). ---- */
    const char *input_id;     /* an extension's id (SAGERUN_SAGE2_EXTENSION_ID); NULL: input_kind
                               * says (the generic core when that is FP16) */
    const void *input_params; /* the kind's parameters, static (sage2: a
                               * sagerun_sage2_quant_params); NULL for a kind that takes none */
} sagerun_variant_descriptor;

/* (1.2) Problem features (section 11). A problem that needs one a variant does not declare is
 * refused before create, the feature named; the 1.1 problem (q_len = kv_len, dense, causal or
 * not) needs none. */
#define SAGERUN_FEATURE_KV_LEN 0x1u        /* kv_len != seq_len (dense) */
#define SAGERUN_FEATURE_CAUSAL_TOP_LEFT 0x2u     /* causal where q_len != kv_len, TOP_LEFT */
#define SAGERUN_FEATURE_CAUSAL_BOTTOM_RIGHT 0x4u /* causal where q_len != kv_len, BOTTOM_RIGHT */
#define SAGERUN_FEATURE_WINDOW 0x8u        /* a sliding window (with the alignments declared) */
#define SAGERUN_FEATURE_SOFTCAP 0x10u      /* a logit soft-cap */
#define SAGERUN_FEATURE_VARLEN 0x20u       /* per-sequence lengths, packed tensors */
#define SAGERUN_FEATURE_PAGED 0x40u        /* a paged K/V cache with a block table */
#define SAGERUN_FEATURE_ALL 0x7fu

/* (1.1) descriptor flags */
/* run may be captured into a CUDA graph and replayed (section 6); the graph timer (compare
 * --timer graph) refuses variants without it. */
#define SAGERUN_VARIANT_GRAPH_CAPTURABLE 0x1u

/* (1.1) Several variants in one file, as CLAP's plugin factory. [loader], reentrant. */
typedef struct sagerun_plugin_factory {
    uint32_t struct_size;
    uint32_t (*count)(void);                                    /* 1 to 64 */
    const sagerun_variant_descriptor *(*get)(uint32_t index);   /* index < count(); static */
} sagerun_plugin_factory;

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
    /* (1.1) Set by a plugin of several variants instead of `variant`; the host reads it when
     * struct_size covers it and then ignores `variant`. */
    const sagerun_plugin_factory *factory;
} sagerun_plugin_answer;

typedef int (*sagerun_plugin_entry_fn)(const sagerun_plugin_query *query,
                                       sagerun_plugin_answer *answer);

/* Plugins define exactly this function:
 *   SAGERUN_PLUGIN_EXPORT int sagerun_plugin_entry(const sagerun_plugin_query *query,
 *                                                  sagerun_plugin_answer *answer);
 * It is called more than once (scanner, each registry) and MUST be idempotent (section 1). */
SAGERUN_PLUGIN_EXPORT int sagerun_plugin_entry(const sagerun_plugin_query *query,
                                               sagerun_plugin_answer *answer);

/* What both entry macros below answer first: a host of another ABI major is refused with both
 * versions in the reason (returns SAGERUN_PLUGIN); otherwise the answer gets this header's ABI
 * (returns 0). */
static inline int sagerun_plugin_answer_abi(const sagerun_plugin_query *query,
                                            sagerun_plugin_answer *answer)
{
    if (query->abi_major != SAGERUN_PLUGIN_ABI_MAJOR) {
        snprintf(answer->reason, sizeof answer->reason,
                 "built for plugin ABI %d.%d, the host speaks %u.%u", SAGERUN_PLUGIN_ABI_MAJOR,
                 SAGERUN_PLUGIN_ABI_MINOR, query->abi_major, query->abi_minor);
        return SAGERUN_PLUGIN;
    }
    answer->abi_major = SAGERUN_PLUGIN_ABI_MAJOR;
    answer->abi_minor = SAGERUN_PLUGIN_ABI_MINOR;
    return 0;
}

/* Defines sagerun_plugin_entry for the usual plugin, one static descriptor: a host of another ABI
 * major is refused with both versions in the reason; otherwise the answer is this header's ABI
 * and the descriptor. Use once, at file scope: SAGERUN_PLUGIN_DEFINE_ENTRY(my_descriptor) */
#define SAGERUN_PLUGIN_DEFINE_ENTRY(descriptor)                                                    \
    SAGERUN_PLUGIN_EXPORT int sagerun_plugin_entry(const sagerun_plugin_query *query,              \
                                                   sagerun_plugin_answer *answer)                  \
    {                                                                                              \
        if (sagerun_plugin_answer_abi(query, answer) != 0)                                         \
            return SAGERUN_PLUGIN;                                                                 \
        answer->variant = &(descriptor);                                                           \
        return 0;                                                                                  \
    }

/* (1.1) The same for a file of several variants: `table` is a static array of descriptors. The
 * answer carries a factory over it (and its first descriptor, what a 1.0 host would load). */
#define SAGERUN_PLUGIN_DEFINE_FACTORY(table)                                                       \
    static uint32_t sagerun_factory_count_(void)                                                   \
    {                                                                                              \
        return (uint32_t)(sizeof(table) / sizeof((table)[0]));                                     \
    }                                                                                              \
    static const sagerun_variant_descriptor *sagerun_factory_get_(uint32_t i)                      \
    {                                                                                              \
        return i < sagerun_factory_count_() ? &(table)[i] : NULL;                                  \
    }                                                                                              \
    static const sagerun_plugin_factory sagerun_factory_ = {                                       \
        sizeof(sagerun_plugin_factory), sagerun_factory_count_, sagerun_factory_get_};             \
    SAGERUN_PLUGIN_EXPORT int sagerun_plugin_entry(const sagerun_plugin_query *query,              \
                                                   sagerun_plugin_answer *answer)                  \
    {                                                                                              \
        if (sagerun_plugin_answer_abi(query, answer) != 0)                                         \
            return SAGERUN_PLUGIN;                                                                 \
        answer->variant = &(table)[0];                                                             \
        if (answer->struct_size >= offsetof(sagerun_plugin_answer, factory) + sizeof(void *))      \
            answer->factory = &sagerun_factory_;                                                   \
        return 0;                                                                                  \
    }

#ifdef __cplusplus
}
#endif
#endif
