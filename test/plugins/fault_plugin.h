/* Fault-injection test plugins: host variants that misbehave in one call, on purpose, to test that
 * `sagerun compare` contains them. A plugin file defines FAULT_NAME and FAULT_AT (where it
 * faults) and FAULT_KIND (how), then includes this file. Otherwise the variant copies V into O
 * (like fake_plugin.h). Faults in "run" happen on the third run call: with --warmup 1 that is
 * the first timed call, after a warm-up call that gave the watchdog its yardstick and the first
 * checked call.
 * They refuse to load unless SAGERUN_TEST_FAULTS is set (FAULT_GATE: the hostile_* plugins use
 * SAGERUN_TEST_HOSTILE), so that tests which load every test plugin of the folder do not meet
 * them by accident. FAULT_AT FAULT_IN_CONSTRUCTOR faults while the file is being loaded, before
 * the entry point (only when the gate variable is set); FAULT_AT_EXIT in its destructor, as the
 * process exits. FAULT_FIRST_CALL_US: the first run call sleeps that long (first contact, as a
 * JIT or module load would be). */
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <sagerun/plugin.h>

#ifndef FAULT_REASON /* FAULT_ERROR's reason */
#define FAULT_REASON "the fault plugin fails on purpose"
#endif

#define FAULT_IN_CREATE 1
#define FAULT_IN_PREPARE 2
#define FAULT_IN_RUN 3
#define FAULT_IN_CONSTRUCTOR 4
#define FAULT_AT_EXIT 5 /* in the file's destructor, when the process exits (after the report) */

#define FAULT_SEGV 1     /* a write to a page mapped without access: a real SIGSEGV */
#define FAULT_ABORT 2    /* abort(): SIGABRT */
#define FAULT_ERROR 3    /* an error status with a reason: the in-process path */
#define FAULT_HANG 4     /* sleeps forever: the watchdog */
#define FAULT_OVERFLOW 5 /* writes past the end of O (see fault_overflow) */
#define FAULT_EXIT 6     /* exit(0): a plugin ending the process as if all were well */
#define FAULT_SIGINT 7   /* raise(SIGINT): a variant that interrupts itself */
#define FAULT_KILL_GROUP 8 /* kill(0, SIGTERM): the whole process group */
#define FAULT_FORK 9     /* forks a process that lingers (its pid in $SAGERUN_TEST_PIDFILE) */
#define FAULT_PRINT 10   /* prints to stdout, then carries on */
#define FAULT_MARK 11    /* creates the file $SAGERUN_TEST_MARKER, then carries on */
#define FAULT_QUICK_EXIT 12 /* _exit(0): the same without atexit handlers or stdio flushing */
#define FAULT_WRITE_INPUTS 13 /* writes into V, which every variant shares (read-only, plugin.h) */
#define FAULT_WRITE_SAGE2 14  /* writes into the shared sage2 K (with FAULT_INPUT_KIND SAGE2) */
#define FAULT_LOG 15          /* logs FAULT_REASON at error level through services->log (create) */
#define FAULT_CLOSE_STDIO 16  /* closes stdout and stderr, then carries on */
#define FAULT_IGNORE_STOP 17  /* sets SIGINT, SIGTERM and SIGHUP to SIG_IGN, then carries on */
#define FAULT_FSIZE 18        /* sets the soft file size limit (RLIMIT_FSIZE) to 0, then carries on */
#define FAULT_THREAD_SEGV 19  /* starts a thread that crashes in the plugin's code while none of its
                                 own runs is in progress (see fault_thread) */
#define FAULT_POSITIVE 20     /* returns 1 (a C habit for failure, not a sagerun_status) */
#define FAULT_STRAY_FAR 21    /* writes 16 bytes 4 KiB past the host's 64 KiB guard after O */
#define FAULT_STRAY_BEFORE 22 /* writes the byte just before O */
#define FAULT_BLOCK_STOP 23   /* blocks SIGINT, SIGTERM and SIGHUP (sigprocmask), then carries on */
#define FAULT_FREE_INPUT 24   /* services->mem_free(q): frees what every variant shares */
#define FAULT_FILL_INPUT 25   /* services->mem_fill(k): writes what every variant shares */
#define FAULT_LEAK_FD 26      /* opens /dev/null and keeps it: one descriptor more per call */
#define FAULT_CLOSE_FDS 27    /* closes every descriptor from 3 to 4095, then carries on */
#ifndef FAULT_RUN_CALL /* FAULT_IN_RUN faults in this run call; 0: in every one */
#define FAULT_RUN_CALL 3
#endif

#ifndef FAULT_GATE
#define FAULT_GATE "SAGERUN_TEST_FAULTS"
#endif

#ifndef FAULT_INPUT_KIND
#define FAULT_INPUT_KIND SAGERUN_INPUT_FP16 /* SAGERUN_INPUT_SAGE2: quantized in prepare */
#endif

typedef struct fault_state {
    const sagerun_plugin_inputs *in;
    unsigned runs;
} fault_state;

