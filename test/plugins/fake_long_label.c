/* A variant whose labels run long: a 63-character name and a 20-character parameter key, so that
 * two bindings' labels ("NAME[KEY=1]", "NAME[KEY=2]", 86 characters) differ only past the 79th
 * (labels were once cut there, and two such entries became one). Output: V copied into O. */
#include <sagerun/plugin.h>
static const sagerun_param_decl long_params[] = {
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_INT, "rows_per_thread_tile", "unused", 1, 1, 8},
};
#define FAKE_NAME "fake-long-label-0123456789-0123456789-0123456789-0123456789-abc"
#define FAKE_PARAMS long_params
#include "fake_plugin.h"
