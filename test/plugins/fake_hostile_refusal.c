/* An entry point that refuses with a reason carrying terminal controls and a line break
 * (fake_hostile_reason.c says why). */
#define FAKE_NAME "fake-hostile-refusal"
#define FAKE_INIT_FAILS "refused\x1b[2J\nFORGED  line"
#include "fake_plugin.h"
