/* A host variant whose call takes a chosen time, for tests of what the measurement says about a
 * variant's timing (test_timing_honesty.sh). It busy-waits on the monotonic clock, so a call takes
 * `us` microseconds on a loaded machine as on an idle one (within a scheduler slice).
 *
 *   spin  host backend; parameters:
 *         us     (float, default 200, [0, 1e7]): the call's time in microseconds;
 *         every  (int, default 0, [0, 1e6]): every every-th call of an instance (0: none)
 *         slowx  (float, default 10, [1, 1000]): takes slowx times as long (a slow mode);
 *         grow   (float, default 0, [0, 1]): each call of an instance takes grow times us longer
 *                than the one before (a drift: call k takes us * (1 + grow * k));
 *         first  (float, default 0, [0, 1e7]): an instance's first call takes this many
 *                microseconds instead (a cold first call; 0: as the others).
 *
 * Otherwise fake_plugin.h's variant: the output is V copied into O, so every setting writes the
 * same bytes and is byte-exact with any other. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <sagerun/plugin.h>

enum { PARAM_US, PARAM_EVERY, PARAM_SLOWX, PARAM_GROW, PARAM_FIRST };

static const sagerun_param_decl spin_params[] = {
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_FLOAT, "us", "microseconds per call", 200, 0, 1e7},
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_INT, "every", "every N-th call is slow (0: none)", 0,
     0, 1e6},
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_FLOAT, "slowx", "how much slower a slow call is", 10,
     1, 1000},
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_FLOAT, "grow", "each call longer by grow x us", 0, 0,
     1},
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_FLOAT, "first", "the first call's microseconds", 0, 0,
     1e7},
};

static int spin_run(void *state, char *err, size_t errlen);
#ifndef SPIN_SLOWED /* host_spin_slowed.c: the same call, slower by a fraction from the environment */
#define SPIN_SLOWED 0
#define FAKE_NAME "spin"
#endif
#define FAKE_VERSION "1.0.0"
#define FAKE_DESCRIPTION "test: a call of a chosen time, with an optional slow mode (output = V)"
#define FAKE_PARAMS spin_params
#define FAKE_RUN spin_run
#include "fake_plugin.h"

/* SAGERUN_TEST_SLOW_FRACTION (default 0, at most 10): how much slower spin-slowed's calls are */
static double slow_fraction(void)
{
    const char *v = getenv("SAGERUN_TEST_SLOW_FRACTION");
    char *end;
    double x = v ? strtod(v, &end) : 0;
    return v && !*end && x >= 0 && x <= 10 ? x : 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The calls of each instance (fake_plugin.h's state is the instance's inputs): a comparison has a
 * few instances, each used by one thread at a time. */
static long *calls_of(const void *instance)
{
    static struct {
        const void *instance;
        long calls;
    } seen[64];
    for (size_t i = 0; i < sizeof seen / sizeof *seen; i++)
        if (seen[i].instance == instance || !seen[i].instance) {
            seen[i].instance = instance;
            return &seen[i].calls;
        }
    return &seen[0].calls; /* more instances than that: they share the first's count */
}

static int spin_run(void *state, char *err, size_t errlen)
{
    const sagerun_plugin_inputs *in = state;
    const double *v = in->param_values;
    double us = in->n_param_values ? v[PARAM_US] : 200;
    long every = in->n_param_values ? (long)v[PARAM_EVERY] : 0;
    long call = ++*calls_of(in);
    if (in->n_param_values)
        us *= 1.0 + v[PARAM_GROW] * (double)(call - 1);
    if (every && call % every == 0)
        us *= in->n_param_values ? v[PARAM_SLOWX] : 10;
    if (call == 1 && in->n_param_values && v[PARAM_FIRST] > 0)
        us = v[PARAM_FIRST];
    if (SPIN_SLOWED) /* read at each call: cheap beside a spin of microseconds */
        us *= 1.0 + slow_fraction();
    for (double end = now_s() + us * 1e-6; now_s() < end;)
        ;
    return fake_run(state, err, errlen);
}
