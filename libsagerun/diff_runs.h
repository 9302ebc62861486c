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
 * ln of the time over the run's baseline's) with (old_v, new_v; NULL: unknown) its squared
 * standard error within its run. With every run's error known, each run is weighted by
 * 1 / (v_i + tau2), tau2 the between-run variance estimated from the runs (DerSimonian-Laird,
 * pooled over both sides), each side's error scaled by its runs' scatter (Hartung-Knapp) with
 * Welch's degrees of freedom; else Welch's t on the plain means (Student's with the other side's spread where one side has one run). The
 * squared standard error is at least min_se2 (a calibrated between-run sd's share). Speedup in
 * percent, + = new faster (stats.h's convention). valid false below three runs in all, with a
 * side empty, or with a non-finite estimate. */
sr_interval sr_between_runs_interval(const double *old_x, const double *old_v, size_t n_old,
                                     const double *new_x, const double *new_v, size_t n_new,
                                     double min_se2);

/* The interval widened by a between-run sd (percent of the time) that two single runs cannot see:
 * half' = sqrt(half^2 + (1.96 sqrt(2) sd)^2) on the log scale, around the same estimate. sd <= 0
 * or NaN: unchanged. */
sr_interval sr_interval_add_between_runs(sr_interval iv, double between_run_sd_percent);

/* The smallest change (percent) that one run per side can tell from run-to-run movement of sd
 * between_run_sd_percent: 1.96 sqrt(2) sd on the log scale, as a percentage. */
double sr_between_runs_floor_percent(double between_run_sd_percent);

#endif
