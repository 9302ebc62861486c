/* A variant declaring problem features, one dtype and two head dims (descriptor 1.2), for what
 * `list` shows of them and the registry reports. Output: V copied into O (it runs nothing the
 * declarations would need). */
#include "sagerun/plugin.h"

#define FAKE_NAME "fake-declares"
#define FAKE_FEATURES (SAGERUN_FEATURE_KV_LEN | SAGERUN_FEATURE_CAUSAL_BOTTOM_RIGHT | \
                       SAGERUN_FEATURE_SOFTCAP)
#define FAKE_DTYPES (1u << SAGERUN_DTYPE_BF16)
static const uint32_t FAKE_HEAD_DIMS[] = {64, 128};
#include "fake_plugin.h"
