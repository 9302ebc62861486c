#!/usr/bin/env bash
# Packs what a GPU machine needs to run the GPU tests and benchmarks of this build into .gpu/
# (git-ignored): the built programs, library and plugins with their debug info stripped, the
# golden files and the two libraries such a machine lacks (libsodium, libcmocka), each as one
# xz archive, so that the working tree plus .gpu stay under the device tool's 64 MiB. Run after
# `make`; carry .gpu; on the machine, `bash tools/gpu-unpack.sh` puts them back in place.
set -euo pipefail
cd "$(dirname "$0")/.."
GOLDEN=${SAGERUN_GOLDEN_DIR:-../shared/golden}
[ -x build/bin/sagerun ] || { echo "gpu-bundle: build first (make)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build/test" "$stage/.dev/lib" .gpu
cp -a build/bin build/lib build/test-plugins "$stage/build/"
rm -f "$stage/build/lib/libsagerun_internal.a"
[ -d build/test/gpu ] && cp -a build/test/gpu "$stage/build/test/"
cp -a plugins "$stage/"
find "$stage" -name '*.d' -delete
find "$stage" -type f \( -name '*.so*' -o -perm -u+x \) -exec strip --strip-debug {} \; 2>/dev/null || true
for lib in libsodium.so.23 libcmocka.so.0; do
    cp -L "/usr/lib/x86_64-linux-gnu/$lib" "$stage/.dev/lib/"
done
tar -C "$stage" -cJf .gpu/build.tar.xz build plugins .dev
if [ -d "$GOLDEN" ]; then
    tar -C "$(dirname "$GOLDEN")" -cJf .gpu/golden.tar.xz --transform "s,^$(basename "$GOLDEN"),.golden," \
        "$(basename "$GOLDEN")"
fi
du -sh .gpu/*
