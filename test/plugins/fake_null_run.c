#define FAKE_NAME "fake-null-run"
#define FAKE_RUN NULL
#include "fake_plugin.h"
