/* sagerun: A/B testing of GPU attention kernels — the library API.
 *
 * This header is the specification of libsagerun's C ABI. Conventions:
 * - Every handle is opaque and has a create/destroy pair; destroy(NULL) is a no-op.
 * - Functions that can fail return a sagerun_status (0 = SAGERUN_OK, errors are negative) and take
 *   a caller-owned `sagerun_error *err` last; when err is not NULL it receives the status and a
 *   message naming what was wrong and where. Reporting an error never allocates.
 * - No CUDA, jansson or libsodium type appears here. Device memory is named by a uint64_t address.
 * - Handles are not thread-safe; use one per thread or serialise calls.
 * - Additions only at the end of structs that carry a struct_size; see README "ABI promise". */
#ifndef SAGERUN_SAGERUN_H
#define SAGERUN_SAGERUN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SAGERUN_VERSION_MAJOR 0
#define SAGERUN_VERSION_MINOR 1
#define SAGERUN_VERSION_PATCH 0
#define SAGERUN_VERSION_STRING "0.1.0"
/* Encodes a version as one comparable integer: major*10000 + minor*100 + patch. */
#define SAGERUN_VERSION_ENCODE(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))
#define SAGERUN_VERSION                                                                            \
    SAGERUN_VERSION_ENCODE(SAGERUN_VERSION_MAJOR, SAGERUN_VERSION_MINOR, SAGERUN_VERSION_PATCH)

#if defined(SAGERUN_BUILDING_LIBRARY)
#define SAGERUN_API __attribute__((visibility("default")))
#else
#define SAGERUN_API
#endif

/* The version of the library actually loaded (SAGERUN_VERSION of its build) and its string. */
SAGERUN_API int sagerun_version(void);
SAGERUN_API const char *sagerun_version_string(void);

/* ---- Status codes ------------------------------------------------------------------------------
 * One table: code, name, message. Codes are never reused or renumbered. */
#define SAGERUN_STATUS_MAP(X)                                                                      \
    X(OK, 0, "success")                                                                            \
    X(INVALID_ARGUMENT, -1, "invalid argument")                                                    \
    X(OUT_OF_MEMORY, -2, "out of memory")                                                          \
    X(NO_DRIVER, -3, "no NVIDIA driver found (libcuda.so.1)")                                      \
    X(NO_DEVICE, -4, "no CUDA device")                                                             \
    X(CUDA, -5, "CUDA driver call failed")                                                         \
    X(PLUGIN, -6, "plugin error")                                                                  \
    X(IO, -7, "input/output error")                                                                \
    X(FORMAT, -8, "malformed input")                                                               \
    X(UNSUPPORTED, -9, "not supported")                                                            \
    X(NOT_FOUND, -10, "not found")                                                                 \
    X(VARIANT, -11, "variant failed")                                                              \
    X(INTERRUPTED, -12, "interrupted")                                                             \
    X(INTERNAL, -13, "internal error")

typedef enum sagerun_status {
#define SAGERUN_STATUS_ENUM_(name, code, msg) SAGERUN_##name = (code),
    SAGERUN_STATUS_MAP(SAGERUN_STATUS_ENUM_)
#undef SAGERUN_STATUS_ENUM_
} sagerun_status;

/* "SAGERUN_OK", "SAGERUN_NO_DRIVER", ...; "SAGERUN_UNKNOWN_STATUS" for codes not in the table. */
SAGERUN_API const char *sagerun_status_name(int status);
/* The table's one-line message; "unknown status" for codes not in the table. */
SAGERUN_API const char *sagerun_status_message(int status);

#define SAGERUN_ERROR_MESSAGE_SIZE 512
typedef struct sagerun_error {
    int status;                               /* a sagerun_status */
    char message[SAGERUN_ERROR_MESSAGE_SIZE]; /* NUL-terminated, names file/field/variant */
} sagerun_error;

/* ---- Problems (the shape of one attention call) ----------------------------------------------- */
typedef enum sagerun_layout {
    SAGERUN_LAYOUT_NHD = 0, /* [B, N, H, D] */
    SAGERUN_LAYOUT_HND = 1  /* [B, H, N, D] */
} sagerun_layout;

typedef enum sagerun_dtype {
    SAGERUN_DTYPE_F16 = 0,
    SAGERUN_DTYPE_BF16 = 1,
    SAGERUN_DTYPE_F32 = 2,
    SAGERUN_DTYPE_I8 = 3,
    SAGERUN_DTYPE_F8_E4M3 = 4,
    SAGERUN_DTYPE_F64 = 5,
    SAGERUN_DTYPE_I32 = 6 /* (0.2) cu_seqlens and block tables in safetensors files */
} sagerun_dtype;

