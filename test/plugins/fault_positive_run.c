#define FAULT_NAME "fault-positive-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_POSITIVE
#include "fault_plugin.h"
