// The GPU side of gpu-spin-slowed: the same kernel as gpu-spin (each plugin embeds its own image).
#include "gpu_spin.cu"
