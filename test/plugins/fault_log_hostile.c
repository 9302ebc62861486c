/* A log line with terminal controls and a line break (services->log): shown escaped, after the
 * name of the variant that logged it (it went to stderr raw, unnamed, and forged a line). */
#define FAULT_NAME "fault-log-hostile"
#define FAULT_AT FAULT_IN_CREATE
#define FAULT_KIND FAULT_LOG
#define FAULT_REASON "logged\x1b]0;pwned\x07\nsagerun: FORGED line"
#include "fault_plugin.h"
