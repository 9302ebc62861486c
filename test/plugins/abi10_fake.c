/* An ABI 1.0 plugin, built against the frozen 1.0 header (test/plugins/abi-1.0, put first on the
 * include path by the Makefile for abi10_*.c): the 1.1 host must load and run it unchanged. */
#define FAKE_NAME "abi10-fake"
#include "fake_plugin.h"
