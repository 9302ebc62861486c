/* sagerun: workloads — part of libsagerun's C ABI.
 *
 * A workload is one attention call to measure: its problem (sagerun.h), where its inputs come
 * from (the deterministic generator with a seed and distribution knobs, or a safetensors file of
 * q, k, v) and free-form metadata that reports carry verbatim. `sagerun compare --workload FILE`
 * and every workload of a sweep are these. Conventions are sagerun.h's.
 *
 * A workload file is a JSON object; every key is optional except "shape":
 *   {
 *     "name": "seed",                       default: the file name without extension
 *     "shape": [B, N, Hq, D],               positive integers
 *     "heads_kv": Hkv,                      default Hq; Hq must be a multiple of it
 *     "layout": "NHD" | "HND",              default "NHD"; with a safetensors input, the
 *                                           file's own (its __metadata__ "layout") when it has one
 *     "dtype": "fp16" | "bf16",             default "fp16" (sagerun_dtype_parse's spellings)
 *     "causal": false,                      true or "top-left": causal, the diagonal at the
 *                                           top left; "bottom-right": at the bottom right
 *                                           (sagerun_mask_align; the window's too)
 *     "sm_scale": 0.088388,                 default D^-0.5
 *     "kv_len": K,                          keys per sequence (default N; not with "varlen")
 *     "window": [L, R],                     a sliding window: L keys before the diagonal, R
 *                                           after, each >= 0 or -1 (unbounded)
 *     "softcap": 30,                        logits x -> softcap*tanh(x/softcap); default 0: none
 *     "varlen": [100, 2000, "1:4096"]       sequences of their own lengths (a length: queries =
 *             | "random:MIN-MAX:SEED",      keys; "Q:K": queries and keys), or B lengths drawn
 *                                           from SEED (below); B and N become the count and
 *                                           the longest; NHD only
 *     "page_size": P,                       K/V as a paged cache of pages of P keys, the block
 *                                           table drawn from the input seed; NHD only
 *     "input": {"source": "synthetic", "seed": 440420, "q_std": 1, "k_std": 1, "v_std": 1,
 *               "k_bias": 2, "outlier_channels": 0, "outlier_scale": 8}
 *            | {"source": "safetensors", "path": "qkv.safetensors"},  relative to the file
 *     "metadata": { ... }                   any JSON object, copied into reports
 *   }
 * Unknown keys, wrong types and out-of-range values are errors naming the file and the key
 * ("w.json: key 'shape': expected an array of 4 positive integers"). The knobs of a synthetic
 * input are rounded to multiples of 1/256 and must lie in [0, 255] (outlier_scale >= 1,
 * outlier_channels <= D). kv_len, varlen and page_size need synthetic inputs.
 *
 * The varlen SPEC (a workload file's "varlen" string, the command line's --varlen): lengths
 * "100,2000,37" (queries = keys), pairs "Q:K" ("1:4096,16:8192"; both kinds may mix), each from
 * 1 to 2^30, or "random:MIN-MAX:SEED": B lengths (queries = keys), length b (from 0) = MIN +
 * x_b mod (MAX - MIN + 1), x_b the (b+1)-th output of splitmix64 from state SEED (each output:
 * state += 0x9e3779b97f4a7c15; z = state; z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9;
 * z = (z ^ z >> 27) * 0x94d049bb133111eb; x = z ^ z >> 31), the same on every machine. */
#ifndef SAGERUN_WORKLOAD_H
#define SAGERUN_WORKLOAD_H

#include <stdint.h>

#include "sagerun.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The generator seed of the seed's call and of workloads that name none. */
#define SAGERUN_WORKLOAD_DEFAULT_SEED 440420u

typedef struct sagerun_workload sagerun_workload;

/* The seed's call: [1, 37810, 56, 128], Hkv 56, NHD, fp16, non-causal, synthetic inputs with
 * seed SAGERUN_WORKLOAD_DEFAULT_SEED and the default knobs, the seed report's metadata; named
 * "seed". */
SAGERUN_API sagerun_status sagerun_workload_default(sagerun_workload **out, sagerun_error *err);

/* Synthetic inputs of a problem (checked with sagerun_problem_check) from the generator with
 * this seed and the default knobs; metadata {}; name: name (NULL: "synthetic"). */
SAGERUN_API sagerun_status sagerun_workload_synthetic(const sagerun_problem *problem,
                                                      uint64_t seed, const char *name,
                                                      sagerun_workload **out,
                                                      sagerun_error *err);

/* Reads a workload file (JSON, above; at most 16 MiB). A path ending in ".safetensors" is taken
 * as an input file instead, as sagerun_workload_from_safetensors(path, -1) does. The file is
 * opened without blocking and must be a regular file (a FIFO, device or folder is an error). */
SAGERUN_API sagerun_status sagerun_workload_load(const char *path, sagerun_workload **out,
                                                 sagerun_error *err);

/* Parses a workload from JSON text. origin names it in errors ("sweep.json: workloads[2]");
 * base_dir resolves a relative input path (NULL: the current directory). */
SAGERUN_API sagerun_status sagerun_workload_parse(const char *json_text, const char *origin,
                                                  const char *base_dir, sagerun_workload **out,
                                                  sagerun_error *err);

/* A workload whose inputs are the tensors "q", "k", "v" of a safetensors file (rank 4, F16 or
 * BF16, one dtype). layout: SAGERUN_LAYOUT_NHD or _HND, or -1 for the file's __metadata__
 * "layout" ("NHD" or "HND"; NHD when absent); one given where the file names the other is
 * SAGERUN_INVALID_ARGUMENT. The shapes are checked in that layout; k and v may
 * have fewer heads than q (GQA). __metadata__ "sm_scale" (a decimal string), when present, is
 * the softmax scale, and "causal" ("true" or "false"; false when absent) says whether the
 * attention is causal. metadata: the file's __metadata__; name: the file name without extension. */
