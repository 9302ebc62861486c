#define FAULT_NAME "fault-error-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_ERROR
#include "fault_plugin.h"
