/* An error return whose reason carries terminal controls and a line break: shown escaped by
 * run, profile and compare (the reason is the plugin's, not sagerun's). */
#define FAULT_NAME "fault-error-hostile"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_ERROR
#define FAULT_REASON "fails\x1b[2J\nFORGED line"
#include "fault_plugin.h"
