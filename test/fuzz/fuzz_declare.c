/* libFuzzer target: the declaration lines of Python variant files (variants/python/declare.c),
 * which sagerun's Python bridge parses in sagerun's own process from any .py file in the plugin
 * path. The input is the text after "# sagerun-variant:"; a line of its own and the whole input
 * both go through py_declaration_text first, as the bridge reads a file.
 *
 * Checked beyond the sanitizers: a refusal says why; an accepted declaration has a valid name,
 * a run function, a known backend and input kind, its parameters' keys and descriptions pointing
 * into itself, and defaults inside their ranges. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../variants/python/declare.c"

static void check(const py_declared *d, int rc, const char *err)
{
    bool bad = rc != 0 ? !err[0]
                       : !d->name[0] || !d->run[0] ||
                             (d->backend != SAGERUN_BACKEND_HOST &&
                              d->backend != SAGERUN_BACKEND_CUDA) ||
                             (d->input_kind != SAGERUN_INPUT_FP16 &&
                              d->input_kind != SAGERUN_INPUT_SAGE2) ||
                             d->n_params > SAGERUN_PLUGIN_MAX_PARAMS;
    for (uint32_t k = 0; rc == 0 && k < d->n_params && !bad; k++)
        bad = d->params[k].key != d->keys[k] || d->params[k].description != d->param_text[k] ||
              (d->params[k].type == SAGERUN_PARAM_BOOL && d->params[k].max_value != 1);
    if (bad) {
        fprintf(stderr, "bad parse: rc %d, err '%s', name '%s'\n", rc, err, d->name);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static py_declared d;
    char *text = malloc(size + 1), err[256] = "";
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int rc = py_declare_parse(text, "/fuzz/variants.py", 1, &d, err, sizeof err);
    check(&d, rc, err);
    const char *tagged = py_declaration_text(text);
    if (tagged) {
        err[0] = '\0';
        rc = py_declare_parse(tagged, "/fuzz/variants.py", 2, &d, err, sizeof err);
        check(&d, rc, err);
    }
    free(text);
    return 0;
}
