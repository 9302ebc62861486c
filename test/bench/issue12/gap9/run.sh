#!/usr/bin/env bash
# Needs the build it ran on: main with the NVML change, plus gap9.patch (beside this script: the
# launch gap as the median of up to nine 5 ms batches instead of three 1 ms ones, and the
# experiment switch SAGERUN_EXP_SHARED_GAP, which gives every entry the baseline's gap). Not kept
# (RESULTS.md, issue 12 run 9). Its test_gpu_basics failed: a 1.7 us call's 5 ms batch is ~2,900
# launches queued behind the hold kernel, more than the launch queue takes, so the hold timed out
# and the gap was lost.
# Prediction: if the gap's error is the residual cold A/A offset (run 8: estimates follow the gap
# difference, correlation 0.48), the sd of the estimates falls toward half-width / 2 with own gaps
# and more so with the shared one, and "same" >= 5 of 6 per shape.
# Usage (device, repository root): bash test/bench/issue12/gap9/run.sh
set -u
exec bash "$(dirname "$0")/../cold-aa-modes.sh" gap9 own shared SAGERUN_EXP_SHARED_GAP
