/* Blocks SIGINT, SIGTERM and SIGHUP with sigprocmask from its third run call on: a stop still
 * ends the comparison at once with a report of the rounds finished, and the variant is named (it
 * waited 30 s, then killed the child and lost the report). */
#define FAULT_NAME "fault-block-stop-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_BLOCK_STOP
#include "fault_plugin.h"
