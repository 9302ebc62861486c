#define FAULT_NAME "fault-write-v-once"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_WRITE_INPUTS
#include "fault_plugin.h"
