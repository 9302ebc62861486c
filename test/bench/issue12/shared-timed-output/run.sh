#!/usr/bin/env bash
# Needs the build it ran on: main 79035b7 with twins.patch (beside this script: the timed twins of
# entries.c, sr_instance_twin) plus the experiment switch
# SAGERUN_EXP_OWN_OUTPUTS (measure.c, removed after this run; RESULTS.md, issue 12 run 6).
# Issue 12, H200: cold us A/As carried an offset of 0.3-2% per process between the two instances of
# one variant (runs 3-5). What the GPU sees differ between them is only the output each writes:
# the launches are otherwise byte-identical. Now every entry's timed calls run a twin of its
# instance that writes one output shared by all entries (the checked calls keep their own), so
# the GPU sees two identical streams of work. SAGERUN_EXP_OWN_OUTPUTS=1 times each entry's own
# instance (as on main before). Cold A/As alternating the two, one process each.
# Prediction: with the shared output, the sd of the A/A estimates across processes falls to the
# interval's own level (about half-width / 2, <= 0.15 points) and "same" in >= 5 of 6 per shape;
# with own outputs, sd 0.2-0.8 as in runs 3-5.
# Carried: build/bin, plugins, .dev/lib, build/test-plugins, build/dev1.
# Usage (device, repository root): bash test/bench/issue12/shared-timed-output/run.sh
set -u
exec bash "$(dirname "$0")/../cold-aa-modes.sh" shared-timed-output shared own SAGERUN_EXP_OWN_OUTPUTS
