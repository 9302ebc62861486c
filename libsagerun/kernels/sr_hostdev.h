/* Helpers for code compiled both by the host C compiler and by nvcc (device and host side).
 * Only plain C types; every function is static inline so each translation unit has its own. */
#ifndef SAGERUN_KERNELS_SR_HOSTDEV_H
#define SAGERUN_KERNELS_SR_HOSTDEV_H

#include <stdint.h>

#if defined(__CUDACC__)
#define SR_HD static __host__ __device__ __forceinline__
#else
#define SR_HD static inline
#endif

/* Count of leading zero bits of a non-zero 64-bit value. */
SR_HD int sr_clz64(uint64_t x)
{
#if defined(__CUDA_ARCH__)
    return __clzll((long long)x);
#else
    return __builtin_clzll(x);
#endif
}

/* Bit patterns of fp32 values without aliasing problems on either side. */
SR_HD uint32_t sr_float_bits(float f)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    union { float f; uint32_t u; } x;
    x.f = f;
    return x.u;
#endif
}

SR_HD float sr_bits_float(uint32_t u)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    union { float f; uint32_t u; } x;
    x.u = u;
    return x.f;
#endif
}

#endif
