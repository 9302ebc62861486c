/* Exports a differently named function: the host must report the missing entry point. */
#define FAKE_NAME "fake-no-entry"
#define FAKE_ENTRY sagerun_plugin_entry_misspelt
#include "fake_plugin.h"
