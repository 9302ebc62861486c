#define FAULT_NAME "fault-segv-prepare"
#define FAULT_AT FAULT_IN_PREPARE
#define FAULT_KIND FAULT_SEGV
#include "fault_plugin.h"
