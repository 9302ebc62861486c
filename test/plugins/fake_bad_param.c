/* A 1.1 plugin whose parameter default lies outside its own range: rejected, naming the key. */
#include <sagerun/plugin.h>
static const sagerun_param_decl bad_params[] = {
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_INT, "tile", "a tile size", 512, 16, 128},
};
#define FAKE_NAME "fake-bad-param"
#define FAKE_PARAMS bad_params
#include "fake_plugin.h"
