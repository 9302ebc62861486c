#define FAULT_NAME "fault-quick-exit-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_QUICK_EXIT
#include "fault_plugin.h"
