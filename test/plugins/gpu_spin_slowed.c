/* Test plugin "gpu-spin-slowed": gpu-spin plus a known fraction (gpu_spin.h). */
#define SPIN_NAME "gpu-spin-slowed"
#define SPIN_SLOWED 1
#include "gpu_spin.h"
