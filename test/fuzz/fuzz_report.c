/* libFuzzer target: the report reader behind `sagerun show` and `sagerun diff`.
 *
 * The input is written to a memfd and read through its /proc/self/fd/N path by the public entry
 * points: sagerun_report_show (table, markdown) and sagerun_report_diff against itself and against
 * the seed report (both ways). Output goes to /dev/null (printf's arguments are still checked by
 * the sanitizers).
 *
 * Checked beyond the sanitizers: a rejected report gets a status and a message naming the file;
 * an accepted one diffs against itself without a missing variant. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "report.h"
#include "sagerun/compare.h"

#ifndef SAGERUN_SOURCE_DIR
#define SAGERUN_SOURCE_DIR "."
#endif

static int mfd = -1;
static char path[64];
static FILE *devnull;
static const char *seed;

static void check_error(sagerun_status st, const sagerun_error *err, const char *who)
{
    if (st == SAGERUN_OK || err->status != (int)st || !strstr(err->message, who)) {
        fprintf(stderr, "bad error: status %d/%d, message '%s'\n", (int)st, err->status,
                err->message);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (mfd < 0) {
        mfd = memfd_create("fuzz-report.json", MFD_CLOEXEC);
        devnull = fopen("/dev/null", "w");
        if (mfd < 0 || !devnull)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", mfd);
        seed = SAGERUN_SOURCE_DIR "/test/data/seed-report.json";
        if (access(seed, R_OK) != 0)
            seed = NULL;
    }
    if (ftruncate(mfd, 0) != 0 || (size && pwrite(mfd, data, size, 0) != (ssize_t)size))
        abort();

    sagerun_error err = {0};
    sagerun_status st = sagerun_report_show(path, 0, devnull, &err);
    if (st != SAGERUN_OK) {
        check_error(st, &err, path);
        return 0;
    }
    if (sagerun_report_show(path, 1, devnull, &err) != SAGERUN_OK)
        abort();

    unsigned findings = 0;
    st = sagerun_report_diff(path, path, NULL, devnull, &findings, &err);
    if (st == SAGERUN_FORMAT && strstr(err.message, "has no measured variant"))
        return 0; /* nothing to compare: diff refuses it (a gate that compared nothing) */
    if (st != SAGERUN_OK) {
        /* a file is the same workload as itself */
        fprintf(stderr, "diff with itself failed: %s\n", err.message);
        abort();
    }
    if (findings & SAGERUN_DIFF_MISSING) { /* every label of a file is found in itself */
        fprintf(stderr, "diff with itself finds 0x%x\n", findings);
        abort();
    }
    if (seed) {
        st = sagerun_report_diff(seed, path, NULL, devnull, &findings, &err);
        if (st != SAGERUN_OK && st != SAGERUN_INVALID_ARGUMENT)
            abort();
        st = sagerun_report_diff(path, seed, NULL, devnull, &findings, &err);
        if (st != SAGERUN_OK && st != SAGERUN_INVALID_ARGUMENT)
            abort();
    }
    return 0;
}
