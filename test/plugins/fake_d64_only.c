/* A variant for head_dim 64 alone: geometry refuses the others with SAGERUN_UNSUPPORTED, the
 * contract's "this variant does not do that problem". Output: V copied into O. */
#define FAKE_NAME "fake-d64-only"
#define FAKE_HEAD_DIM_ONLY 64
#include "fake_plugin.h"
