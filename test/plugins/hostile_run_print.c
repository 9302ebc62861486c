#define FAULT_GATE "SAGERUN_TEST_HOSTILE"
#define FAULT_NAME "hostile-run-print"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_PRINT
#include "fault_plugin.h"
