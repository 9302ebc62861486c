#define FAULT_NAME "fault-error-prepare-sage2"
#define FAULT_AT FAULT_IN_PREPARE
#define FAULT_KIND FAULT_ERROR
#define FAULT_INPUT_KIND SAGERUN_INPUT_SAGE2
#include "fault_plugin.h"
