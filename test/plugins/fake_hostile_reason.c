/* Two ways a plugin's own bytes reach a rejection reason: a variant name with an ESC sequence
 * (shown in "invalid variant name ...") and, in fake_hostile_refusal.c, the reason its entry
 * point gives. Either is shown escaped wherever the rejection is printed. */
#define FAKE_NAME "evil\x1b[2Jname"
#include "fake_plugin.h"
