/* A CUDA variant that asks for compute capability 99.0: rejected on any real GPU. */
#define FAKE_NAME "fake-future-gpu"
#define FAKE_BACKEND SAGERUN_BACKEND_CUDA
#define FAKE_MIN_CC 990
#include "fake_plugin.h"
