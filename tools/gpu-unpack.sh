#!/usr/bin/env bash
# On a GPU machine: unpacks what tools/gpu-bundle.sh packed into .gpu/ (build/, plugins/, .dev/lib,
# .golden) and prints the environment the GPU tests need; eval its output:
#   eval "$(bash tools/gpu-unpack.sh)"
set -euo pipefail
cd "$(dirname "$0")/.."
tar -xJf .gpu/build.tar.xz
[ -f .gpu/golden.tar.xz ] && tar -xJf .gpu/golden.tar.xz
echo "export LD_LIBRARY_PATH=$PWD/.dev/lib:$PWD/build/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
echo "export SAGERUN_GOLDEN_DIR=$PWD/.golden SAGERUN_TEST_PLUGINS=$PWD/plugins"
echo "export SAGERUN_TEST_FAKES=$PWD/build/test-plugins"