SAGERUN_API sagerun_status sagerun_workload_from_safetensors(const char *path, int layout,
                                                             sagerun_workload **out,
                                                             sagerun_error *err);

SAGERUN_API void sagerun_workload_destroy(sagerun_workload *workload);

/* The name, the problem (owned by the workload, valid until it changes or is destroyed), the
 * input file (NULL for synthetic inputs) and the generator seed (0 for an input file). */
SAGERUN_API const char *sagerun_workload_name(const sagerun_workload *workload);
SAGERUN_API const sagerun_problem *sagerun_workload_problem(const sagerun_workload *workload);
SAGERUN_API const char *sagerun_workload_input_path(const sagerun_workload *workload);
SAGERUN_API uint64_t sagerun_workload_seed(const sagerun_workload *workload);

/* Changes: the name (non-empty); the problem (checked; for an input file the file still decides
 * the shape and dtype: sagerun_workload_create_inputs refuses a problem the file does not hold);
 * the generator seed (synthetic inputs only: SAGERUN_INVALID_ARGUMENT for an input file); the
 * metadata (a JSON object's text, or NULL for {}). A failed change leaves the workload as it
 * was. */
SAGERUN_API sagerun_status sagerun_workload_set_name(sagerun_workload *workload, const char *name,
                                                     sagerun_error *err);
SAGERUN_API sagerun_status sagerun_workload_set_problem(sagerun_workload *workload,
                                                        const sagerun_problem *problem,
                                                        sagerun_error *err);
SAGERUN_API sagerun_status sagerun_workload_set_seed(sagerun_workload *workload, uint64_t seed,
                                                     sagerun_error *err);
SAGERUN_API sagerun_status sagerun_workload_set_metadata(sagerun_workload *workload,
                                                         const char *metadata_json,
                                                         sagerun_error *err);

/* Varlen and paged workloads (ABI 0.2). The masks (kv_len of a dense workload, causal and its
 * align, window, softcap) are the problem's: sagerun_workload_set_problem. Apply in this order:
 * the problem, then the lengths (set_varlen or set_lengths: they set batch, seq_len, kv_len and
 * the totals), then set_paged (its pages come from the lengths). Each checks the problem it makes
 * and leaves the workload as it was on failure; SAGERUN_INVALID_ARGUMENT for a workload whose
 * inputs come from a file. set_problem keeps the lengths and pages only for a problem with the
 * same batch, seq_len, kv_len, varlen, totals and pages; a dense problem (varlen 0, page_size 0)
 * drops them; another varlen or paged one is SAGERUN_INVALID_ARGUMENT. A problem whose
 * struct_size ends before kv_len (a caller of ABI 0.1) changes only the fields it has.
 *   set_varlen: the lengths a varlen SPEC (above) names; errors say "varlen: ...".
 *   set_lengths: count lengths of queries and of keys (kv_lens NULL: the same), each >= 1.
 *   set_paged: K/V a paged cache of pages of page_size keys, pages and pages_per_seq exactly what
 *   the sequences use, the block table drawn from the seed when inputs are made; 0: dense. */
SAGERUN_API sagerun_status sagerun_workload_set_varlen(sagerun_workload *workload,
                                                       const char *spec, sagerun_error *err);
SAGERUN_API sagerun_status sagerun_workload_set_lengths(sagerun_workload *workload,
                                                        const uint32_t *q_lens,
                                                        const uint32_t *kv_lens, uint32_t count,
                                                        sagerun_error *err);
SAGERUN_API sagerun_status sagerun_workload_set_paged(sagerun_workload *workload,
                                                      uint32_t page_size, sagerun_error *err);
/* The workload's sequences into *out (out->struct_size as the caller compiled it, 0: this
 * header's; count = batch):
 * cu_seqlens_q/_kv of a varlen workload (owned by it, valid until it changes), NULL otherwise;
 * block_table NULL (drawn when inputs are made: sagerun_inputs_sequences has it). */
SAGERUN_API sagerun_status sagerun_workload_sequences(const sagerun_workload *workload,
                                                      sagerun_sequences *out, sagerun_error *err);

/* The workload as a workload file (above) with every default made explicit (sm_scale as the
 * value used, every knob of a synthetic input; the keys of ABI 0.2, kv_len to page_size, only
 * where not the default, varlen as an explicit array); indent: spaces per level, 0 for one line. A
 * NUL-terminated string the caller releases with free(); NULL when out of memory. Parsing it
 * gives the same workload (an input path is then absolute or relative to base_dir). */
SAGERUN_API char *sagerun_workload_to_json(const sagerun_workload *workload, int indent);

/* Q, K and V of the workload in ctx: generated (the same bytes on every backend) or read from
 * its input file, whose shapes and dtype must be the workload's problem (SAGERUN_FORMAT naming
 * both when not); a file's sage2-quantized tensors and k_mean come along
 * (sagerun_inputs_create_from_safetensors). The inputs' problem is the workload's, sm_scale and
 * causal included. Synchronous. */
SAGERUN_API sagerun_status sagerun_workload_create_inputs(const sagerun_workload *workload,
                                                          sagerun_context *ctx,
                                                          sagerun_inputs **out,
                                                          sagerun_error *err);

#ifdef __cplusplus
}
#endif
#endif