/* Bytes per element of a dtype; 0 for an unknown one. */
SAGERUN_API size_t sagerun_dtype_size(int dtype);
/* The safetensors name of a dtype ("F16", "BF16", ...); NULL for an unknown one. */
SAGERUN_API const char *sagerun_dtype_name(int dtype);
/* The dtype of Q, K, V a word names, in any case: fp16, f16, float16, half -> SAGERUN_DTYPE_F16;
 * bf16, bfloat16 -> SAGERUN_DTYPE_BF16; -1 for anything else (NULL included). The command line
 * and workload files take these words (SAGERUN_DTYPE_WORDS for messages); the report reader only
 * those reports are written with: fp16, bf16 (F16, BF16 in older ones). */
SAGERUN_API int sagerun_dtype_parse(const char *word);
#define SAGERUN_DTYPE_WORDS "fp16 (or f16, float16, half) or bf16 (or bfloat16)"
/* The one word workload files and reports write for a dtype of Q, K, V: "fp16", "bf16"; NULL
 * for other dtypes. */
SAGERUN_API const char *sagerun_dtype_word(int dtype);

/* Where the causal diagonal and a sliding window sit when a sequence has another number of keys
 * than of queries (ABI 0.2, plugin ABI 1.2). Query row i (0-based) of a sequence of q_len queries
 * and kv_len keys has its diagonal key at
 *   TOP_LEFT:     d(i) = i                      SageAttention, torch SDPA's is_causal,
 *                                               flex_attention's causal mask as usually written
 *   BOTTOM_RIGHT: d(i) = i + kv_len - q_len     FlashAttention >= 2.1, varlen_attn, decode and
 *                                               prefill with a cache (the last query sees every key)
 * Causal attention attends the keys j <= d(i); a window attends d(i) - window_left <= j <=
 * d(i) + window_right (both with causal). Where q_len = kv_len the two are the same. A row that
 * attends no key (BOTTOM_RIGHT with q_len > kv_len: the first q_len - kv_len rows) has the output
 * 0, as FlashAttention writes it. */
typedef enum sagerun_mask_align {
    SAGERUN_ALIGN_TOP_LEFT = 0,
    SAGERUN_ALIGN_BOTTOM_RIGHT = 1
} sagerun_mask_align;

typedef struct sagerun_problem {
    uint32_t struct_size; /* sizeof(sagerun_problem) of the caller */
    uint32_t batch;       /* B: sequences */
    uint32_t seq_len;     /* N: queries per sequence (varlen: the longest); keys too unless kv_len */
    uint32_t heads_q;     /* Hq */
    uint32_t heads_kv;    /* Hkv; Hq must be a multiple of it (GQA) */
    uint32_t head_dim;    /* D */
    uint32_t layout;      /* sagerun_layout of Q, K, V and O (varlen and paged: NHD only) */
    uint32_t dtype;       /* sagerun_dtype of Q, K, V and O: F16 or BF16 */
    uint32_t causal;      /* 0 or 1; where its diagonal sits: align */
    float sm_scale;       /* softmax scale; 0 means D^-0.5 */
    /* ---- (ABI 0.2, plugin ABI 1.2) read only where struct_size covers them; a field it does
     * not cover, and a zero, mean what the problem meant before: one length, no mask but causal,
     * dense tensors. sagerun_problem_check says which field is wrong and why. ---- */
    uint32_t kv_len;      /* keys per sequence (varlen: the longest); 0: seq_len */
    uint32_t align;       /* sagerun_mask_align of causal and of the window */
    uint32_t window;      /* 1: a sliding window of window_left / window_right keys */
    int32_t window_left;  /* keys before the diagonal each query sees, -1: all (FlashAttention's
                           * window_size convention) */
    int32_t window_right; /* keys after the diagonal, -1: all */
    float softcap;        /* > 0: each logit x = sm_scale * q.k becomes softcap * tanh(x / softcap)
                           * before the softmax (Gemma 2); 0: none */
    uint32_t varlen;      /* 1: sequences of their own lengths (sagerun_sequences), Q, K, V and O
                           * packed [total tokens, H, D], as flash_attn_varlen_func and varlen_attn
                           * take them */
    uint32_t total_q;     /* varlen: query tokens of all sequences (the sum of their lengths) */
    uint32_t total_kv;    /* varlen: keys of all sequences */
    uint32_t page_size;   /* > 0: K and V are a paged cache [pages, page_size, Hkv, D] (NHD),
                           * sequence b's key j in page block_table[b][j / page_size] at row
                           * j % page_size; 0: dense */
    uint32_t pages;       /* paged: pages in the cache */
    uint32_t pages_per_seq; /* paged: columns of the block table, >= ceil(kv_len / page_size) */
} sagerun_problem;

/* The lengths and block table of a varlen or paged problem (ABI 0.2): arrays of the caller's,
 * read during the call that takes them. cu_seqlens_* are what kernels are given (int32 prefix
 * sums, [batch + 1], starting at 0); a dense problem has none. */
