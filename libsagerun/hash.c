/* Hashing: SHA-256 of device or host memory, streamed through pinned staging buffers, in line or
 * on a background thread of its own; SHA-256 of files (plugins). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cuda_driver.h"
#include "safe_io.h"

/* ---- hashing ---- */
static void hex_digest(const unsigned char digest[crypto_hash_sha256_BYTES], char hex[65])
{
    sodium_bin2hex(hex, 65, digest, crypto_hash_sha256_BYTES);
}

/* Device memory is hashed through two pinned staging buffers: the copy of one chunk overlaps the
 * hashing of the previous one, and the output never exists whole on the host. `stream` is the
 * context's stream, or one of a background hash job's own. */
#define SR_HASH_CHUNK (16u << 20)

static sagerun_status hash_device(sagerun_context *ctx, CUstream stream, uint64_t addr,
                                  uint64_t bytes, char hex[65], sagerun_error *err)
{
    crypto_hash_sha256_state st;
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_init(&st);
    if (ctx->backend == SAGERUN_BACKEND_HOST) {
        crypto_hash_sha256_update(&st, (const unsigned char *)(uintptr_t)addr, bytes);
        crypto_hash_sha256_final(&st, digest);
        hex_digest(digest, hex);
        return SAGERUN_OK;
    }
    if (sr_context_bind(ctx, err) != SAGERUN_OK)
        return err ? err->status : SAGERUN_CUDA;
    void *buf[2] = {NULL, NULL};
    CUevent done[2] = {NULL, NULL};
    sagerun_status status = SAGERUN_OK;
    CUresult r = CUDA_SUCCESS;
    const char *what = "cuMemAllocHost (hash staging)";
    for (int i = 0; i < 2 && r == CUDA_SUCCESS; i++) {
        r = sr_cu.cuMemAllocHost(&buf[i], SR_HASH_CHUNK);
        if (r == CUDA_SUCCESS) {
            what = "cuEventCreate (hash staging)";
            r = sr_cu.cuEventCreate(&done[i], CU_EVENT_DISABLE_TIMING);
        }
    }
    uint64_t chunks = (bytes + SR_HASH_CHUNK - 1) / SR_HASH_CHUNK;
    for (uint64_t c = 0; c <= chunks && r == CUDA_SUCCESS; c++) {
        if (c < chunks) { /* enqueue chunk c */
            uint64_t off = c * SR_HASH_CHUNK;
            uint64_t n = bytes - off < SR_HASH_CHUNK ? bytes - off : SR_HASH_CHUNK;
            what = "cuMemcpyDtoHAsync (hash staging)";
            r = sr_cu.cuMemcpyDtoHAsync(buf[c & 1], (CUdeviceptr)(addr + off), (size_t)n, stream);
            if (r == CUDA_SUCCESS)
                r = sr_cu.cuEventRecord(done[c & 1], stream);
        }
        if (c > 0 && r == CUDA_SUCCESS) { /* hash chunk c-1 while chunk c copies */
            uint64_t p = c - 1, off = p * SR_HASH_CHUNK;
            uint64_t n = bytes - off < SR_HASH_CHUNK ? bytes - off : SR_HASH_CHUNK;
            what = "cuEventSynchronize (hash staging)";
            r = sr_cu.cuEventSynchronize(done[p & 1]);
            if (r == CUDA_SUCCESS)
                crypto_hash_sha256_update(&st, buf[p & 1], n);
        }
    }
    if (r != CUDA_SUCCESS)
        status = sr_cuda_fail(err, (int)r, what);
    sr_cu.cuStreamSynchronize(stream);
    for (int i = 0; i < 2; i++) {
        if (buf[i])
            sr_cu.cuMemFreeHost(buf[i]);
        if (done[i])
            sr_cu.cuEventDestroy(done[i]);
    }
    if (status == SAGERUN_OK) {
        crypto_hash_sha256_final(&st, digest);
        hex_digest(digest, hex);
    }
    return status;
}

sagerun_status sr_sha256_memory(sagerun_context *ctx, uint64_t addr, uint64_t bytes, char hex[65],
                                sagerun_error *err)
{
    return hash_device(ctx, (CUstream)ctx->cu_stream, addr, bytes, hex, err);
}

/* ---- background hashing ---- */
struct sr_hash_job {
    sagerun_context *ctx;
    uint64_t addr, bytes;
    pthread_t thread;
    sagerun_status status;
    sagerun_error err;
    char hex[65];
};

static void *hash_job_main(void *arg)
{
    sr_hash_job *job = arg;
    CUstream stream = NULL;
    if (job->ctx->backend == SAGERUN_BACKEND_CUDA) {
        /* A stream of its own, non-blocking, so the copies run beside the timed work instead of
         * queueing behind it on the context's stream. */
        CUresult r = sr_cu.cuCtxSetCurrent((CUcontext)job->ctx->cu_context);
        if (r == CUDA_SUCCESS)
            r = sr_cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
        if (r != CUDA_SUCCESS) {
            job->status = sr_cuda_fail(&job->err, (int)r, "cuStreamCreate (hash job)");
            return NULL;
        }
    }
    job->status = hash_device(job->ctx, stream, job->addr, job->bytes, job->hex, &job->err);
    if (stream)
        sr_cu.cuStreamDestroy(stream);
    return NULL;
}

sagerun_status sr_hash_job_start(sagerun_context *ctx, uint64_t addr, uint64_t bytes,
                                 sr_hash_job **out, sagerun_error *err)
{
    sr_hash_job *job = calloc(1, sizeof *job);
    if (!job)
        return sr_error_set(err, SAGERUN_OUT_OF_MEMORY, "out of memory");
    job->ctx = ctx;
    job->addr = addr;
    job->bytes = bytes;
    int rc = pthread_create(&job->thread, NULL, hash_job_main, job);
    if (rc != 0) {
        free(job);
        return sr_error_set(err, SAGERUN_INTERNAL, "cannot start a hashing thread: %s",
                            strerror(rc));
    }
    *out = job;
    return SAGERUN_OK;
}

sagerun_status sr_hash_job_finish(sr_hash_job *job, char hex[65], sagerun_error *err)
{
    if (!job)
        return sr_error_set(err, SAGERUN_INTERNAL, "no hash job");
    pthread_join(job->thread, NULL);
    sagerun_status st = job->status;
    if (st == SAGERUN_OK)
        memcpy(hex, job->hex, 65);
    else if (err)
        *err = job->err;
    free(job);
    return st;
}


sagerun_status sagerun_file_sha256(const char *path, char hex[65], sagerun_error *err)
{
    if (!path || !hex)
        return sr_error_set(err, SAGERUN_INVALID_ARGUMENT, "file_sha256: NULL argument");
    FILE *f = sr_fopen_input(path, err); /* a FIFO must not block, a device not be read */
    if (!f)
        return err ? err->status : SAGERUN_IO;
    crypto_hash_sha256_state st;
    crypto_hash_sha256_init(&st);
    unsigned char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        crypto_hash_sha256_update(&st, buf, n);
    int failed = ferror(f);
    fclose(f);
    if (failed)
        return sr_error_set(err, SAGERUN_IO, "%s: read error", path);
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_final(&st, digest);
    hex_digest(digest, hex);
    return SAGERUN_OK;
}
