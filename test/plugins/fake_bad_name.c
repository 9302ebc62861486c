#define FAKE_NAME "Bad Name!"
#include "fake_plugin.h"
