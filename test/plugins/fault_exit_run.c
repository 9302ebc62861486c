#define FAULT_NAME "fault-exit-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_EXIT
#include "fault_plugin.h"
