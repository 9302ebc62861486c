/* Test plugin "gpu-spin": a CUDA call of a known duration (gpu_spin.h). */
#define SPIN_NAME "gpu-spin"
#define SPIN_SLOWED 0
#include "gpu_spin.h"
