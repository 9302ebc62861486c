/* The shipped `reference` variant built against the frozen ABI 1.0 header (the Makefile puts
 * test/plugins/abi-1.0 first for abi10_*.c): the 1.1 host must run it byte-exact with the 1.1
 * build of the same source. */
#define REFERENCE_NAME "abi10-reference"
#define REFERENCE_DESCRIPTION "the reference variant as an ABI 1.0 build (test fixture)"
#define REFERENCE_THREADS 1
#include "../../variants/common/reference_attention.h"