typedef struct sagerun_sequences {
    uint32_t struct_size;       /* sizeof(sagerun_sequences) of the caller */
    uint32_t count;             /* = problem.batch */
    const int32_t *cu_seqlens_q;  /* varlen: [count + 1], or NULL: every sequence has seq_len */
    const int32_t *cu_seqlens_kv; /* varlen: [count + 1] (paged: the keys each sequence has in
                                   * its pages), or NULL: every sequence has kv_len */
    const int32_t *block_table;   /* paged: [count, pages_per_seq], each entry < pages (columns
                                   * past a sequence's last page are not read), or NULL */
} sagerun_sequences;

/* A problem with the given shape and the defaults: NHD, F16, non-causal, sm_scale D^-0.5, kv_len
 * = seq_len, no window (window_left = window_right = -1), no softcap, dense. */
SAGERUN_API sagerun_problem sagerun_problem_make(uint32_t batch, uint32_t seq_len,
                                                 uint32_t heads_q, uint32_t heads_kv,
                                                 uint32_t head_dim);
/* Checks a problem for consistency and for sizes whose element counts or index arithmetic would
 * overflow 64-bit byte sizes or 32-bit grid limits. A problem whose struct_size covers only the
 * fields before kv_len (a caller of ABI 0.1) is read with the later ones at their defaults. */
SAGERUN_API sagerun_status sagerun_problem_check(const sagerun_problem *problem,
                                                 sagerun_error *err);
/* Checks sequences against a checked problem: present where the problem is varlen or paged,
 * absent otherwise; prefix sums from 0, non-decreasing, ending at total_q / total_kv, no
 * sequence longer than seq_len / kv_len; block table entries in [0, pages) for every page a
 * sequence uses, no page used twice. Errors name the array and the index ("cu_seqlens_q[3] = 7
 * is less than cu_seqlens_q[2] = 9"). */
SAGERUN_API sagerun_status sagerun_sequences_check(const sagerun_problem *problem,
                                                   const sagerun_sequences *sequences,
                                                   sagerun_error *err);
/* Elements of Q or O and of K or V as stored: B*N*Hq*D and B*kv_len*Hkv*D dense, total_q*Hq*D
 * and total_kv*Hkv*D varlen, pages*page_size*Hkv*D paged. Call only on a checked problem. These
 * return 0 for NULL, as the other accessors do. */
SAGERUN_API uint64_t sagerun_problem_q_elements(const sagerun_problem *problem);
SAGERUN_API uint64_t sagerun_problem_kv_elements(const sagerun_problem *problem);
/* Operations counted as in the seed, 4*D per (query, key) pair attended: 4*B*Hq*N*N*D for full
 * attention, causal, window and the alignment counted pair by pair (causal q_len = kv_len:
 * 4*B*Hq*D*N(N+1)/2). A varlen problem counts its sequences' own lengths where they are given
 * (_seq); without them as if each had seq_len queries and kv_len keys. Returns 0 for NULL. */
SAGERUN_API double sagerun_problem_operations(const sagerun_problem *problem);
SAGERUN_API double sagerun_problem_operations_seq(const sagerun_problem *problem,
                                                  const sagerun_sequences *sequences);
/* The softmax scale actually used: sm_scale, or D^-0.5 when sm_scale is 0. */
SAGERUN_API float sagerun_problem_sm_scale(const sagerun_problem *problem);
/* The keys of the problem: kv_len, or seq_len when kv_len is 0 or not covered. */
SAGERUN_API uint32_t sagerun_problem_kv_len(const sagerun_problem *problem);
/* The first and one-past-last key that query row i of a sequence of q_len queries and kv_len keys
 * attends under the problem's causal flag, alignment and window (sagerun_mask_align); *first >=
 * *end where it attends none. Every variant's mask, the reference's and the operation count are
 * this rule. */
SAGERUN_API void sagerun_problem_key_range(const sagerun_problem *problem, uint32_t q_len,
                                           uint32_t kv_len, uint32_t i, uint32_t *first,
                                           uint32_t *end);

/* ---- Contexts ---------------------------------------------------------------------------------
 * A context is where variants run: a CUDA device (its primary context and one stream) or the host
 * backend (the CPU). The CUDA driver is loaded lazily the first time a CUDA context is asked for. */
typedef enum sagerun_backend {
    SAGERUN_BACKEND_HOST = 0,
    SAGERUN_BACKEND_CUDA = 1
} sagerun_backend;

/* "host" / "cuda"; NULL for an unknown value. */
SAGERUN_API const char *sagerun_backend_name(int backend);

typedef struct sagerun_context sagerun_context;

/* device is the CUDA ordinal (ignored for the host backend). Fails with SAGERUN_NO_DRIVER when
 * libcuda.so.1 cannot be loaded, SAGERUN_NO_DEVICE when there is no such device. */
SAGERUN_API sagerun_status sagerun_context_create(int backend, int device, sagerun_context **out,
                                                  sagerun_error *err);
/* Handles are not reference-counted: destroy what was made with a context (instances, inputs,
 * memory, a registry created with it) before the context, and an instance before its inputs.
 * Using a handle after what it was made from is gone is undefined (a freed context's memory is
 * freed again). Compare results and reports own their strings and outlive everything. */
