/* safetensors files: strict reading and atomic writing.
 *
 * Format: 8-byte little-endian header length H, H bytes of JSON (an object: tensor name ->
 * {"dtype", "shape", "data_offsets": [begin, end]} relative to the data area that follows the
 * header, plus an optional "__metadata__" object of strings), then the data.
 *
 * Opening validates everything before any data is read: header length against the file size,
 * well-formed JSON without duplicate keys, known dtypes, shape × dtype size == end − begin with
 * checked arithmetic, offsets within the data area and no two tensors overlapping. Every error
 * names the file and the tensor or field. Data are read with pread straight into the caller's
 * buffer (or in chunks for device memory), so a large file is never held twice. */
#ifndef SAGERUN_SAFETENSORS_H
#define SAGERUN_SAFETENSORS_H

#include <jansson.h>
#include <stdint.h>

#include "internal.h"

#define SR_ST_MAX_RANK 8
#define SR_ST_MAX_HEADER (100u << 20) /* the reference implementation's limit */

typedef struct sr_st_tensor {
    char *name;
    int dtype;              /* a sagerun_dtype, or -1 for a known safetensors dtype sagerun
                               does not compute with (U8, I64, ...) */
    const char *dtype_name; /* "F16", "I64", ... (static) */
    uint32_t elem_size;
    uint32_t rank;
    uint64_t shape[SR_ST_MAX_RANK];
    uint64_t elements;
    uint64_t offset; /* absolute file offset of the first byte */
    uint64_t bytes;
} sr_st_tensor;

typedef struct sr_safetensors {
    char *path;
    int fd;
    uint64_t file_size;
    uint64_t data_start; /* 8 + header length */
    size_t count;
    sr_st_tensor *tensors; /* in file order (by offset) */
    json_t *metadata;      /* the __metadata__ object (strings), or NULL; owned */
} sr_safetensors;

sagerun_status sr_safetensors_open(const char *path, sr_safetensors **out, sagerun_error *err);
void sr_safetensors_close(sr_safetensors *f);

/* The tensor with this name, or NULL. */
const sr_st_tensor *sr_safetensors_find(const sr_safetensors *f, const char *name);

/* Like find, but an error naming the file when absent, and, when dtype >= 0 / rank > 0, when the
 * dtype or shape differs from the expected ones. */
sagerun_status sr_safetensors_expect(const sr_safetensors *f, const char *name, int dtype,
                                     uint32_t rank, const uint64_t *shape,
                                     const sr_st_tensor **out, sagerun_error *err);

/* Reads `bytes` bytes of a tensor's data starting `offset` bytes into it. */
sagerun_status sr_safetensors_read_range(const sr_safetensors *f, const sr_st_tensor *t,
                                         uint64_t offset, void *dst, uint64_t bytes,
                                         sagerun_error *err);
/* Reads a whole tensor into dst, which holds `bytes` bytes (must equal the tensor's size). */
sagerun_status sr_safetensors_read_tensor(const sr_safetensors *f, const char *name, void *dst,
                                          uint64_t bytes, sagerun_error *err);
/* Reads a tensor into ctx's memory at dst: directly on the host backend, through a bounded
 * bounce buffer on CUDA. */
sagerun_status sr_safetensors_upload_tensor(const sr_safetensors *f, const sr_st_tensor *t,
                                            sagerun_context *ctx, uint64_t dst,
                                            sagerun_error *err);

/* One tensor to write: data from host memory, or (when ctx is set) from ctx's memory at addr. */
typedef struct sr_st_write_tensor {
    const char *name;
    int dtype; /* sagerun_dtype */
    uint32_t rank;
    uint64_t shape[SR_ST_MAX_RANK];
    const void *data;
    sagerun_context *ctx;
    uint64_t addr;
} sr_st_write_tensor;

/* Writes a file atomically: a temporary file in the same folder, fsync, rename. metadata is NULL
 * or an object whose values are all strings. Names must be unique and not "__metadata__". */
sagerun_status sr_safetensors_write(const char *path, const sr_st_write_tensor *tensors,
                                    size_t count, const json_t *metadata, sagerun_error *err);

/* ---- the problem of an input file (inputs_file.c) ----
 * What a file of inputs holds, as sagerun_inputs_write_safetensors writes it: q, k, v of one
 * dtype (F16 or BF16); dense: rank 4 in the layout, k and v with kv_len keys; varlen (tensors
 * "cu_seqlens_q" and "cu_seqlens_kv", I32 [B + 1]): q [total_q, Hq, D], k and v [total_kv, Hkv,
 * D]; paged (tensor "block_table", I32 [B, pages_per_seq]): k and v [pages, page_size, Hkv, D].
 * __metadata__ (strings): "layout", "causal", "sm_scale", "kv_len", "seq_len" (varlen, where not
 * the longest), "align", "window" ("L,R"), "softcap", "page_size" (must be k's). */
typedef struct sr_file_problem {
    sagerun_problem problem;     /* checked, masks included */
    bool varlen, paged;
    int32_t *cu_q, *cu_kv, *table; /* owned; NULL where the file has none */
} sr_file_problem;

/* Reads and checks the problem and sequences of an open file in this layout (the sequences
 * checked with sagerun_sequences_check); every error names the file and the tensor or field. */
sagerun_status sr_safetensors_problem(const sr_safetensors *f, int layout, sr_file_problem *fp,
                                      sagerun_error *err);
/* The sequences of fp, a view of its arrays. */
sagerun_sequences sr_file_sequences(const sr_file_problem *fp);
void sr_file_problem_free(sr_file_problem *fp);

/* The dtype for a safetensors dtype name: a sagerun_dtype, -1 for known-but-unused, -2 unknown. */
int sr_safetensors_dtype_from_name(const char *name, uint32_t *elem_size);

#endif
