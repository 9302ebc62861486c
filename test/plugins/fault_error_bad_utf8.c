/* An error return whose reason ends in half a UTF-8 character, as snprintf leaves a reason cut
 * at errlen bytes (plugin.h allows it): the report is written, the byte shown as \xNN. */
#define FAULT_NAME "fault-error-bad-utf8"
#define FAULT_AT FAULT_IN_RUN
#define FAULT_KIND FAULT_ERROR
#define FAULT_REASON "fails \xc3\xb6\xc3"
#include "fault_plugin.h"