SAGERUN_API void sagerun_context_destroy(sagerun_context *ctx);
SAGERUN_API int sagerun_context_backend(const sagerun_context *ctx);

typedef struct sagerun_device_info {
    uint32_t struct_size;
    char name[256];          /* "host" for the host backend */
    int compute_capability;  /* major*10 + minor; 0 for the host backend */
    int multiprocessors;
    int driver_version;      /* cuDriverGetVersion; 0 for the host backend */
    uint64_t total_memory;   /* bytes */
    uint64_t free_memory;    /* bytes at the time of the call */
} sagerun_device_info;

SAGERUN_API sagerun_status sagerun_context_device_info(sagerun_context *ctx,
                                                       sagerun_device_info *info,
                                                       sagerun_error *err);

/* Memory of the context: device memory for CUDA; for the host backend, zero-filled host memory on
 * pages of its own, 256-byte aligned, with inaccessible pages before it (64 KiB) and right after it
 * (1 MiB, from the block's size rounded up to 256 bytes), so that a stray access near a block
 * faults where it is made. Addresses are uint64_t in both cases (a host pointer cast through
 * uintptr_t); 0 is never one (upload, download and fill of address 0 are
 * SAGERUN_INVALID_ARGUMENT; of 0 bytes, nothing). On the host backend, upload, download and fill
 * of a span that is not within one live block (freed, made up, past its end) are
 * SAGERUN_INVALID_ARGUMENT too, and mem_free of an address that is no block's does nothing; CUDA
 * answers such calls with its own error. Free with sagerun_mem_free only. */
SAGERUN_API sagerun_status sagerun_mem_alloc(sagerun_context *ctx, uint64_t bytes,
                                             uint64_t *addr, sagerun_error *err);
SAGERUN_API void sagerun_mem_free(sagerun_context *ctx, uint64_t addr);
SAGERUN_API sagerun_status sagerun_mem_upload(sagerun_context *ctx, uint64_t dst,
                                              const void *src, uint64_t bytes,
                                              sagerun_error *err);
SAGERUN_API sagerun_status sagerun_mem_download(sagerun_context *ctx, void *dst, uint64_t src,
                                                uint64_t bytes, sagerun_error *err);
SAGERUN_API sagerun_status sagerun_mem_fill(sagerun_context *ctx, uint64_t dst, uint8_t byte,
                                            uint64_t bytes, sagerun_error *err);
/* Waits until all work queued on the context's stream is done. */
SAGERUN_API sagerun_status sagerun_context_synchronize(sagerun_context *ctx, sagerun_error *err);

/* ---- Plugins and variants ---------------------------------------------------------------------
 * A registry finds plugin files, loads them (RTLD_NOW | RTLD_LOCAL, never unloaded while the
 * registry lives), negotiates the plugin ABI and keeps every rejected file with its reason. */
typedef struct sagerun_registry sagerun_registry;

/* Creates an empty registry. ctx may be NULL; when it is a CUDA context, variants needing a newer
 * compute capability than the device's are rejected ("needs a newer GPU"). */
SAGERUN_API sagerun_status sagerun_registry_create(sagerun_context *ctx, sagerun_registry **out,
                                                   sagerun_error *err);
SAGERUN_API void sagerun_registry_destroy(sagerun_registry *reg);

/* Adds one file or every *.so of one folder (sorted by file name). A missing folder is not an
 * error for the default search path; for explicit paths it is. Problems with individual files are
 * recorded as rejections, not returned. */
SAGERUN_API sagerun_status sagerun_registry_add_path(sagerun_registry *reg, const char *path,
                                                     sagerun_error *err);
/* Adds the default search path: SAGERUN_PLUGIN_PATH (colon-separated, via secure_getenv) when
 * set, then the plugins folder next to the library (<libdir>/sagerun/plugins when installed,
 * <build tree>/plugins when run from the build tree). */
SAGERUN_API sagerun_status sagerun_registry_add_default_paths(sagerun_registry *reg,
                                                              sagerun_error *err);

/* Plugin files, and the folders holding them, that are writable by anyone but their owner, or
 * owned by someone other than the user or root, are rejected ("unsafe permissions") unless this
 * is set before adding paths. */
SAGERUN_API void sagerun_registry_allow_unsafe(sagerun_registry *reg, int allow);
/* Checks that the loaded variant `name` came from a file with this SHA-256 (hex): SAGERUN_OK,
 * SAGERUN_NOT_FOUND (no such variant) or SAGERUN_PLUGIN (a different file), naming both. */
SAGERUN_API sagerun_status sagerun_registry_expect_sha256(const sagerun_registry *reg,
                                                          const char *name, const char *hex,
                                                          sagerun_error *err);
/* Pins variant `name` to a plugin file whose SHA-256 is hex (64 hex digits), before paths are
 * added (a pin applies to the files added after it): a file of another hash that claims the
 * name is rejected ("pinned plugin NAME: ...") before any of its code runs in this process — by
 * its file name NAME.so or the scanner's cached verdict before it is scanned, otherwise before
 * this process loads it. Pinning a name again to the same hash changes nothing; to another is an
 * error (SAGERUN_INVALID_ARGUMENT). Whether the variant was loaded at all is
 * sagerun_registry_expect_sha256's to check. */
