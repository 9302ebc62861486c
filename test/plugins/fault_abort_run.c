#define FAULT_NAME "fault-abort-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_ABORT
#include "fault_plugin.h"
