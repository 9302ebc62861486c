#define FAULT_NAME "fault-stray-far-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_STRAY_FAR
#include "fault_plugin.h"
