#define FAULT_NAME "fault-segv-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_SEGV
#include "fault_plugin.h"
