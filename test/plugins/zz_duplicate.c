/* Same variant name as fake_good.c; sorts after it, so it is the one rejected. */
#define FAKE_NAME "fake-good"
#include "fake_plugin.h"
