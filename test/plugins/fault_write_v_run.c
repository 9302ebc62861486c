#define FAULT_NAME "fault-write-v-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_WRITE_INPUTS
#define FAULT_RUN_CALL 0
#include "fault_plugin.h"
