#define FAULT_GATE "SAGERUN_TEST_HOSTILE"
#define FAULT_NAME "hostile-run-kill-group"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_KILL_GROUP
#include "fault_plugin.h"
