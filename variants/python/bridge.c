/* sagerun's Python bridge (bridge.so): the registry's entry point for .py files
 * (libsagerun/script_bridge.h) and the calls of every Python variant, forwarded to embed.so once
 * the process's one interpreter runs. It holds no Python symbol (embed.h says why). */
#include <errno.h>
#include <linux/limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "declare.h"
#include "script_bridge.h"

#define PY_SCRIPT_MAX_BYTES (4u << 20) /* a .py file larger than this is refused */

/* ---- the entry point ------------------------------------------------------------------------- */

/* The answer's variant named name, or -1. */
static int declared_before(const sr_script_answer *a, const char *name)
{
    for (uint32_t i = 0; i < a->n_variants; i++)
        if (strcmp(a->variants[i].desc->name, name) == 0)
            return (int)i;
    return -1;
}

/* One declaration line: a variant of the answer, or a refusal naming the line (a name declared
 * again in the same file names the first line too). lines: each variant's declaration line. */
static void declare_line(const char *real, int line, const char *text, sr_script_answer *a,
                         int *lines)
{
    char why[SR_SCRIPT_REASON_MAX - 128];
    py_declared *d = malloc(sizeof *d);
    const py_declared *kept = NULL;
    const sagerun_variant_descriptor *desc = NULL;
    if (!d) {
        snprintf(why, sizeof why, "out of memory");
    } else if (py_declare_parse(text, real, line, d, why, sizeof why) == 0) {
        int first = declared_before(a, d->name);
        if (first >= 0)
            snprintf(why, sizeof why, "variant \"%s\" is declared twice in this file (first on "
                     "line %d)", d->name, lines[first]);
        else
            desc = py_slot_intern(d, &kept, why, sizeof why);
    }
    free(d);
    if (desc && a->n_variants < SR_SCRIPT_MAX_VARIANTS) {
        lines[a->n_variants] = line;
        a->variants[a->n_variants++] =
            (sr_script_variant){.desc = desc,
                                .extension = kept->extension[0] ? kept->extension : NULL,
                                .line = line};
        return;
    }
    if (desc)
        snprintf(why, sizeof why, "more than %d variants in one file", SR_SCRIPT_MAX_VARIANTS);
    if (a->n_refused < SR_SCRIPT_MAX_REFUSED)
        snprintf(a->refused[a->n_refused++], SR_SCRIPT_REASON_MAX, "line %d: %s", line, why);
}

/* Every declaration line of the file; the number of them, or -1 (reason in a). */
static int read_declarations(const char *real, sr_script_answer *a)
{
    FILE *f = fopen(real, "r");
    if (!f) {
        snprintf(a->reason, sizeof a->reason, "cannot read it: %s", strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0, total = 0;
    ssize_t got;
    int lineno = 0, declared = 0, lines[SR_SCRIPT_MAX_VARIANTS];
    while ((got = getline(&line, &cap, f)) >= 0 && (total += (size_t)got) <= PY_SCRIPT_MAX_BYTES) {
        lineno++;
        if (got > 0 && line[got - 1] == '\n')
            line[got - 1] = '\0';
        /* a UTF-8 byte order mark (Python reads past it; editors on Windows write it): the first
         * line was no declaration, and the file none */
        bool bom = lineno == 1 && strncmp(line, "\xef\xbb\xbf", 3) == 0;
        const char *text = py_declaration_text(line + (bom ? 3 : 0));
        if (text) {
            declared++;
            declare_line(real, lineno, text, a, lines);
        }
    }
    free(line);
    fclose(f);
    if (total > PY_SCRIPT_MAX_BYTES) {
        snprintf(a->reason, sizeof a->reason, "larger than %u bytes: not read as a Python variant "
                 "file", PY_SCRIPT_MAX_BYTES);
        return -1;
    }
    return declared;
}

SAGERUN_PLUGIN_EXPORT int sagerun_script_entry(const sagerun_plugin_query *query,
                                               const char *script, sr_script_answer *a)
{
    if (query->abi_major != SAGERUN_PLUGIN_ABI_MAJOR || a->struct_size < sizeof *a) {
        snprintf(a->reason, sizeof a->reason, "the Python bridge is built for plugin ABI %d.%d, "
                 "the host speaks %u.%u", SAGERUN_PLUGIN_ABI_MAJOR, SAGERUN_PLUGIN_ABI_MINOR,
                 query->abi_major, query->abi_minor);
        return SAGERUN_PLUGIN;
    }
    char real[PATH_MAX];
    if (!realpath(script, real)) {
        snprintf(a->reason, sizeof a->reason, "cannot resolve the path: %s", strerror(errno));
        return SAGERUN_IO;
    }
    int declared = read_declarations(real, a);
    if (declared < 0)
        return SAGERUN_IO;
    if (declared == 0) {
        snprintf(a->reason, sizeof a->reason, "no variant declared: a Python variant file has "
                 "lines '# " PY_DECLARE_TAG " NAME run=FUNCTION backend=host|cuda ...'");
        return SAGERUN_NOT_FOUND; /* not a variant file (a module variant files import) */
    }
    return 0;
}

/* ---- the calls, forwarded to embed.so --------------------------------------------------------- */

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static const py_embed_api *embed;
static bool start_tried;
static char start_error[SAGERUN_PLUGIN_MIN_ERRLEN];

/* embed.so's table, the interpreter started on the first call; a failed start is not retried
 * (its reason is every later create's). */
static const py_embed_api *started(const sagerun_host_services *services, char *err,
                                   size_t errlen)
{
    pthread_mutex_lock(&start_lock);
    if (!start_tried) {
        start_tried = true;
        embed = py_interpreter_load(services, start_error, sizeof start_error);
    }
    const py_embed_api *api = embed;
    pthread_mutex_unlock(&start_lock);
    if (!api)
        snprintf(err, errlen, "%s", start_error);
    return api;
}

int py_bridge_create(const py_declared *d, const sagerun_host_services *services,
                     const sagerun_plugin_inputs *inputs, void **state, char *err, size_t errlen)
{
    const py_embed_api *api = started(services, err, errlen);
    if (!api)
        return SAGERUN_PLUGIN;
    return api->create(d, services, inputs, state, err, errlen);
}

/* An instance exists only after a create that started the interpreter: embed is set. */
int py_bridge_prepare(void *state, char *err, size_t errlen)
{
    return embed->prepare(state, err, errlen);
}

int py_bridge_run(void *state, char *err, size_t errlen)
{
    return embed->run(state, err, errlen);
}

void py_bridge_destroy(void *state)
{
    if (state)
        embed->destroy(state);
}
