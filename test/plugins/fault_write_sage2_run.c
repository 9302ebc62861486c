#define FAULT_NAME "fault-write-sage2-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_WRITE_SAGE2
#define FAULT_RUN_CALL 0
#define FAULT_INPUT_KIND SAGERUN_INPUT_SAGE2
#include "fault_plugin.h"
