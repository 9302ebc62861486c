/* Leaks a file descriptor in every run call: the comparison blames it when three quarters of
 * RLIMIT_NOFILE are open, and the others' report is written (it ended with 'Too many open files'
 * at the report, nobody blamed, no report). */
#define FAULT_NAME "fault-leak-fd-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_LEAK_FD
#define FAULT_RUN_CALL 0
#include "fault_plugin.h"
