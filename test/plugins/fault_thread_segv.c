/* A thread started in create crashes in this plugin's code while another variant is measured:
 * the crash was blamed on whichever call was open (often the baseline, failing the comparison). */
#define FAULT_NAME "fault-thread-segv"
#define FAULT_AT FAULT_IN_CREATE
#define FAULT_KIND FAULT_THREAD_SEGV
#include "fault_plugin.h"