SAGERUN_API sagerun_status sagerun_registry_pin(sagerun_registry *reg, const char *name,
                                                const char *hex, sagerun_error *err);
/* The file where the plugin scanner caches its verdicts for this registry (in SAGERUN_CACHE_DIR,
 * else $XDG_CACHE_HOME/sagerun, else ~/.cache/sagerun), or NULL: before the first plugin file is
 * scanned, or when there is none (SAGERUN_CACHE_DIR is empty, or the folder is unsafe). */
SAGERUN_API const char *sagerun_registry_cache_path(const sagerun_registry *reg);

typedef struct sagerun_variant_info {
    uint32_t struct_size;
    const char *name;
    const char *version;
    const char *description;
    int backend;                  /* sagerun_backend */
    int min_compute_capability;   /* major*10 + minor; 0 for host variants */
    int input_kind;               /* sagerun_input_kind (plugin.h): a kind named by id gives
                                     its number (sage2.h: SAGERUN_INPUT_SAGE2) */
    const char *path;             /* the plugin file, as found */
    char sha256[65];              /* hex SHA-256 of the plugin file */
    /* (with plugin ABI 1.1) name is the label: the variant's name, or name[key=value,...] for one
     * bound to parameter values (sagerun_registry_bind); base_name is always the plain name. */
    const char *base_name;
    uint32_t n_params;            /* declared parameters: sagerun_registry_variant_param */
    uint32_t flags;               /* SAGERUN_VARIANT_* of plugin.h */
    /* (with Python variants) A variant a Python file declares (path and sha256 are the .py
     * file's) may name an extension module it loads: its path as declared and the hex SHA-256 of
     * that file; NULL and "" otherwise. */
    const char *extension_path;
    char extension_sha256[65];
    /* (0.2, plugin ABI 1.2) What the variant declares it does: SAGERUN_FEATURE_* of plugin.h
     * (sagerun_feature_name names each bit), 0 for a plugin of ABI 1.0/1.1 (the 1.1 problem only:
     * q_len = kv_len, dense); dtypes: bits 1u << sagerun_dtype of Q, K, V it takes (F16 and BF16
     * where it declares none); head_dims: the n_head_dims head dims it takes (valid while the
     * registry lives), 0 and NULL for any. */
    uint32_t features, dtypes, n_head_dims;
    const uint32_t *head_dims;
} sagerun_variant_info;

/* (0.2) The words `list` and refusals use for one SAGERUN_FEATURE_* bit of plugin.h ("kv_len !=
 * q_len", "sliding window", "paged K/V", ...); "unknown feature" for another value. */
SAGERUN_API const char *sagerun_feature_name(uint32_t bit);

/* One declared parameter of a variant and its value in that entry. */
typedef struct sagerun_variant_param {
    uint32_t struct_size;
    const char *key;
    const char *description;
    int type;                     /* sagerun_param_type (plugin.h) */
    double value;                 /* the entry's value (the default for the plain entry) */
    double default_value, min_value, max_value;
} sagerun_variant_param;

typedef struct sagerun_rejection {
    uint32_t struct_size;
    const char *path;
    const char *reason;
} sagerun_rejection;

/* Loaded variants, sorted by name. Pointers stay valid while the registry lives. The caller sets
 * info->struct_size / out->struct_size to the size it was compiled with (0: this header's); only
 * that much is written. */
SAGERUN_API size_t sagerun_registry_variant_count(const sagerun_registry *reg);
SAGERUN_API sagerun_status sagerun_registry_variant_info(const sagerun_registry *reg,
                                                         size_t index, sagerun_variant_info *info,
                                                         sagerun_error *err);
/* Index of the variant with this name or label, or -1. A spec NAME[key=value,...] finds the entry
 * sagerun_registry_bind made for it (whatever the order of its keys). */
SAGERUN_API long sagerun_registry_find(const sagerun_registry *reg, const char *name);
/* Resolves a spec NAME or NAME[key=value,...] to a variant index, adding an entry for parameter
 * values not bound before. The entry's name is the canonical label, every parameter in
 * declaration order: "tile[bq=64,stages=2]". Unknown variants (SAGERUN_NOT_FOUND), unknown or
 * repeated keys, values of the wrong type or out of range (SAGERUN_INVALID_ARGUMENT) are errors
 * naming the variant and the key. A new entry is appended: no other index changes. */
SAGERUN_API sagerun_status sagerun_registry_bind(sagerun_registry *reg, const char *spec,
                                                 long *index, sagerun_error *err);
/* Parameter k (< info.n_params) of variant index; only out->struct_size bytes are written. */
SAGERUN_API sagerun_status sagerun_registry_variant_param(const sagerun_registry *reg,
                                                          size_t index, uint32_t k,
                                                          sagerun_variant_param *out,
                                                          sagerun_error *err);
