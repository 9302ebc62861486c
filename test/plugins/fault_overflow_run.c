#define FAULT_NAME "fault-overflow-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_OVERFLOW
#include "fault_plugin.h"
