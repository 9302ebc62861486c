/* A host variant "spin-slowed": spin's call (host_spin.c, the same parameters), slower by the
 * fraction SAGERUN_TEST_SLOW_FRACTION (default 0: as spin) read from the environment, so that two
 * runs of one command line, one under SAGERUN_TEST_SLOW_FRACTION=0.03, differ by a known 3% under
 * the same label (test/bench/repeat/run-gpu.sh on the host backend, test_diff_repeat.sh). */
#define SPIN_SLOWED 1
#define FAKE_NAME "spin-slowed"
#include "host_spin.c"
