/* Profiler ranges for callers (sagerun.h): the library's own NVTX layer (nvtx.h), so that a
 * program marks its phases as the engine marks its own, without the CUDA toolkit's headers. */
#include "internal.h"
#include "nvtx.h"

int sagerun_ranges_state(void)
{
    if (!SR_NVTX_COMPILED_IN)
        return SAGERUN_RANGES_COMPILED_OUT;
    return sr_nvtx_active() ? SAGERUN_RANGES_TOOL : SAGERUN_RANGES_NO_TOOL;
}

void sagerun_range_push(const char *name, int registered)
{
    if (!name)
        name = "";
    if (registered)
        sr_nvtx_push_registered(name);
    else
        sr_nvtx_push("%s", name);
}

void sagerun_range_pop(void)
{
    sr_nvtx_pop();
}
