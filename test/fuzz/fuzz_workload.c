/* libFuzzer target: the workload JSON parser (sr_workload_parse), as sr_workload_load calls it
 * (text without NUL bytes, relative input paths resolved against the file's folder).
 *
 * Checked beyond the sanitizers: a rejected workload gets a status and a message naming the file,
 * and leaves nothing allocated; an accepted one is a valid problem whose sm_scale is the one given
 * (never silently the default), and its explicit JSON form parses back to the same JSON. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

#define ORIGIN "fuzz/workload.json"

static void check_error(sagerun_status st, const sagerun_error *err, const sr_workload *w)
{
    if (st == SAGERUN_OK || err->status != (int)st || !strstr(err->message, ORIGIN) || w->name ||
        w->origin || w->input_path || w->metadata) {
        fprintf(stderr, "bad error: status %d/%d, message '%s'\n", (int)st, err->status,
                err->message);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memchr(data, 0, size)) /* sr_workload_load rejects those before parsing */
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    sr_workload w;
    sagerun_error err = {0};
    sagerun_status st = sr_workload_parse(text, ORIGIN, "fuzz", &w, &err);
    if (st != SAGERUN_OK) {
        check_error(st, &err, &w);
        free(text);
        return 0;
    }
    if (!w.name || !w.name[0] || !w.origin || !w.metadata || !json_is_object(w.metadata) ||
        (w.source == SR_WORKLOAD_SAFETENSORS) != (w.input_path != NULL) ||
        sagerun_problem_check(&w.problem, &err) != SAGERUN_OK)
        abort();
    /* a positive sm_scale given must survive as a positive float (0 would mean "D^-0.5") */
    json_t *root = json_loads(text, 0, NULL);
    json_t *sm = json_object_get(root, "sm_scale");
    if (sm && !(w.problem.sm_scale > 0.0f)) {
        fprintf(stderr, "sm_scale %g accepted as %g\n", json_number_value(sm),
                (double)w.problem.sm_scale);
        abort();
    }
    json_decref(root);

    json_t *j = sr_workload_to_json(&w);
    char *again = j ? json_dumps(j, JSON_COMPACT) : NULL;
    if (!again)
        abort();
    sr_workload w2;
    if (sr_workload_parse(again, "fuzz/again.json", NULL, &w2, &err) != SAGERUN_OK) {
        fprintf(stderr, "the explicit form does not parse back: %s\n%s\n", err.message, again);
        abort();
    }
    json_t *j2 = sr_workload_to_json(&w2);
    /* the origin differs: only the name may (it came from the origin when absent) */
    json_object_set_new(j2, "name", json_string(w.name));
    if (!j2 || !json_equal(j, j2)) {
        char *b = j2 ? json_dumps(j2, JSON_COMPACT) : NULL;
        fprintf(stderr, "round trip differs:\n%s\n%s\n", again, b ? b : "(null)");
        abort();
    }
    json_decref(j2);
    sr_workload_free(&w2);
    free(again);
    json_decref(j);
    sr_workload_free(&w);
    free(text);
    return 0;
}
