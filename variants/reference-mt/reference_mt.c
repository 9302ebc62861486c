/* The `reference-mt` variant: the reference's arithmetic with the rows split across every core —
 * byte-identical to `reference` and faster: the host backend's A/B pair. */
#define REFERENCE_NAME "reference-mt"
#define REFERENCE_DESCRIPTION "exact attention in double precision, rows across all CPU cores"
#define REFERENCE_THREADS 0
#include "../common/reference_attention.h"
