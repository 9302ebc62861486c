/* A host variant whose output changes from call to call (a counter in the first element), the
 * way a race would: the harness must report it as not deterministic, hence not byte-exact. */
#include <stddef.h>
#define FAKE_NAME "fake-nondeterministic"
#define FAKE_RUN counting_run
static int counting_run(void *state, char *err, size_t errlen);
#include "fake_plugin.h"

static int counting_run(void *state, char *err, size_t errlen)
{
    static uint16_t calls;
    int rc = fake_run(state, err, errlen);
    const sagerun_plugin_inputs *in = state;
    ((uint16_t *)(uintptr_t)in->o)[0] = (uint16_t)(0x3c00 + ++calls); /* 1.0 + calls ulps */
    return rc;
}