static const sagerun_host_services *fault_services; /* the last create's */

static uint64_t fault_o_bytes(const sagerun_plugin_inputs *in)
{
    return (uint64_t)in->problem.batch * in->problem.seq_len * in->problem.heads_q *
           in->problem.head_dim * 2;
}

static void fault_segv(void)
{
    /* Not a NULL dereference: UBSan would report that before the CPU faults. */
    volatile char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        raise(SIGSEGV);
    page[0] = 1;
    raise(SIGSEGV); /* not reached */
}

static void fault_overflow(const sagerun_plugin_inputs *in)
{
    /* 16 bytes, 100 past the end of O: inside the guard the host keeps after it (64 KiB), so
     * every build, sanitizer or not, sees the same report at the next checked call. */
    char *o = (char *)(uintptr_t)in->o;
    memset(o + fault_o_bytes(in) + 100, 0xAB, 16);
}

/* Stray writes the guard after O cannot see: far past it, or before O. On the host backend they
 * landed in the next heap block (another variant's output, whose guard then blamed that variant,
 * or sagerun's copy of the inputs) or in the allocator's bookkeeping (a crash at destroy); now the
 * pages around each block are inaccessible and the write faults in this call. */
static void fault_stray(const sagerun_plugin_inputs *in, int kind)
{
    volatile char *o = (volatile char *)(uintptr_t)in->o;
    if (kind == FAULT_STRAY_BEFORE) {
        o[-1] = 0x11;
        return;
    }
    for (uint64_t i = 0; i < 16; i++)
        o[fault_o_bytes(in) + (64u << 10) + 4096 + i] = 0x11;
}

static void fault_block_stop(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
}

static void fault_fsize(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_FSIZE, &r) == 0) {
        r.rlim_cur = 0;
        setrlimit(RLIMIT_FSIZE, &r);
    }
}

/* The variant's run in progress (fault_run), and how many runs have begun. */
static volatile int fault_running, fault_runs_begun;

/* Once the variant's first timed call is over (its warm-up and checked calls come first), 1 ms
 * later, a SIGSEGV in this plugin's code on a thread of its own: by then another variant's call
 * is open (each takes a millisecond or more), or none. */
static void *fault_thread(void *arg)
{
    (void)arg;
    while (fault_runs_begun < 3 || fault_running)
        usleep(100);
    usleep(1000);
    fault_segv();
    return NULL;
}

static void fault_thread_start(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, fault_thread, NULL) == 0)
        pthread_detach(t);
}

static void fault_fork(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 300; i++) /* five minutes, unless ended with its group */
            sleep(1);
        _exit(0);
    }
    const char *file = getenv("SAGERUN_TEST_PIDFILE");
    FILE *f = file && pid > 0 ? fopen(file, "a") : NULL;
    if (f) {
        fprintf(f, "%ld\n", (long)pid);
        fclose(f);
    }
}

static void fault_mark(void)
{
    const char *file = getenv("SAGERUN_TEST_MARKER");
    FILE *f = file ? fopen(file, "a") : NULL;
    if (f) {
        fprintf(f, "%ld\n", (long)getpid());
        fclose(f);
    }
}

static int fault_now(int kind, const sagerun_plugin_inputs *in, char *err, size_t errlen)
{
    switch (kind) {
    case FAULT_SEGV: fault_segv(); break;
    case FAULT_ABORT: abort();
    case FAULT_ERROR:
        snprintf(err, errlen, "%s", FAULT_REASON);
        return SAGERUN_VARIANT;
    case FAULT_POSITIVE: return 1;
    case FAULT_HANG:
        for (;;)
            pause();
    case FAULT_OVERFLOW: fault_overflow(in); break;
    case FAULT_STRAY_FAR:
    case FAULT_STRAY_BEFORE: fault_stray(in, kind); break;
    case FAULT_EXIT: exit(0);
    case FAULT_QUICK_EXIT: _exit(0);
    case FAULT_CLOSE_STDIO: close(1); close(2); break;
    case FAULT_IGNORE_STOP: signal(SIGINT, SIG_IGN); signal(SIGTERM, SIG_IGN); signal(SIGHUP, SIG_IGN); break;
    case FAULT_BLOCK_STOP: fault_block_stop(); break;
    case FAULT_LEAK_FD: (void)open("/dev/null", O_RDONLY); break;
    case FAULT_CLOSE_FDS: for (int fd = 3; fd < 4096; fd++) close(fd); break;
    case FAULT_FREE_INPUT: fault_services->mem_free(fault_services->host, in->q); break;
    case FAULT_FILL_INPUT: return fault_services->mem_fill(fault_services->host, in->k, 0, 64, err, errlen);
    case FAULT_FSIZE: fault_fsize(); break;
    case FAULT_THREAD_SEGV: fault_thread_start(); break;
    case FAULT_WRITE_INPUTS: memset((void *)(uintptr_t)in->v, 0x11, 64); break;
    case FAULT_WRITE_SAGE2: memset((void *)(uintptr_t)in->sage2->k_int8, 0x11, 64); break;
    case FAULT_SIGINT: raise(SIGINT); break;
    case FAULT_KILL_GROUP: kill(0, SIGTERM); break;
    case FAULT_FORK: fault_fork(); break;
    case FAULT_PRINT: printf("HOSTILE PLUGIN OUTPUT ON STDOUT\n"); fflush(stdout); break;
    case FAULT_MARK: fault_mark(); break;
    }
    return 0;
}

