#define FAKE_NAME "fake-wrong-major"
#define FAKE_ANSWER_MAJOR 2
#include "fake_plugin.h"
