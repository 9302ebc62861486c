/* Internal interfaces of libsagerun, shared by its source files. Nothing here is exported.
 * Every internal symbol starts with sr_. */
#ifndef SAGERUN_INTERNAL_H
#define SAGERUN_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sagerun/plugin.h"
#include "sagerun/sagerun.h"

#define SR_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* s as sagerun_text_escape writes it, cut to fit len bytes (before an escape, never inside one),
 * without allocating: for a plugin's or a file's text inside a message (report_text.c). */
/* The variant whose create, prepare, run or destroy this thread is in (NULL: none): the name a
 * plugin's log lines carry (instance.c, context.c). */
extern _Thread_local const char *sr_plugin_calling;
void sr_text_copy(char *dst, size_t len, const char *s);
/* A copy of s whose bytes that start no well-formed UTF-8 character are written "\xNN" (JSON
 * holds only UTF-8); NULL when memory runs out. Caller frees (report_text.c). */
char *sr_text_utf8(const char *s);

/* ---- errors (error.c) ---- */
/* Sets err (when not NULL) to status and a formatted message; returns status. */
sagerun_status sr_error_set(sagerun_error *err, sagerun_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same with a va_list. */
sagerun_status sr_error_setv(sagerun_error *err, sagerun_status status, const char *fmt,
                             va_list ap);
/* Prefixes err->message (where err is given) with "prefix: " (e.g. a file name); returns status,
 * the failure's, with or without err (err->status was returned, and SAGERUN_INTERNAL without it). */
sagerun_status sr_error_prefix(sagerun_status status, sagerun_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* snprintf into a plugin-style (buf, len) error buffer; returns status. */
int sr_errbuf_set(char *buf, size_t len, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- problems (problem.c) and sequences (sequences.c) ---- */
/* The size of ABI 0.1's sagerun_problem (the fields up to sm_scale). */
#define SR_PROBLEM_0_1_SIZE 40u
/* Whether a problem's struct_size covers a field. */
#define SR_PROBLEM_COVERS(p, field)                                                                \
    ((p)->struct_size >= offsetof(sagerun_problem, field) + sizeof((p)->field))
/* A caller's problem as this build's struct: the fields its struct_size covers, the others at
 * their defaults (zero; no window). Every problem the library keeps is loaded through this. */
void sr_problem_load(const sagerun_problem *in, sagerun_problem *out);
/* How Q/O and K/V are stored: batch x rows x heads x D (varlen: one batch of total tokens; paged
 * K/V: one batch of pages * page_size rows). */
void sr_problem_rows(const sagerun_problem *p, uint32_t *q_batch, uint64_t *q_rows,
                     uint32_t *kv_batch, uint64_t *kv_rows);
/* The problem features (SAGERUN_FEATURE_*) a problem needs: what a variant must declare. */
uint32_t sr_problem_features(const sagerun_problem *p);
/* The name of one feature bit ("kv_len != q_len", "paged K/V"), for refusals and `list`. */
const char *sr_feature_name(uint32_t feature);
/* Whether a variant runs the problem by what it declares: SAGERUN_OK, or SAGERUN_UNSUPPORTED
 * naming the variant and the first feature, dtype or head_dim it lacks. */
sagerun_status sr_features_check(const sagerun_variant_descriptor *d, const sagerun_problem *p,
                                 sagerun_error *err);
/* The sequences of inputs, owned: host arrays and their device copies (0 when absent). */
typedef struct sr_sequences {
    int32_t *cu_q, *cu_kv, *table; /* host copies, malloc'd; NULL when the problem has none */
    uint64_t d_cu_q, d_cu_kv, d_table; /* in the context's memory */
} sr_sequences;
/* Copies checked sequences for a problem into seq (host and context memory). table NULL for a
 * paged problem: a permutation of the pages drawn from seed. */
sagerun_status sr_sequences_make(sagerun_context *ctx, const sagerun_problem *p,
                                 const sagerun_sequences *given, uint64_t seed, sr_sequences *seq,
                                 sagerun_error *err);
void sr_sequences_free(sagerun_context *ctx, sr_sequences *seq);
/* The public view of seq for problem p. */
void sr_sequences_view(const sr_sequences *seq, const sagerun_problem *p, sagerun_sequences *out);

/* ---- dtypes of Q/K/V (problem.c): sagerun_dtype_parse and sagerun_dtype_word (sagerun.h) ---- */

/* Checked size arithmetic: false on overflow. */
bool sr_mul_u64(uint64_t a, uint64_t b, uint64_t *out);
bool sr_add_u64(uint64_t a, uint64_t b, uint64_t *out);

/* ---- the CUDA driver (cuda_driver.c) ---- */
/* Loads libcuda.so.1 (or the test override SAGERUN_TEST_CUDA_LIBRARY) once and resolves every
 * entry point of the table through cuGetProcAddress. Thread-safe, idempotent. */
sagerun_status sr_cuda_load(sagerun_error *err);
/* Formats a failed driver call: "<what>: <CUDA_ERROR_NAME> (<description>)"; returns
 * SAGERUN_CUDA. */
sagerun_status sr_cuda_fail(sagerun_error *err, int cu_result, const char *what);

/* ---- contexts (context.c) ---- */
typedef struct sr_module_entry sr_module_entry;
/* What variants may free or fill through their services (plugin_memory.c): the blocks they
 * allocated and the instances' outputs. */
typedef struct sr_plugin_memory sr_plugin_memory;
sr_plugin_memory *sr_plugin_memory_create(void);
void sr_plugin_memory_destroy(sr_plugin_memory *m);
bool sr_plugin_memory_add(sr_plugin_memory *m, uint64_t addr, uint64_t bytes);
/* Forgets the block starting at addr; false when there is none. */
bool sr_plugin_memory_remove(sr_plugin_memory *m, uint64_t addr);
/* Whether [addr, addr + bytes) lies within one block. */
bool sr_plugin_memory_holds(sr_plugin_memory *m, uint64_t addr, uint64_t bytes);

struct sagerun_context {
    int backend;
    int device;             /* CUDA ordinal */
    int compute_capability; /* major*10+minor, 0 on host */
    void *cu_context;       /* CUcontext (primary) */
    void *cu_stream;        /* CUstream owned by the context */
    void *library_modules[16]; /* CUmodule per image of libsagerun's own kernels, on first use */
    sagerun_host_services services; /* the vtable handed to plugins; host = this context */
    sagerun_plugin_device plugin_device; /* what plugins learn about the device (zero on host) */
    sr_module_entry *modules;        /* modules loaded for plugins, freed with the context */
    sr_plugin_memory *plugin_memory; /* what variants may free or fill (NULL: out of memory) */
};

/* Makes ctx's CUDA context current on the calling thread (no-op on host). */
sagerun_status sr_context_bind(sagerun_context *ctx, sagerun_error *err);
/* The PCI bus id of ctx's GPU as NVML and nvidia-smi write it ("00000000:19:00.0"); false (buf
 * "") on the host backend or when the driver does not say. */
bool sr_context_pci_bus_id(const sagerun_context *ctx, char *buf, size_t len);
/* Launches one of libsagerun's own kernels (the .cu files of libsagerun/kernels, embedded as fatbins) by name on
 * the context's stream. params is a cuLaunchKernel parameter array. */
sagerun_status sr_launch_library_kernel(sagerun_context *ctx, const char *name,
                                        const uint32_t grid[3], const uint32_t block[3],
                                        uint32_t smem, void **params, sagerun_error *err);

/* Event timing on the context's stream (CUDA) or a monotonic clock (host). */
typedef struct sr_timer {
    sagerun_context *ctx;
    void *start, *stop; /* CUevent */
    double host_start;
} sr_timer;
sagerun_status sr_timer_init(sr_timer *t, sagerun_context *ctx, sagerun_error *err);
sagerun_status sr_timer_start(sr_timer *t, sagerun_error *err);
/* Records the stop, waits for it, returns the elapsed seconds. */
sagerun_status sr_timer_stop(sr_timer *t, double *seconds, sagerun_error *err);
void sr_timer_fini(sr_timer *t);
double sr_monotonic_seconds(void);

/* SHA-256 of `bytes` bytes at addr in the context's memory, streamed in chunks. */
sagerun_status sr_sha256_memory(sagerun_context *ctx, uint64_t addr, uint64_t bytes,
                                char hex[65], sagerun_error *err);
/* Hashing in the background: a thread of its own (with its own CUDA stream) hashes `bytes` at
 * addr, which must not change until sr_hash_job_finish returns the hex digest (and frees the
 * job). Lets the comparison hash one output while it times the next calls. */
typedef struct sr_hash_job sr_hash_job;
sagerun_status sr_hash_job_start(sagerun_context *ctx, uint64_t addr, uint64_t bytes,
                                 sr_hash_job **out, sagerun_error *err);
sagerun_status sr_hash_job_finish(sr_hash_job *job, char hex[65], sagerun_error *err);
/* Copies bytes within the context's memory, in order on its stream. */
sagerun_status sr_mem_copy(sagerun_context *ctx, uint64_t dst, uint64_t src, uint64_t bytes,
                           sagerun_error *err);

/* ---- inputs (inputs.c) ---- */
struct sagerun_inputs {
    sagerun_context *ctx;
    sagerun_problem problem;
    uint64_t q, k, v;        /* owned */
    uint64_t q_bytes, kv_bytes;
    /* sage2 tensors given with the inputs (e.g. a golden file's), used instead of quantizing
     * when their params match the variant's; owned. has_sage2 = false when absent. */
    bool has_sage2;
    bool sage2_derived; /* sage2 was quantized here by the first variant that needed it */
    sagerun_sage2_tensors sage2;
    /* k_mean given with the inputs (file tensor "k_mean", [B,1,Hkv,D] NHD or [B,Hkv,1,D] HND in
     * the input dtype), used instead of computing torch.mean's; owned, 0 when absent. */
    uint64_t k_mean;
    bool warned_zero_v; /* the all-zero V channel warning was given */
    sr_sequences seq;   /* lengths and block table of a varlen or paged problem */
    bool borrowed;      /* q, k, v are the caller's (sagerun_inputs_create_from_device_seq):
                         * never freed here */
};

/* Allocates inputs (Q, K, V uninitialised) for a problem and its sequences (NULL: dense; a paged
 * problem's block table drawn from seed where seq has none), after checking them. */
sagerun_status sr_inputs_alloc(sagerun_context *ctx, const sagerun_problem *problem,
                               const sagerun_sequences *seq, uint64_t seed, sagerun_inputs **out,
                               sagerun_error *err);
/* Writes count (<= 3) tensors of the inputs' problem from its context as a safetensors file:
 * names[i] of heads[i] heads at addrs[i], the problem's dtype and layout (inputs_file.c). */
sagerun_status sr_inputs_write_tensors(const sagerun_inputs *in, const char *path,
                                       const char *const *names, const uint64_t *addrs,
                                       const uint32_t *heads, size_t count, sagerun_error *err);
/* True when the inputs came with sage2-quantized tensors (e.g. a golden file's). */
bool sr_inputs_has_file_quantization(const sagerun_inputs *in);

/* Quantizes Q, K, V for a SAGE2 variant (quantize.c): allocates every tensor of out in ctx. */
sagerun_status sr_sage2_quantize_inputs(sagerun_context *ctx, const sagerun_problem *problem,
                                        uint64_t q, uint64_t k, uint64_t v,
                                        const sagerun_sage2_quant_params *params,
                                        sagerun_sage2_tensors *out, sagerun_error *err);
/* Frees what sr_sage2_quantize_inputs allocated. */
void sr_sage2_tensors_free(sagerun_context *ctx, sagerun_sage2_tensors *t);

/* ---- extensions and input kinds (input_kinds.c, sage2_extension.c) ---- */
/* What a provider made for one instance: for sage2 the quantized tensors (own: freed with the
 * instance, else they belong to the inputs). */
typedef struct sr_provided_inputs {
    sagerun_sage2_tensors sage2;
    bool own;
} sr_provided_inputs;
typedef struct sr_input_provider {
    int kind;         /* its sagerun_input_kind, the 1.0/1.1 spelling; -1: it has none */
    const char *id;   /* its extension id (plugin.h section 10); NULL: the generic core */
    const char *name;
    const void *extension; /* what get_extension gives for id */
    size_t params_size;    /* the size of its parameters' struct (0: it takes none) */
    /* Why params (what a descriptor names, never NULL) are unusable, into buf; NULL when they
     * are usable. NULL: the kind takes no parameters. */
    const char *(*params_problem)(const void *params, char *buf, size_t len);
    bool (*params_equal)(const void *a, const void *b);
    /* Makes the kind's inputs for a variant of descriptor d, with the parameters params, before
     * its prepare; idempotent (a retried prepare keeps what was made). NULL: the kind needs
     * nothing beyond Q, K, V. */
    sagerun_status (*provide)(sr_provided_inputs *p, sagerun_context *ctx, sagerun_inputs *in,
                              const sagerun_variant_descriptor *d, const void *params,
                              sagerun_error *err);
    void (*release)(sr_provided_inputs *p, sagerun_context *ctx);
} sr_input_provider;
/* A descriptor's input kind: by input_id (1.2) where set, else by input_kind; params what it
 * names for the kind. provider is NULL for a kind this library does not know (refused at load,
 * sr_input_kind_problem). */
typedef struct sr_input_kind {
    const sr_input_provider *provider;
    const void *params;
} sr_input_kind;
sr_input_kind sr_descriptor_input_kind(const sagerun_variant_descriptor *d);
/* Why d's input kind is unusable (unknown, its parameters, input_id contradicting input_kind),
 * the variant named, into buf; NULL when it is usable. */
const char *sr_input_kind_problem(const sagerun_variant_descriptor *d, char *buf, size_t len);
/* The sage2 granularities a variant's inputs are quantized with; NULL when its kind is not sage2. */
const sagerun_sage2_quant_params *sr_descriptor_sage2_params(const sagerun_variant_descriptor *d);
/* services->get_extension (context.c): the table of the extension `id`, NULL when unknown. */
const void *sr_extension_get(void *host, const char *id);
/* The sage2 extension (sage2_extension.c): its table, and its functions in their 1.0/1.1 place
 * in the services. */
extern const sagerun_sage2_extension sr_sage2_extension;
int sr_sage2_service_quantize(void *host, const sagerun_problem *problem, uint64_t q, uint64_t k,
                              uint64_t v, const sagerun_sage2_quant_params *params,
                              sagerun_sage2_tensors *out, char *err, size_t errlen);
void sr_sage2_service_tensors_free(void *host, sagerun_sage2_tensors *tensors);

/* ---- instances (instance.c) ---- */
/* The sage2 tensors of the instance whose call is open on this thread, when it is of the sage2
 * kind and in the context host; NULL otherwise (sr_sage2_extension's instance_tensors). */
const sagerun_sage2_tensors *sr_instance_sage2_tensors(void *host);
/* One call of the variant's run on its stream (prepared first if needed), untimed: what the
 * timer queues (sr_timed_call_fn). instance is a sagerun_instance. */
int sr_instance_call(void *instance, sagerun_error *err);
/* The host backend's memory (host_memory.c): each block on pages of its own, with
 * SR_HOST_GUARD_BEFORE bytes before them and SR_HOST_GUARD_AFTER after them that nobody may read
 * or write, so that a stray write near a block faults in the variant that made it. A block is
 * 256-byte aligned, ends less than 256 bytes before its last page does, and is zero-filled; NULL
 * when out of memory or address space. seal makes a block's first bytes (and the rest of their
 * pages) read-only: sagerun's own copies, the input guard's; false when it cannot. */
#define SR_HOST_GUARD_BEFORE (64u << 10)
#define SR_HOST_GUARD_AFTER (1u << 20)
void *sr_host_block_alloc(size_t bytes);
void sr_host_block_free(void *block);
bool sr_host_block_seal(void *block, size_t bytes);
/* Whether [addr, addr + bytes) lies within one live block (the bytes it was allocated with). */
bool sr_host_block_holds(uint64_t addr, uint64_t bytes);
/* Makes a block of the context read-only where the backend can (the host's; on CUDA nothing). */
void sr_mem_seal(sagerun_context *ctx, uint64_t addr, uint64_t bytes);

/* The output's guard: the SR_OUTPUT_GUARD_BYTES right after o, filled with SR_OUTPUT_GUARD_BYTE
 * when the instance is made and never written by the host again, so that a variant's write past
 * the end of o (rows past the sequence's end, a wrong stride) shows at the next checked call
 * instead of landing silently in memory nobody reads, or in another buffer. */
#define SR_OUTPUT_GUARD_BYTES (64u << 10)
#define SR_OUTPUT_GUARD_BYTE 0x5A
/* sagerun_instance_check_output_end (sagerun.h) reads it back. */

/* ---- variant parameters (params.c) ---- */
#define SR_STR_(x) #x
#define SR_STR(x) SR_STR_(x)
/* 0 when v is a valid value of p, else a negative status and "key=v is outside [a, b]". */
int sr_param_check(const sagerun_param_decl *p, double v, char *buf, size_t len);
/* The values of d's parameters: defaults, then "key=value,..." of args (NULL: none) over them.
 * Unknown keys, repeated keys, values of the wrong type or out of range are errors naming them. */
sagerun_status sr_params_parse(const sagerun_variant_descriptor *d, const char *args,
                               double values[SAGERUN_PLUGIN_MAX_PARAMS], sagerun_error *err);
/* The canonical label "name[k1=v1,k2=v2]" (every parameter, in declaration order); the bare
 * name for a variant without parameters. False when it does not fit len (cut: never a label). */
bool sr_params_label(const sagerun_variant_descriptor *d, const double *values, char *buf,
                     size_t len);
/* Splits NAME[args] into the name and a malloc'd args (NULL when there are no brackets). */
sagerun_status sr_variant_spec_split(const char *spec, char name[64], char **args,
                                     sagerun_error *err);
/* The 1.1 fields as far as struct_size covers them (0 beyond). */
uint32_t sr_descriptor_param_count(const sagerun_variant_descriptor *d);
uint32_t sr_descriptor_flags(const sagerun_variant_descriptor *d);

/* ---- registry (registry.c) ---- */
const sagerun_variant_descriptor *sr_registry_descriptor(const sagerun_registry *reg,
                                                         size_t index);
/* The parameter values of variant index (sr_descriptor_param_count of them). */
const double *sr_registry_values(const sagerun_registry *reg, size_t index);
/* The longest label name[k=v,...] (16 parameters of 31-character keys and their values). */
#define SR_LABEL_MAX 1024
/* The largest magnitude of an int parameter's value: every integer up to it is a double. */
#define SR_PARAM_INT_MAX 9007199254740992.0

/* sagerun_report_diff_options_init as 0.3 has it (diff.c: the public name is versioned). */
struct sagerun_report_diff_options;
SAGERUN_API void sr_report_diff_options_init_0_3(struct sagerun_report_diff_options *opts);

#endif