#if FAULT_AT == FAULT_IN_CONSTRUCTOR
__attribute__((constructor)) static void fault_constructor(void)
{
    char err[64];
    if (getenv(FAULT_GATE))
        fault_now(FAULT_KIND, NULL, err, sizeof err);
}
#elif FAULT_AT == FAULT_AT_EXIT
__attribute__((destructor)) static void fault_destructor(void)
{
    char err[64];
    if (getenv(FAULT_GATE))
        fault_now(FAULT_KIND, NULL, err, sizeof err);
}
#endif

static int fault_geometry(const sagerun_problem *p, sagerun_launch_geometry *g, char *err,
                          size_t errlen)
{
    (void)err;
    (void)errlen;
    g->cta_q = g->warp_q = 1;
    g->cta_k = g->warp_k = p->seq_len;
    g->threads_per_cta = 1;
    g->grid_ctas = 1;
    return 0;
}

static int fault_create(const sagerun_host_services *services, const sagerun_plugin_inputs *in,
                        void **state, char *err, size_t errlen)
{
    fault_services = services;
    if (FAULT_KIND == FAULT_LOG)
        services->log(services->host, SAGERUN_LOG_ERROR, "%s", FAULT_REASON);
    if (FAULT_AT == FAULT_IN_CREATE && FAULT_KIND != FAULT_LOG) {
        int rc = fault_now(FAULT_KIND, in, err, errlen);
        if (rc)
            return rc;
    }
    fault_state *s = calloc(1, sizeof *s);
    if (!s)
        return snprintf(err, errlen, "out of memory"), SAGERUN_OUT_OF_MEMORY;
    s->in = in;
    *state = s;
    return 0;
}

static int fault_prepare(void *state, char *err, size_t errlen)
{
    fault_state *s = state;
    if (FAULT_AT == FAULT_IN_PREPARE)
        return fault_now(FAULT_KIND, s->in, err, errlen);
    return 0;
}

static int fault_run(void *state, char *err, size_t errlen)
{
    fault_state *s = state;
    ++s->runs;
    fault_running = 1;
    fault_runs_begun++;
#ifdef FAULT_FIRST_CALL_US
    if (s->runs == 1)
        usleep(FAULT_FIRST_CALL_US);
#endif
    if (FAULT_AT == FAULT_IN_RUN && (FAULT_RUN_CALL == 0 || s->runs == FAULT_RUN_CALL)) {
        int rc = fault_now(FAULT_KIND, s->in, err, errlen);
        if (rc)
            return rc;
    }
    const sagerun_plugin_inputs *in = s->in;
    uint64_t bytes = fault_o_bytes(in);
    uint64_t vbytes = (uint64_t)in->problem.batch * in->problem.seq_len * in->problem.heads_kv *
                      in->problem.head_dim * 2;
    memcpy((void *)(uintptr_t)in->o, (const void *)(uintptr_t)in->v,
           bytes < vbytes ? bytes : vbytes);
    if (bytes > vbytes)
        memset((char *)(uintptr_t)in->o + vbytes, 0, bytes - vbytes);
    fault_running = 0;
    return 0;
}

static void fault_destroy(void *state) { free(state); }

static const sagerun_variant_descriptor fault_variant = {
    .struct_size = sizeof(sagerun_variant_descriptor),
    .abi_major = SAGERUN_PLUGIN_ABI_MAJOR,
    .name = FAULT_NAME,
    .version = "0.0.1",
    .description = "test plugin: faults on purpose",
    .backend = SAGERUN_BACKEND_HOST,
    .input_kind = FAULT_INPUT_KIND,
    .quant = {sizeof(sagerun_sage2_quant_params), 32, 128, 64, 64, 448.0f}, /* sm89's */
    .geometry = fault_geometry,
    .create = fault_create,
    .prepare = fault_prepare,
    .run = fault_run,
    .destroy = fault_destroy,
};

SAGERUN_PLUGIN_EXPORT int sagerun_plugin_entry(const sagerun_plugin_query *query,
                                               sagerun_plugin_answer *answer);
SAGERUN_PLUGIN_EXPORT int sagerun_plugin_entry(const sagerun_plugin_query *query,
                                               sagerun_plugin_answer *answer)
{
    (void)query;
    if (!getenv(FAULT_GATE)) {
        snprintf(answer->reason, sizeof answer->reason,
                 "fault-injection test plugin: loads only with " FAULT_GATE " set");
        return -1;
    }
    answer->abi_major = SAGERUN_PLUGIN_ABI_MAJOR;
    answer->abi_minor = 0;
    answer->variant = &fault_variant;
    return 0;
}
