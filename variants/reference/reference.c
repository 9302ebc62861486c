/* The `reference` variant: exact attention in double precision, one thread — the oracle. */
#define REFERENCE_NAME "reference"
#define REFERENCE_DESCRIPTION "exact attention in double precision on the CPU (the oracle)"
#define REFERENCE_THREADS 1
#include "../common/reference_attention.h"
