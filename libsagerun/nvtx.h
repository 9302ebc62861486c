/* NVTX ranges for Nsight Systems (nsys) and Nsight Compute (ncu): sagerun's phases and every call
 * into a variant, as push/pop ranges of the default domain on the calling thread.
 *
 * Header only, with NVIDIA's nvtx3 (header-only as well, in the CUDA toolkit's include folder).
 * Callers outside the library (the CLI's `profile`) push ranges through the public
 * sagerun_range_push / sagerun_range_pop (ranges.c), which are these.
 * A tool attaches by setting NVTX_INJECTION64_PATH (nsys and ncu do; on Linux nvtx3 loads a tool
 * from nowhere else but a statically linked one, which sagerun has none of): without it nothing is
 * called at all — the first range reads the variable once, and every range after that costs one
 * branch; no name is even formatted. With a tool, the ranges inside a timed sample (its batch of
 * calls, each call's "run NAME") are pushed while the hold kernel holds the stream (timer.h), so
 * on a GPU they add nothing to the events' time; on the host backend the tool's cost falls in the
 * sample.
 *
 * A build without CUDA (SAGERUN_NO_CUDA: no toolkit, no nvtx3 header) compiles the ranges out:
 * that build has only the host backend, and nsys/ncu come with the toolkit it lacks. (A dlopen
 * shim of our own would have to re-implement NVTX's tool-injection protocol for no GPU.)
 *
 * nsys starts a capture on a range only when its name is a registered string (unless
 * NSYS_NVTX_PROFILER_REGISTER_ONLY=0): sr_nvtx_push_registered registers the name first. */
#ifndef SAGERUN_NVTX_H
#define SAGERUN_NVTX_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(SAGERUN_NO_CUDA) || defined(SAGERUN_NO_NVTX)
#define SR_NVTX_COMPILED_IN 0
#else
#define SR_NVTX_COMPILED_IN 1
#include <stdatomic.h>

#include <nvtx3/nvToolsExt.h>
#endif

/* Longest range name kept (longer ones are cut). */
#define SR_NVTX_NAME_MAX 160

/* true when NVTX calls are made: compiled in and a tool named by NVTX_INJECTION64_PATH. */
static inline bool sr_nvtx_active(void)
{
#if SR_NVTX_COMPILED_IN
    static atomic_int state; /* 0: not read yet, 1: no tool, 2: a tool */
    int s = atomic_load_explicit(&state, memory_order_relaxed);
    if (s == 0) {
        const char *tool = getenv("NVTX_INJECTION64_PATH");
        s = tool && tool[0] ? 2 : 1;
        atomic_store_explicit(&state, s, memory_order_relaxed);
    }
    return s == 2;
#else
    return false;
#endif
}

#if SR_NVTX_COMPILED_IN
static inline void sr_nvtx_push_message(nvtxMessageType_t type, nvtxMessageValue_t message)
{
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = type;
    a.message = message;
    nvtxDomainRangePushEx(NULL, &a);
}
#endif

/* Pushes a range named by printf-style fmt; pop it with sr_nvtx_pop. */
static inline void sr_nvtx_push(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void sr_nvtx_push(const char *fmt, ...)
{
#if SR_NVTX_COMPILED_IN
    if (!sr_nvtx_active())
        return;
    char name[SR_NVTX_NAME_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    nvtxMessageValue_t m = {.ascii = name};
    sr_nvtx_push_message(NVTX_MESSAGE_TYPE_ASCII, m);
#else
    (void)fmt;
#endif
}

/* The same with the name registered first: a range that `nsys --capture-range=nvtx` can start
 * on. Each call registers again (NVTX hands back the same string): for ranges pushed rarely. */
static inline void sr_nvtx_push_registered(const char *name)
{
#if SR_NVTX_COMPILED_IN
    if (!sr_nvtx_active())
        return;
    nvtxMessageValue_t m = {.registered = nvtxDomainRegisterStringA(NULL, name)};
    sr_nvtx_push_message(NVTX_MESSAGE_TYPE_REGISTERED, m);
#else
    (void)name;
#endif
}

static inline void sr_nvtx_pop(void)
{
#if SR_NVTX_COMPILED_IN
    if (sr_nvtx_active())
        nvtxDomainRangePop(NULL);
#endif
}

#endif
