#!/usr/bin/env bash
# Quick start: install what is missing, build, then run the main job — an A/B comparison on the
# default workload (the seed workload on a GPU; a small workload on the host backend without one).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
make -j"$(nproc)" all
exec build/bin/sagerun compare --json build/quickstart-report.json "$@"
