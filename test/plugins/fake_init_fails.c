#define FAKE_NAME "fake-init-fails"
#define FAKE_INIT_FAILS "the fake plugin refuses on purpose"
#include "fake_plugin.h"
