#define FAKE_NAME "fake-good"
#include "fake_plugin.h"
