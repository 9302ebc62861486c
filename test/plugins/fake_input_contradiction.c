/* Both spellings of the sage2 input kind, with other parameters: input_kind SAGE2 with quant of
 * the sm89 kernel, input_id "sagerun.sage2/1" with the Hopper kernel's. Refused at load. */
#include <sagerun/sage2.h>
static const sagerun_sage2_quant_params fake_sm90 = {sizeof fake_sm90, 16, 64, 128, 128, 448.0f};
#define FAKE_NAME "fake-input-contradiction"
#define FAKE_INPUT_KIND SAGERUN_INPUT_SAGE2
#define FAKE_INPUT_ID SAGERUN_SAGE2_EXTENSION_ID
#define FAKE_INPUT_PARAMS (&fake_sm90)
#include "fake_plugin.h"
