#define FAULT_NAME "fault-stray-before-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_STRAY_BEFORE
#include "fault_plugin.h"
