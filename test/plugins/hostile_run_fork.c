#define FAULT_GATE "SAGERUN_TEST_HOSTILE"
#define FAULT_NAME "hostile-run-fork"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_FORK
#include "fault_plugin.h"