/* "int", "float", "bool" for a sagerun_param_type (plugin.h); "unknown" for other values. */
SAGERUN_API const char *sagerun_param_type_name(int type);
/* A parameter value as labels write it (buf of len bytes, always NUL-terminated): an integer for
 * int ("64"), for float the shortest %g text that reads back as the value ("0.5", "0.1",
 * "0.3333333333333333": two values never share a label), "true"/"false" for bool. */
SAGERUN_API void sagerun_param_format(int type, double value, char *buf, size_t len);
SAGERUN_API size_t sagerun_registry_rejection_count(const sagerun_registry *reg);
SAGERUN_API sagerun_status sagerun_registry_rejection(const sagerun_registry *reg, size_t index,
                                                      sagerun_rejection *out,
                                                      sagerun_error *err);

/* ---- Inputs and one variant run ---------------------------------------------------------------
 * Inputs are Q, K, V of a problem in the context's memory, owned by the sagerun_inputs handle. */
typedef struct sagerun_inputs sagerun_inputs;

/* Allocates Q, K, V for a checked problem in the context and fills them from the deterministic
 * generator with the given seed (the same bytes on every backend). */
SAGERUN_API sagerun_status sagerun_inputs_create_synthetic(sagerun_context *ctx,
                                                           const sagerun_problem *problem,
                                                           uint64_t seed, sagerun_inputs **out,
                                                           sagerun_error *err);
/* Takes Q, K, V from host arrays of the problem's dtype and layout (copied). */
SAGERUN_API sagerun_status sagerun_inputs_create_from_host(sagerun_context *ctx,
                                                           const sagerun_problem *problem,
                                                           const void *q, const void *k,
                                                           const void *v, sagerun_inputs **out,
                                                           sagerun_error *err);
/* Takes q, k, v from a safetensors file: tensors named "q", "k", "v", F16 or BF16, rank 4, in the
 * given layout ([B,N,H,D] for NHD, [B,H,N,D] for HND); Hq and Hkv from q's and k's shapes, kv_len
 * from k's. (0.2) A varlen file has q [total_q, Hq, D], k and v [total_kv, Hkv, D] and the I32
 * tensors "cu_seqlens_q", "cu_seqlens_kv" [B + 1]; a paged one k and v [pages, page_size, Hkv, D]
 * and "block_table" I32 [B, pages_per_seq] (both: NHD only); __metadata__ "kv_len", "seq_len",
 * "page_size" where the tensors do not say them (as sagerun_inputs_write_safetensors writes
 * them). Lengths that do not sum to the tokens of q or k, a block table entry past the pages, a
 * page_size other than k's, and an I32 tensor of another dtype or rank are SAGERUN_FORMAT or
 * SAGERUN_INVALID_ARGUMENT naming the file and the field. The masks (causal, sm_scale, align,
 * window, softcap) are the workload's (sagerun_workload_from_safetensors): the inputs' are the
 * defaults. When
 * the file also holds sage2-quantized tensors under the golden files' names (q_int8, q_scale,
 * k_int8, k_scale, v_fp8_f32acc, v_scale_f32acc, k_mean), SAGE2 variants with the sm89
 * granularities use those instead of quantizing. A tensor "k_mean" alone ([B,1,Hkv,D] for NHD,
 * [B,Hkv,1,D] for HND, the dtype of q, k, v: what `k.mean(dim=seq_dim, keepdim=True)` gives) is
 * used by the sage2 quantizer instead of the mean it computes (torch.mean's, SAGE2.md 1.1). */
SAGERUN_API sagerun_status sagerun_inputs_create_from_safetensors(sagerun_context *ctx,
                                                                  const char *path, int layout,
                                                                  sagerun_inputs **out,
                                                                  sagerun_error *err);
SAGERUN_API void sagerun_inputs_destroy(sagerun_inputs *in);
/* (0.2) The same for any problem: a varlen problem needs its lengths (sequences->cu_seqlens_q and
 * _kv), a paged one may give its block table (NULL: sequence b's pages are a permutation of the
 * cache's drawn from the seed, so that a kernel ignoring the table reads other keys). sequences
 * is NULL for a dense problem. Checked with sagerun_sequences_check. The arrays are copied. */
SAGERUN_API sagerun_status sagerun_inputs_create_synthetic_seq(sagerun_context *ctx,
                                                               const sagerun_problem *problem,
                                                               const sagerun_sequences *sequences,
                                                               uint64_t seed,
                                                               sagerun_inputs **out,
                                                               sagerun_error *err);
/* (0.2) Q, K, V from host arrays as stored (sagerun_problem_q_elements / kv_elements elements:
 * packed for varlen, the page cache for paged), with the problem's sequences (the block table is
 * required for paged). */
SAGERUN_API sagerun_status sagerun_inputs_create_from_host_seq(sagerun_context *ctx,
                                                               const sagerun_problem *problem,
                                                               const sagerun_sequences *sequences,
                                                               const void *q, const void *k,
                                                               const void *v, sagerun_inputs **out,
                                                               sagerun_error *err);
