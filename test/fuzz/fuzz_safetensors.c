/* libFuzzer target: the safetensors reader (sr_safetensors_open and what reads through it).
 *
 * Each input is tried twice:
 *   1. as a whole file, byte for byte (the seeds are real files);
 *   2. when it holds a NUL byte, as "header JSON" NUL "data": the 8-byte length is written by the
 *      harness, so mutations of the JSON that change its length still reach the header parser.
 * The file lives in a memfd opened through /proc/self/fd/N (a regular file to fstat).
 *
 * Checked beyond the sanitizers: a rejected file gets a status and a message naming the file; an
 * accepted one has every tensor inside the data area, in offset order without overlap, readable
 * in full and not one byte beyond; sr_workload_from_safetensors on it succeeds or explains. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "safetensors.h"
#include "workload.h"

static int mfd = -1;
static char path[64];

static void put_file(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    if (mfd < 0) {
        mfd = memfd_create("fuzz.safetensors", MFD_CLOEXEC);
        if (mfd < 0)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", mfd);
    }
    if (ftruncate(mfd, 0) != 0 || (an && pwrite(mfd, a, an, 0) != (ssize_t)an) ||
        (bn && pwrite(mfd, b, bn, (off_t)an) != (ssize_t)bn))
        abort();
}

static void check_error(sagerun_status st, const sagerun_error *err)
{
    if (st == SAGERUN_OK || err->status != (int)st || !err->message[0] ||
        !strstr(err->message, path)) {
        fprintf(stderr, "bad error: status %d/%d, message '%s'\n", (int)st, err->status,
                err->message);
        abort();
    }
}

static void exercise(uint64_t file_size)
{
    sr_safetensors *f = NULL;
    sagerun_error err = {0};
    sagerun_status st = sr_safetensors_open(path, &f, &err);
    if (st != SAGERUN_OK) {
        check_error(st, &err);
        if (f)
            abort();
        return;
    }
    uint64_t prev_end = f->data_start;
    for (size_t i = 0; i < f->count; i++) {
        const sr_st_tensor *t = &f->tensors[i];
        if (t->offset < prev_end || t->offset > file_size || t->bytes > file_size - t->offset ||
            t->rank > SR_ST_MAX_RANK || !t->name)
            abort();
        prev_end = t->offset + t->bytes;
        const sr_st_tensor *found;
        if (sr_safetensors_expect(f, t->name, t->dtype, t->rank, t->shape, &found, &err) ||
            !found)
            abort();
        void *buf = malloc(t->bytes ? t->bytes : 1);
        if (!buf)
            abort();
        /* found: the first tensor of that name; names are unique (duplicate keys rejected) */
        if (found != t || sr_safetensors_read_tensor(f, t->name, buf, t->bytes, &err) ||
            sr_safetensors_read_range(f, t, t->bytes, buf, 1, &err) == SAGERUN_OK ||
            sr_safetensors_read_range(f, t, UINT64_MAX, buf, 2, &err) == SAGERUN_OK)
            abort();
        free(buf);
        uint64_t other[SR_ST_MAX_RANK] = {0};
        if (t->rank && sr_safetensors_expect(f, t->name, -1, t->rank, other, &found, &err) ==
                           SAGERUN_OK && memcmp(other, t->shape, t->rank * sizeof *other) != 0)
            abort();
    }
    sr_safetensors_close(f);

    sr_workload w;
    st = sr_workload_from_safetensors(path, -1, &w, &err);
    if (st != SAGERUN_OK) {
        check_error(st, &err);
        return;
    }
    if (!w.name || !w.origin || !w.input_path || !w.metadata ||
        sagerun_problem_check(&w.problem, &err) != SAGERUN_OK || !(w.problem.sm_scale >= 0.0f))
        abort();
    /* an sm_scale given in __metadata__ is used, never silently replaced by D^-0.5 */
    if (json_object_get(w.metadata, "sm_scale") && !(w.problem.sm_scale > 0.0f)) {
        fprintf(stderr, "__metadata__ sm_scale '%s' accepted as %g\n",
                json_string_value(json_object_get(w.metadata, "sm_scale")),
                (double)w.problem.sm_scale);
        abort();
    }
    json_t *j = sr_workload_to_json(&w);
    if (!j)
        abort();
    json_decref(j);
    sr_workload_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    put_file(data, size, NULL, 0);
    exercise(size);

    const uint8_t *nul = memchr(data, 0, size);
    if (nul) {
        size_t hlen = (size_t)(nul - data);
        uint8_t file[8 + 4096];
        if (hlen > 4096)
            return 0;
        for (int i = 0; i < 8; i++)
            file[i] = (uint8_t)((uint64_t)hlen >> (8 * i));
        memcpy(file + 8, data, hlen);
        put_file(file, 8 + hlen, nul + 1, size - hlen - 1);
        exercise(8 + size - 1);
    }
    return 0;
}
