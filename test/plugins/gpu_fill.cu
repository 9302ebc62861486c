// The GPU side of the gpu_fill test plugin: writes `value` into every 16-bit element of O.
#include <stdint.h>

extern "C" __global__ void sagerun_test_fill_u16(uint16_t *out, uint64_t count, uint16_t value)
{
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (; i < count; i += stride)
        out[i] = value;
}
