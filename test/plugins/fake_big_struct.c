/* A descriptor from a future minor version: larger than ABI 1 knows; must be accepted. */
#define FAKE_NAME "fake-big-struct"
#define FAKE_DESCRIPTOR_SIZE (sizeof(sagerun_variant_descriptor) + 64)
#include "fake_plugin.h"
