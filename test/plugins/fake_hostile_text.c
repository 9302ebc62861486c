/* A variant whose texts carry terminal controls and line breaks (ESC sequences, CR, BEL, LF,
 * U+2028): `list` shows them escaped, so a plugin cannot clear the screen, retitle the terminal
 * or forge the lines after its own. Output: V copied into O. */
#include <sagerun/plugin.h>
static const sagerun_param_decl hostile_params[] = {
    {sizeof(sagerun_param_decl), SAGERUN_PARAM_INT, "tile", "rows\x1b]0;pwned\x07\nFORGED param", 1, 1, 8},
};
#define FAKE_NAME "fake-hostile-text"
#define FAKE_VERSION "1.0\r9.9"
#define FAKE_DESCRIPTION "desc\x1b[2J\nFORGED  row\xe2\x80\xa8"
#define FAKE_PARAMS hostile_params
#include "fake_plugin.h"
