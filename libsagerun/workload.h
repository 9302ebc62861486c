/* Workloads: the problem of one attention call, where its inputs come from, and free-form
 * metadata copied verbatim into reports.
 *
 * The file format, and the public handle over these, are sagerun/workload.h's. */
#ifndef SAGERUN_INTERNAL_WORKLOAD_H
#define SAGERUN_INTERNAL_WORKLOAD_H

#include <jansson.h>

#include "generate.h"
#include "internal.h"
#include "sagerun/workload.h"

typedef enum sr_workload_source {
    SR_WORKLOAD_SYNTHETIC = 0,
    SR_WORKLOAD_SAFETENSORS = 1
} sr_workload_source;

typedef struct sr_workload {
    char *name;
    char *origin; /* the file it came from, or "built-in" */
    sagerun_problem problem;
    int source;            /* sr_workload_source */
    sr_synthetic synthetic; /* SR_WORKLOAD_SYNTHETIC */
    char *input_path;       /* SR_WORKLOAD_SAFETENSORS: resolved path */
    json_t *metadata;       /* a JSON object, owned (empty when none was given) */
    /* A varlen problem's lengths (prefix sums, [batch + 1], owned) and a paged problem's block
     * table when one was given ([batch, pages_per_seq], owned; NULL: drawn from the seed). */
    int32_t *cu_seqlens_q, *cu_seqlens_kv, *block_table;
} sr_workload;

/* The workload's sequences as a view of its arrays, in *out (NULL where the problem has none);
 * returns out, or NULL for a dense problem (what sagerun_inputs_create_synthetic_seq takes). */
const sagerun_sequences *sr_workload_sequences(const sr_workload *w, sagerun_sequences *out);
/* Sets the lengths of a varlen workload from count sequence lengths (q and kv; kv NULL: the
 * same), making the problem varlen with its totals and longest; copies. */
sagerun_status sr_workload_set_lengths(sr_workload *w, const uint32_t *q_lens,
                                       const uint32_t *kv_lens, uint32_t count,
                                       sagerun_error *err);
/* Makes the workload's K/V a paged cache of pages of page_size keys: pages_per_seq and pages
 * (exactly what the sequences use) from its lengths; the block table drawn from the seed. */
sagerun_status sr_workload_set_paged(sr_workload *w, uint32_t page_size, sagerun_error *err);
/* Both check the problem they make (sagerun_problem_check) and leave w as it was on failure;
 * page_size 0 makes the K/V dense again. */

/* The varlen SPEC (sagerun/workload.h), the one parser of --varlen and a workload file's
 * "varlen": count lengths of queries and keys (new arrays, the caller frees them); batch is the
 * count of "random:MIN-MAX:SEED". Errors say what is wrong without naming the option or key
 * (callers add it). */
sagerun_status sr_varlen_parse(const char *spec, uint32_t batch, uint32_t **q_lens,
                               uint32_t **kv_lens, uint32_t *count, sagerun_error *err);
/* One entry of len bytes at text: "LEN" (queries = keys) or "Q:K". */
sagerun_status sr_varlen_entry(const char *text, size_t len, uint32_t *q, uint32_t *kv,
                               sagerun_error *err);
/* sr_varlen_parse's lengths, set with sr_workload_set_lengths. */
sagerun_status sr_workload_set_varlen_spec(sr_workload *w, const char *spec, sagerun_error *err);

/* The public handle (sagerun/workload.h, workload_handle.c) is one of these. */
struct sagerun_workload {
    sr_workload w;
};

/* The seed's call: [1, 37810, 56, 128], Hkv 56, NHD, fp16, non-causal, synthetic inputs with
 * seed 440420, the seed report's metadata. */
sagerun_status sr_workload_default(sr_workload *w, sagerun_error *err);

/* Reads a workload file (JSON as above). A path ending in ".safetensors" is taken as an input
 * file instead: see sr_workload_from_safetensors. */
sagerun_status sr_workload_load(const char *path, sr_workload *w, sagerun_error *err);

/* Parses a workload from JSON text; origin names it in errors, base_dir resolves relative input
 * paths (NULL: the current directory). */
sagerun_status sr_workload_parse(const char *text, const char *origin, const char *base_dir,
                                 sr_workload *w, sagerun_error *err);

/* A workload whose inputs are a safetensors file's q, k, v ([B, N, H, D] tensors, F16 or BF16;
 * layout: layout_hint when >= 0 (the command line's --layout), else the file's __metadata__
 * "layout" when present, else NHD; metadata = the file's __metadata__). The shapes are checked in
 * that layout: k and v may have fewer heads than q (GQA) on the head axis. */
sagerun_status sr_workload_from_safetensors(const char *path, int layout_hint, sr_workload *w,
                                            sagerun_error *err);

/* The workload as JSON in the file format above, every default made explicit (sm_scale as the
 * value used). New reference; NULL only when out of memory. */
json_t *sr_workload_to_json(const sr_workload *w);

void sr_workload_free(sr_workload *w);

/* Metadata (of a workload, of a report) from JSON text: a new object reference in *out, or
 * SAGERUN_FORMAT ("metadata: not valid JSON: ...", "metadata: expected a JSON object"). */
sagerun_status sr_metadata_parse(const char *text, json_t **out, sagerun_error *err);

/* Fills Q, K, V (allocated in ctx for w->problem) from the workload's source: the generator, or
 * the safetensors file (shapes and dtypes checked against the problem). Asynchronous on CUDA for
 * synthetic inputs. */
sagerun_status sr_workload_fill_inputs(sagerun_context *ctx, const sr_workload *w, uint64_t q,
                                       uint64_t k, uint64_t v, sagerun_error *err);

/* The seed report's metadata object, as JSON text. */
extern const char sr_workload_seed_metadata[];

#endif
