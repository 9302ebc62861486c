/* The run-to-run movement of a machine (calibration.c): how far a variant's estimate moves
 * between two processes of the same comparison, which no run's interval holds. `sagerun diff
 * --calibrate RUNS` measures it from a repeat index (3 runs or more: compare or sweep --repeat)
 * and stores it per device; a diff of one run per side reads it. The file:
 * $SAGERUN_CALIBRATION, else $XDG_CONFIG_HOME/sagerun/calibration.json (~/.config/...):
 *   {"sagerun_calibration": 1, "devices": {"BACKEND:DEVICE NAME": {
 *      "between_run_sd_percent": S (a variant's time over its baseline's, as diff judges it),
 *      "between_run_time_sd_percent": T (its time alone: diff --absolute),
 *      "runs": N, "degrees_of_freedom": M (of the pooled sd), "source": PATH,
 *      "created_utc": TIME}}} */
#ifndef SAGERUN_CLI_CALIBRATION_H
#define SAGERUN_CLI_CALIBRATION_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"

/* "BACKEND:DEVICE NAME" of a report, into buf; false when it does not read. */
bool sr_cli_device_key(const char *report_path, char *buf, size_t len);

/* The stored sd (percent) of the device (relative: the ratio's; else the time's); 0 when there is
 * none. *source: where it came from (the calibration file), for the note. */
double sr_cli_calibration_sd(const char *device_key, bool relative, char *source, size_t len);

/* diff --calibrate: the pooled run-to-run sd of every variant's estimate over the runs of the
 * index (each point of a sweep alike), stored for the runs' device and printed. An exit code. */
int sr_cli_calibrate(const char *index_path);

#endif
