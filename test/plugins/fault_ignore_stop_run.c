/* Ignores SIGINT, SIGTERM and SIGHUP from its third run call on: a stop still ends the comparison
 * at once with a report of the rounds finished (it waited 30 s, then lost the report). */
#define FAULT_NAME "fault-ignore-stop-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_IGNORE_STOP
#include "fault_plugin.h"
