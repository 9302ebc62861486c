// The GPU side of the fault_gpu_illegal test plugin: copies `count` 16-bit elements from `src`
// to `out`. The plugin passes a bogus `src` on purpose: an illegal address on the device.
#include <stdint.h>

extern "C" __global__ void sagerun_test_fault_copy_u16(const uint16_t *src, uint16_t *out,
                                                       uint64_t count)
{
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (; i < count; i += stride)
        out[i] = src[i];
}
