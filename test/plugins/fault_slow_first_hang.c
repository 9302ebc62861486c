/* Its first run call takes 0.5 s (first contact), later ones microseconds; the third hangs. */
#define FAULT_NAME "fault-slow-first-hang"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_HANG
#define FAULT_FIRST_CALL_US 500000
#include "fault_plugin.h"
