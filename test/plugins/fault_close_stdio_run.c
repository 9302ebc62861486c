/* Closes stdout and stderr in run: the measuring process's report is still handed over (its exit
 * status, 1 when the flush at exit fails, lost the whole comparison without a word). */
#define FAULT_NAME "fault-close-stdio-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_CLOSE_STDIO
#include "fault_plugin.h"
