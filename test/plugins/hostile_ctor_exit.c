#define FAULT_GATE "SAGERUN_TEST_HOSTILE"
#define FAULT_NAME "hostile-ctor-exit"
#define FAULT_AT FAULT_IN_CONSTRUCTOR
#define FAULT_KIND FAULT_EXIT
#include "fault_plugin.h"
