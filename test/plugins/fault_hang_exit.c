/* A well-behaved variant whose file's destructor hangs when the process exits (after compare's
 * child wrote its report). Its own gate, as fault_segv_exit.c. */
#define FAULT_GATE "SAGERUN_TEST_EXIT_FAULT"
#define FAULT_NAME "fault-hang-exit"
#define FAULT_AT FAULT_AT_EXIT
#define FAULT_KIND FAULT_HANG
#include "fault_plugin.h"