/* (0.2) Q, K, V where the caller holds them, not copied: addresses in the context's memory as
 * stored (as _from_host_seq takes them): CUDA device pointers of the context's device, whose
 * primary context sagerun uses as PyTorch does (a torch CUDA tensor's data_ptr()). A host
 * context is SAGERUN_UNSUPPORTED (its memory is blocks of its own: copy with _from_host_seq).
 * They must stay valid while the inputs live; destroy leaves them.
 * A comparison checks them after every checked call and puts back what a variant wrote into
 * them. The sequences are copied (the block table is required for paged). */
SAGERUN_API sagerun_status sagerun_inputs_create_from_device_seq(sagerun_context *ctx,
                                                                 const sagerun_problem *problem,
                                                                 const sagerun_sequences *sequences,
                                                                 uint64_t q, uint64_t k,
                                                                 uint64_t v, sagerun_inputs **out,
                                                                 sagerun_error *err);
/* (0.2) The inputs' sequences: host arrays owned by the inputs (NULL where the problem has none),
 * valid while they live; out->struct_size as the caller compiled it (0: this header's). */
SAGERUN_API sagerun_status sagerun_inputs_sequences(const sagerun_inputs *in,
                                                    sagerun_sequences *out, sagerun_error *err);

SAGERUN_API const sagerun_problem *sagerun_inputs_problem(const sagerun_inputs *in);
/* Writes Q, K, V as the tensors "q", "k", "v" of a safetensors file (the problem's dtype and
 * layout, __metadata__ {"layout": "NHD" or "HND"}, and "causal": "true" and "sm_scale" where the
 * problem has them, as sagerun_workload_from_safetensors takes them back; (0.2) stored as the
 * problem stores them, with the I32 tensors of its sequences, and "kv_len", "seq_len", "align",
 * "window" ("L,R"), "softcap", "page_size" where not the default): what
 * sagerun_inputs_create_from_safetensors reads back into the same bytes. The file is written as
 * sagerun_file_write writes. */
SAGERUN_API sagerun_status sagerun_inputs_write_safetensors(const sagerun_inputs *in,
                                                            const char *path,
                                                            sagerun_error *err);

/* (0.3) SHA-256 of one tensor the inputs hold, streamed from the context's memory: "q", "k",
 * "v", "cu_seqlens_q", "cu_seqlens_kv", "block_table" or "k_mean" (the ones a variant reads and
 * must not write, plugin.h). SAGERUN_NOT_FOUND where the inputs have none of that name (a dense
 * problem has no sequences), SAGERUN_INVALID_ARGUMENT for another name. Taken before and after a
 * variant's calls it tells whether the variant wrote into its inputs (`sagerun run` does so). */
SAGERUN_API sagerun_status sagerun_inputs_sha256(const sagerun_inputs *in, const char *tensor,
                                                 char hex[65], sagerun_error *err);

/* One variant instantiated for one set of inputs: create → prepare → run* → destroy. */
typedef struct sagerun_instance sagerun_instance;

SAGERUN_API sagerun_status sagerun_instance_create(sagerun_registry *reg, size_t variant_index,
                                                   sagerun_context *ctx, sagerun_inputs *in,
                                                   sagerun_instance **out, sagerun_error *err);
SAGERUN_API void sagerun_instance_destroy(sagerun_instance *inst);
/* Everything before the timed runs (e.g. quantization). Seconds spent go to *seconds if given. */
SAGERUN_API sagerun_status sagerun_instance_prepare(sagerun_instance *inst, double *seconds,
                                                    sagerun_error *err);
/* One timed call of the variant's run: device events on the context's stream (host backend: a
 * monotonic clock). *seconds receives the elapsed time when not NULL. */
SAGERUN_API sagerun_status sagerun_instance_run(sagerun_instance *inst, double *seconds,
                                                sagerun_error *err);
/* The output O (problem dtype and layout) in the context's memory, and its size in bytes. */
SAGERUN_API uint64_t sagerun_instance_output(const sagerun_instance *inst, uint64_t *bytes);
/* SHA-256 of the output, streamed from the context's memory; hex is 65 bytes. Before a run has
 * returned there is no output: this and sagerun_instance_write_output are then an error. */
SAGERUN_API sagerun_status sagerun_instance_output_sha256(sagerun_instance *inst, char hex[65],
                                                          sagerun_error *err);
/* Whether every run so far left the memory after O alone: the 64 KiB after it are filled with
 * a known byte when the instance is made and not written by libsagerun again (plugin.h section
 * 7). SAGERUN_OK when they still hold it; SAGERUN_VARIANT, saying how many bytes changed and
 * where the first is, when the variant wrote past the end of its output; another status when
 * they could not be read. The compare engine checks it after every checked call. */
SAGERUN_API sagerun_status sagerun_instance_check_output_end(const sagerun_instance *inst,
                                                             sagerun_error *err);
