/* Between-run statistics of a diff (diff_runs.c): two independent runs share no rounds, and what
 * moves a whole process (the instance's placement, clocks, another load) is not in any run's
 * interval. So a diff never pairs the rounds of two runs, and where a side has replicates (several
 * runs: compare/sweep --repeat) the process is the unit: each run gives one estimate, and the
 * change is judged from their spread. One run per side is judged from both runs' rounds (Yuen),
 * widened by a calibrated between-run sd where there is one. */
#ifndef SAGERUN_DIFF_RUNS_H
#define SAGERUN_DIFF_RUNS_H

#include <stddef.h>

#include "stats.h"

/* The interval of new against old from per-run estimates, each a run's log time (ln seconds, or
 * ln of the time over the run's baseline's): the difference of the means, Welch's t where both
 * sides have two runs or more, Student's with the other side's variance where one side has one.
 * Its squared standard error is at least min_se2 (log units: what the runs' own intervals, or a
 * calibrated between-run sd, say it is at least; two or three runs can agree by chance). Speedup
 * in percent, + = new faster (stats.h's convention). valid false below three runs in all, with a
 * side empty, or with a non-finite estimate. */
sr_interval sr_between_runs_interval(const double *old_x, size_t n_old, const double *new_x,
                                     size_t n_new, double min_se2);

/* The interval widened by a between-run sd (percent of the time) that two single runs cannot see:
 * half' = sqrt(half^2 + (1.96 sqrt(2) sd)^2) on the log scale, around the same estimate. sd <= 0
 * or NaN: unchanged. */
sr_interval sr_interval_add_between_runs(sr_interval iv, double between_run_sd_percent);

/* The smallest change (percent) that one run per side can tell from run-to-run movement of sd
 * between_run_sd_percent: 1.96 sqrt(2) sd on the log scale, as a percentage. */
double sr_between_runs_floor_percent(double between_run_sd_percent);

#endif
