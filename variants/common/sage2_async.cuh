/* Hopper (sm_90a) asynchronous-copy pieces for the warp-specialized sage2 kernel: shared-memory
 * mbarriers, bulk tensor copies (TMA) completing on them, named barriers for groups of warps,
 * and the register re-allocation between warpgroups (setmaxnreg). None of these touch a value
 * that reaches the output; they only order and move bytes (SAGE2.md §3: loads, order of issue).
 *
 * Parity convention: a barrier's phases complete in order 0, 1, 2, ...; waiting for completion k
 * is wait(bar, k & 1). A stage s of a ring of S stages holding tile j completes for the
 * (j / S)-th time when tile j has landed. */
#ifndef SAGERUN_VARIANTS_SAGE2_ASYNC_CUH
#define SAGERUN_VARIANTS_SAGE2_ASYNC_CUH

#include <stdint.h>

#include "sage2_wgmma.cuh"

#if SAGE2_HAS_WGMMA || !defined(__CUDA_ARCH__)
namespace sage2 {
namespace async {

/* An mbarrier that completes a phase after `count` arrivals (plus any expected bytes). */
__device__ __forceinline__ void bar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
/* Makes the initialised barriers visible to the other threads and to the copy engine; the CTA
 * barrier that follows publishes them. */
__device__ __forceinline__ void bar_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void bar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
/* Arrives and announces `bytes` that copies completing on this barrier will deliver. */
__device__ __forceinline__ void bar_arrive_expect(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}
/* One probe: has the phase of parity `parity` completed? (It may suspend the thread for a while
 * before answering no.) */
__device__ __forceinline__ bool bar_try_wait(uint32_t bar, uint32_t parity) {
    uint32_t done;
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n"
                 "}\n"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return done != 0;
}
/* Waits until the phase of parity `parity` has completed (acquire: the bytes it delivered, and
 * what the arriving threads wrote before arriving, are visible afterwards). The loop is C++, not
 * a branch inside the asm, so that the compiler reconverges the warp after it: the .aligned
 * instructions that follow (wgmma, bar.sync) need every lane together (compute-sanitizer's
 * synccheck reported divergent threads at them with the asm loop). */
__device__ __forceinline__ void bar_wait(uint32_t bar, uint32_t parity) {
    while (!bar_try_wait(bar, parity)) {
    }
}

/* The tensor map (a __grid_constant__ kernel parameter) into the constant cache ahead of use. */
__device__ __forceinline__ void prefetch_map(const void *map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
/* One box of a 4-D tensor map at coordinates c0 (innermost) .. c3 into shared memory at dst,
 * completing on barrier bar. Coordinates past the tensor's end read as zeros. */
__device__ __forceinline__ void tma_load_4d(uint32_t dst, const void *map, uint32_t bar, int c0, int c1, int c2,
                                            int c3) {
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
                 : "memory");
}

/* Named barrier `id` (1..15; 0 is __syncthreads) over `threads` threads. */
__device__ __forceinline__ void named_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/* This warpgroup's register budget per thread, raised or lowered (the kernel must have a
 * register cap at entry: __launch_bounds__(threads, 1)). */
template <int REGS> __device__ __forceinline__ void regs_raise() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS> __device__ __forceinline__ void regs_lower() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

} // namespace async
} // namespace sage2
#endif /* SAGE2_HAS_WGMMA || host pass */

#endif
