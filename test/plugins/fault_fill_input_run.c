/* Calls services->mem_fill on an input every variant shares (Q or K) in its third run call: the
 * host refuses it (plugin.h section 3), and the comparison goes on. */
#define FAULT_NAME "fault-fill-input-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_FILL_INPUT
#include "fault_plugin.h"
