#!/usr/bin/env bash
# Installs the Debian packages sagerun builds and tests with, where missing (run as root).
# nvcc is expected under /usr/local/cuda (CUDA 13.0); it is not installed here, and without it
# the build has no GPU code (see the Makefile's HAVE_NVCC). slurm-wlm and munge: test/cli/test_slurm.sh
# starts a one-node Slurm from them and runs the sweep example's job array. libcairo2-dev and
# fonts-dejavu-core: sagerun plot draws with cairo (text extents; SVG, PNG and PDF) in DejaVu Sans.
# python3-pip, -venv, -pytest, -nbclient, -nbformat, -ipykernel: the Python package's install and
# tests (test/cli/test_python_package.sh: pytest, the notebook run headless, pip install offline).
set -euo pipefail
need=()
for pkg in build-essential pkg-config libjansson-dev libsodium-dev libcmocka-dev python3 clang libclang-rt-14-dev libxml2-utils abigail-tools python3-jsonschema \
           slurm-wlm munge python3-dev python3-numpy libcairo2-dev fonts-dejavu-core \
           python3-pip python3-venv python3-pytest python3-nbclient python3-nbformat python3-ipykernel; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "installing: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
if [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
    echo "note: nvcc not found at ${CUDA_HOME:-/usr/local/cuda}/bin/nvcc (set CUDA_HOME): make" \
         "builds without CUDA (the library, the CLI and the host plugins; the host backend)" >&2
fi
