/* The shipped `reference` variant built against the frozen ABI 1.1 headers (the Makefile puts
 * test/plugins/abi-1.1 first for abi11_*.c): the 1.2 host gives it the 1.1 layout of its inputs
 * (plugin.h section 11), and it must run byte-exact with the current build of the same source. */
#define REFERENCE_NAME "abi11-reference"
#define REFERENCE_DESCRIPTION "the reference variant as an ABI 1.1 build (test fixture)"
#define REFERENCE_THREADS 1
#include "../../variants/common/reference_attention.h"
