#define FAULT_GATE "SAGERUN_TEST_HOSTILE"
#define FAULT_NAME "hostile-ctor-hang"
#define FAULT_AT FAULT_IN_CONSTRUCTOR
#define FAULT_KIND FAULT_HANG
#include "fault_plugin.h"
