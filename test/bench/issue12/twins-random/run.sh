#!/usr/bin/env bash
# Needs the build it ran on: main at the NVML change (measure.c: energy read only around samples
# long enough to keep, the violation counter once per sample) with twins.patch of
# ../shared-timed-output applied and the experiment switch SAGERUN_EXP_OWN_OUTPUTS (measure.c's
# take() times e->inst instead of e->timed); neither kept (RESULTS.md, issue 12 run 10).
# Issue 12, H200: with the random order shift and ~850 rounds in 4 s, cold us A/As still show a
# per-process offset of 0.1-0.25% (runs 8-9: "differs, below threshold" in 14 of 72). Run 6 asked
# whether the outputs' placement is it under the fixed order, whose place effect hid anything this
# small. Same question now: timed twins writing one shared output against each entry's own.
# Prediction: if the output's placement is the residual, "shared" gives an sd of the estimates
# near the interval's own (half-width / 2) and "same" >= 5 of 6 per shape; "own" as runs 8-9
# (sd 0.05-0.17, "same" 3-6 of 6). If not, the two look alike.
# Carried: build/bin, plugins, .dev/lib, build/test-plugins, build/dev1.
# Usage (device, repository root): bash test/bench/issue12/twins-random/run.sh
set -u
exec bash "$(dirname "$0")/../cold-aa-modes.sh" twins-random shared own SAGERUN_EXP_OWN_OUTPUTS
