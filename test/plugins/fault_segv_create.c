#define FAULT_NAME "fault-segv-create"
#define FAULT_AT FAULT_IN_CREATE
#define FAULT_KIND FAULT_SEGV
#include "fault_plugin.h"
