#!/usr/bin/env bash
# Issue 12, H200, run 8: NVML's cost per query (nvml_cost.py below, ctypes), then cold A/As of
# the NVML change (measure.c: the energy counter read only around samples long enough to keep,
# the violation counter once per sample) in two identical modes (the switch is a no-op), then the
# full check (../cold-gap/run.sh). Built here, carried as in ../cold-gap/run.sh.
# Prediction: ~10 ms per cold sample was NVML (six queries); with two left, >= 3x the rounds in
# the same 4 s budget and half-widths ~1/sqrt(3) of run 7's.
# Usage (device, repository root): bash test/bench/issue12/nvml-once/run.sh
set -u
python3 "$(dirname "$0")/nvml_cost.py" > $OUT/nvml.txt 2>&1
bash "$(dirname "$0")/../cold-aa-modes.sh" nvml-once a b SAGERUN_EXP_NOTHING
mkdir -p $OUT/cg && OUT=$OUT/cg bash "$(dirname "$0")/../cold-gap/run.sh"
