/* A well-behaved variant whose file's destructor crashes when the process exits (after compare's
 * child wrote its report). Its own gate: test_faults.sh loads whole folders of fault plugins. */
#define FAULT_GATE "SAGERUN_TEST_EXIT_FAULT"
#define FAULT_NAME "fault-segv-exit"
#define FAULT_AT FAULT_AT_EXIT
#define FAULT_KIND FAULT_SEGV
#include "fault_plugin.h"
