// The GPU side of the gpu-spin test plugins: spins on the global timer for `ns` nanoseconds, then
// writes fp16 1.0 into every element of O (the first kernel of a call and the extra one alike).
#include <stdint.h>

extern "C" __global__ void sagerun_test_spin(uint16_t *out, uint64_t count, uint64_t ns)
{
    uint64_t t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
    for (uint64_t i = threadIdx.x; i < count; i += blockDim.x)
        out[i] = 0x3c00u;
}
