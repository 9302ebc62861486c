#define FAULT_NAME "fault-hang-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_HANG
#include "fault_plugin.h"
