#!/usr/bin/env bash
# Needs the build it ran on: the randomly shifted interleave order (schedule.c order_row) plus the
# experiment switch SAGERUN_EXP_FIXED_ORDER (removed after this run; RESULTS.md, issue 12 run 7).
# Issue 12, H200: shared-timed-output run 1 (RESULTS.md run 6) showed that the cold us A/A offset
# is not the output's placement, and that cold 20 us samples differ by up to 3% with their place
# in the sequence of samples modulo 4, a pattern fixed per process; the fixed order A,B,B,A gives
# the two entries fixed places {0,3} and {1,2}. Now each period's rows come in a random shift.
# SAGERUN_EXP_FIXED_ORDER=1 keeps the fixed order (main before). Cold A/As alternating the two.
# Prediction: with the random shift the sd of the A/A estimates across processes falls to about
# the interval's own (half-width / 2) and "same" in >= 5 of 6 per shape; fixed: as in runs 3-6
# (sd 0.2-0.8, same 2-5 of 6). The half-widths may widen a little (the place effect is now noise
# the interval sees).
# Carried: build/bin, plugins, .dev/lib, build/test-plugins, build/dev1.
# Usage (device, repository root): bash test/bench/issue12/random-order/run.sh
set -u
exec bash "$(dirname "$0")/../cold-aa-modes.sh" random-order random fixed SAGERUN_EXP_FIXED_ORDER
