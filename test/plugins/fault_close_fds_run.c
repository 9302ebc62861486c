/* Closes descriptors 3 to 4095 in run, sagerun's event pipe among them: the comparison names what
 * happened (its pipe to sagerun was closed), not "exited with status 0 ... does the plugin call
 * exit()?". */
#define FAULT_NAME "fault-close-fds-run"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_CLOSE_FDS
#include "fault_plugin.h"
