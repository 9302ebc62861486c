/* Kernel timestamps, for cold samples: the GPU's own start and end times of each kernel, read
 * through CUPTI's activity API (what ncu and nsys read), loaded lazily with dlopen. A cold sample
 * is one call after the caches were flushed; between two events it also holds that call's launch,
 * which after a flush fetches its descriptor from DRAM (+1.7..1.9 us on an H200 against ncu's
 * gpu__time_duration). Summing the variant's kernels' own durations leaves that out.
 * Process-wide (CUPTI's activity buffers are), not thread-safe beyond one comparison at a time. */
#ifndef SAGERUN_KERNEL_CLOCK_H
#define SAGERUN_KERNEL_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Loads CUPTI (SAGERUN_CUPTI_LIBRARY, else libcupti.so.13 / libcupti.so on the search path, in
 * $CUDA_HOME/lib64 or $CUDA_HOME/extras/CUPTI/lib64; CUDA_HOME defaults to /usr/local/cuda) and
 * starts recording kernels. false: why says why. */
bool sr_kernel_clock_open(char *why, size_t why_len);
/* Seconds of the kernels recorded since the last call, sagerun's own (sr_timer_*) left out; the
 * number of kernels into *kernels. Waits for CUPTI to deliver what it has. */
double sr_kernel_clock_take(uint32_t *kernels);
void sr_kernel_clock_close(void);

#endif