/* Writes the output O as the tensor "o" of a safetensors file (shape and __metadata__ as
 * sagerun_inputs_write_safetensors writes q), as sagerun_file_write writes. */
SAGERUN_API sagerun_status sagerun_instance_write_output(sagerun_instance *inst, const char *path,
                                                        sagerun_error *err);

/* The sage2 quantizer (sagerun_sage2_quantize, sagerun_sage2_tensors_free) is declared in
 * <sagerun/sage2.h> with its structs: kernel families live in extension headers, this one
 * describes attention. */

/* The launch geometry the variant reported for this problem (the report's "scheduler"); the
 * struct is defined in plugin.h. */
struct sagerun_launch_geometry;
SAGERUN_API sagerun_status sagerun_instance_geometry(const sagerun_instance *inst,
                                                     struct sagerun_launch_geometry *out,
                                                     sagerun_error *err);

/* ---- Profiler ranges ----------------------------------------------------------------------------
 * NVTX push/pop ranges of the default domain on the calling thread, for Nsight Systems (nsys) and
 * Nsight Compute (ncu): the library marks its phases and every call into a variant with them
 * (create and prepare, warm-up, checked calls, rounds, "LABEL sample (round R)", "run NAME", ...);
 * a caller marks its own the same way. No NVTX call is made at all unless a tool is attached
 * (NVTX_INJECTION64_PATH, which nsys and ncu set, read once); a library built without CUDA has no
 * ranges (the calls below do nothing). */
#define SAGERUN_RANGES_COMPILED_OUT 0 /* built without CUDA */
#define SAGERUN_RANGES_NO_TOOL 1      /* no tool attached: no NVTX calls */
#define SAGERUN_RANGES_TOOL 2         /* a tool receives the ranges */
SAGERUN_API int sagerun_ranges_state(void);
/* Pushes a range named name (cut at 159 bytes). registered != 0 registers the name first: `nsys
 * --capture-range=nvtx` starts a capture only on a registered name (registering costs a lookup:
 * for ranges pushed rarely). Every push is popped by sagerun_range_pop on the same thread. */
SAGERUN_API void sagerun_range_push(const char *name, int registered);
SAGERUN_API void sagerun_range_pop(void);

/* ---- Files ------------------------------------------------------------------------------------
 * How sagerun reads its inputs and writes its outputs (reports, workloads, tensors), for callers
 * that write files beside them the same way. A hostile path cannot hang, crash or make sagerun
 * destroy what is not its own output:
 * - An input is opened without blocking (a FIFO without a writer, a tape device) and must be a
 *   regular file: a folder, FIFO, device or socket is an error naming the path and what it is.
 * - An output "-" is standard output. Any other replaces a regular file atomically (a temporary
 *   file in the same folder, fsync, rename), keeping an existing file's mode (a new file gets the
 *   umask's); a symbolic link is written through (its target replaced atomically), never
 *   replaced, and only when it leads to a regular file. A device, FIFO, folder, socket or
 *   dangling link is refused before anything is written. */

/* Reads a whole input file into a malloc'd buffer (released with free()) with a NUL byte after
 * its *size bytes. More than max_bytes is an error (SAGERUN_FORMAT, "too large"). */
SAGERUN_API sagerun_status sagerun_file_read(const char *path, size_t max_bytes, char **data,
                                             size_t *size, sagerun_error *err);
/* Writes size bytes as an output (above). */
SAGERUN_API sagerun_status sagerun_file_write(const char *path, const void *data, size_t size,
                                              sagerun_error *err);
/* Whether path could be written as an output now: what it names (above), and that its folder
 * exists and is writable. For checking every output before a long measurement; nothing is
 * created. */
SAGERUN_API sagerun_status sagerun_output_check(const char *path, sagerun_error *err);
/* SHA-256 of an input file's bytes as 64 lower-case hex digits (hex: 65 bytes). */
SAGERUN_API sagerun_status sagerun_file_sha256(const char *path, char hex[65],
                                               sagerun_error *err);

/* ---- Text -------------------------------------------------------------------------------------
 * Strings that come from files or plugins (labels, names, descriptions, failure and rejection
 * reasons) shown on one line of a terminal or of a markdown table, by the rule sagerun's own
 * renderings follow: a control character (C0 and DEL as \xNN, C1 as \u00NN) and the line and
 * paragraph separators (\u2028, \u2029) are written visibly, so that a string can neither end its
 * line and forge the lines after it nor drive the terminal. Other bytes pass unchanged. */
#define SAGERUN_TEXT_MARKDOWN_CELL 1u /* also '|', '\', '<' and '&' backslash-escaped (\|, \\,
                                        * \<, \&): a cell of a markdown table, which can neither
                                        * add columns nor carry an HTML tag or entity */
/* s escaped (above) in a malloc'd string, released with free(); NULL when s is NULL, flags has a
 * bit not defined here, or memory runs out. */
SAGERUN_API char *sagerun_text_escape(const char *s, unsigned flags);

#ifdef __cplusplus
}
#endif
#endif
