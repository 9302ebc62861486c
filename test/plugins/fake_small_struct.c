#define FAKE_NAME "fake-small-struct"
#define FAKE_DESCRIPTOR_SIZE 16
#include "fake_plugin.h"
