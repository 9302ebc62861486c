/* Sets the file size limit to 0 in run (plugin.h section 8 forbids it): the measuring process
 * could no longer write its report, and the whole comparison was lost. */
#define FAULT_NAME "fault-fsize-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_FSIZE
#include "fault_plugin.h"
