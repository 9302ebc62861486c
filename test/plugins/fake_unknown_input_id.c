/* A descriptor naming an input kind id this host does not know: refused at load, the id named. */
#define FAKE_NAME "fake-unknown-input-id"
#define FAKE_INPUT_ID "sagerun.no-such-kind/1"
#define FAKE_INPUT_PARAMS NULL
#include "fake_plugin.h"
