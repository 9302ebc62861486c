/* Timing one sample: K calls of a variant between two device events (CUDA) or two reads of the
 * monotonic clock (host), outside anything else of sagerun's own.
 *
 * On CUDA every sample is queued behind a hold kernel that spins on a host-mapped flag: the start
 * event, the K calls and the stop event are all queued while the stream is held, then the flag is
 * released. So the events time the kernels, not the host's launch cost. Modes:
 *   event  one call per sample;
 *   batch  K back-to-back calls per sample (K so that a sample lasts at least ~1 ms);
 *   graph  K calls captured once into a CUDA graph, the graph launched per sample (for variants
 *          whose run may be captured: the caller opts in);
 *   auto   event for calls of 1 ms and more, batch below.
 * Cold cache: before each sample (outside the events) a kernel reads a buffer of twice the L2 size,
 * allocated once, through L2 (clean lines: the call pays no write-backs of others' data), a
 * kernel of some 256 KiB of straight-line code runs on every SM (the instruction caches), and one
 * word per 2 MiB page of the call's output is read, so that its address translation is warm and
 * all but one 32-byte sector per page of its data cold (without it, two instances of one variant differed by up to 3% on a 20 us call,
 * by where each one's output landed: test/bench/RESULTS.md, issue 12); a cold
 * sample is one call (K = 1), timed by the variant's kernels' own timestamps where CUPTI loads
 * (kernel_clock.h: after a flush the call's launch is slow too, and ncu leaves it out), plus the
 * variant's launch gap (sr_sample_timer_launch_gap): so a cold sample reads the clock of a hot
 * batch, which ncu's gpu__time_duration reads too, and differs from it only by the cold caches.
 * After each sample a short clock kernel measures the effective SM clock (cycles over the global
 * timer) on the device, outside the events. */
#ifndef SAGERUN_TIMER_H
#define SAGERUN_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "sagerun/compare.h"

typedef enum sr_timer_mode {
    SR_TIMER_AUTO = 0,
    SR_TIMER_EVENT = 1,
    SR_TIMER_BATCH = 2,
    SR_TIMER_GRAPH = 3
} sr_timer_mode;

typedef enum sr_cache_mode { SR_CACHE_HOT = 0, SR_CACHE_COLD = 1 } sr_cache_mode;

/* "auto", "event", "batch", "graph" / "hot", "cold"; NULL for unknown values; parse: -1. */
const char *sr_timer_mode_name(int mode);
int sr_timer_mode_parse(const char *name);
const char *sr_cache_mode_name(int mode);
int sr_cache_mode_parse(const char *name);

/* The shortest sample batch mode aims at. */
#define SR_TIMER_MIN_SAMPLE_S 1e-3
#define SR_TIMER_MAX_BATCH SAGERUN_MAX_BATCH

/* Calls per sample for calls of per_call_s seconds: 1 from min_sample_s on, else enough calls
 * for min_sample_s (at most SR_TIMER_MAX_BATCH). */
uint32_t sr_timer_batch_for(double per_call_s, double min_sample_s);
/* The mode auto resolves to, and K, for a call of per_call_s seconds under `mode`/`cache`. */
void sr_timer_resolve(int mode, int cache, double per_call_s, int *mode_out, uint32_t *k_out);

/* ---- the sample timer of one context --------------------------------------------------------- */
typedef struct sr_sample_timer sr_sample_timer;

/* What the caller times: `calls` calls of run(user). run returns 0 or a sagerun_status with its
 * message in err. */
typedef int (*sr_timed_call_fn)(void *user, sagerun_error *err);

sagerun_status sr_sample_timer_create(sagerun_context *ctx, int cache, sr_sample_timer **out,
                                      sagerun_error *err);
void sr_sample_timer_destroy(sr_sample_timer *t);

/* A CUDA graph of K calls of run(user), for graph mode; destroy with sr_timer_graph_destroy. */
typedef struct sr_timer_graph sr_timer_graph;
sagerun_status sr_timer_graph_capture(sr_sample_timer *t, sr_timed_call_fn run, void *user,
                                      uint32_t calls, sr_timer_graph **out, sagerun_error *err);
void sr_timer_graph_destroy(sr_timer_graph *g);

typedef struct sr_timed_sample {
    double seconds;   /* the whole sample (all calls) */
    double clock_mhz; /* effective SM clock right after it; NaN when unknown (host) */
    bool hold_timed_out; /* the hold kernel gave up waiting: launch cost may be in the sample */
    double host_s;    /* CUDA: wall-clock seconds the host took to queue the calls (their launch
                       * cost, not in `seconds`); NaN for a graph and on the host */
    bool kernel_timed; /* `seconds` are the kernels' own durations (CUPTI), not events */
} sr_timed_sample;

/* Cold: the memory the next samples' calls write (an instance's output), whose address
 * translations the flush leaves warm (one 4-byte read per 2 MiB page: the rest of its data stays cold). 0 bytes:
 * none. */
void sr_sample_timer_set_output(sr_sample_timer *t, uint64_t ptr, uint64_t bytes);

/* One sample: K = calls of run(user), or one launch of graph (then run is not called). */
sagerun_status sr_sample_timer_take(sr_sample_timer *t, sr_timed_call_fn run, void *user,
                                    uint32_t calls, const sr_timer_graph *graph,
                                    sr_timed_sample *out, sagerun_error *err);
/* The per-launch floor: seconds per launch of an empty kernel, timed as a batch of `calls`
 * launches under the hold (NaN on the host). */
double sr_sample_timer_launch_floor(sr_sample_timer *t, uint32_t calls);
/* The launch gap of run(user): per call, the device time of `calls` back-to-back calls (hot, no
 * flush, between events under the hold) that none of the call's kernels covers (CUPTI), i.e. what
 * the GPU spends starting each call. Median of three samples, never below 0. *gap_s is NaN where
 * samples are not timed by kernel timestamps (hot, no CUPTI, the host) or no kernel was seen. */
sagerun_status sr_sample_timer_launch_gap(sr_sample_timer *t, sr_timed_call_fn run, void *user,
                                          uint32_t calls, double *gap_s, sagerun_error *err);
/* The L2 flush buffer's size in bytes (0: hot, or host). */
uint64_t sr_sample_timer_flush_bytes(const sr_sample_timer *t);
/* What times the samples: "device events", "kernel timestamps (CUPTI)" (cold, where CUPTI
 * loads; SAGERUN_NO_CUPTI=1 turns it off), "host monotonic clock". */
const char *sr_sample_timer_clock(const sr_sample_timer *t);

#endif
