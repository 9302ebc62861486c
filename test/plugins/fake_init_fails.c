#define FAKE_NAME "fake-init-fails"
#define FAKE_INIT_FAILS 1
#include "fake_plugin.h"
