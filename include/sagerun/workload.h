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
 *     "causal": false,                      true: causal (q_len = kv_len)
 *     "sm_scale": 0.088388,                 default D^-0.5
 *     "input": {"source": "synthetic", "seed": 440420, "q_std": 1, "k_std": 1, "v_std": 1,
 *               "k_bias": 2, "outlier_channels": 0, "outlier_scale": 8}
 *            | {"source": "safetensors", "path": "qkv.safetensors"},  relative to the file
 *     "metadata": { ... }                   any JSON object, copied into reports
 *   }
 * Unknown keys, wrong types and out-of-range values are errors naming the file and the key
 * ("w.json: key 'shape': expected an array of 4 positive integers"). The knobs of a synthetic
 * input are rounded to multiples of 1/256 and must lie in [0, 255] (outlier_scale >= 1,
 * outlier_channels <= D). */
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

/* The workload as a workload file (above) with every default made explicit (sm_scale as the
 * value used, every knob of a synthetic input); indent: spaces per level, 0 for one line. A
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
