#!/usr/bin/env bash
# For kernel work without a GPU: puts cuobjdump and nvdisasm (CUDA 12.4, Debian's non-free
# nvidia-cuda-toolkit package, which they read sm_90a code of nvcc 13.0 with) under
# build/cuda-tools/bin. The CUDA on this machine has nvcc and ptxas but no disassembler, so the
# SASS of a kernel could only be read on the device machine. Nothing of sagerun needs them.
#   tools/get-cuobjdump.sh && build/cuda-tools/bin/cuobjdump -sass build/variants/warp-specialized/image.fatbin
# The package is only downloaded and unpacked (no apt configuration changes, nothing installed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/build/cuda-tools
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=${DEBIAN_SUITE:-trixie}
if [ -x "$dest/bin/cuobjdump" ] && [ -x "$dest/bin/nvdisasm" ]; then
    echo "$dest/bin: cuobjdump and nvdisasm already there"
    exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "reading $mirror/dists/$suite/non-free/binary-amd64/Packages.xz" >&2
curl -fsS --max-time 120 -o "$tmp/Packages.xz" "$mirror/dists/$suite/non-free/binary-amd64/Packages.xz"
xz -d "$tmp/Packages.xz"
file=$(awk '/^Package: nvidia-cuda-toolkit$/ {p = 1} p && /^Filename:/ {print $2; exit}' "$tmp/Packages")
if [ -z "$file" ]; then
    echo "get-cuobjdump: no nvidia-cuda-toolkit in $suite non-free at $mirror" >&2
    exit 1
fi
echo "downloading $mirror/$file (about 90 MB)" >&2
curl -fsS --max-time 900 -o "$tmp/toolkit.deb" "$mirror/$file"
dpkg-deb --fsys-tarfile "$tmp/toolkit.deb" | tar -x -C "$tmp" ./usr/bin/cuobjdump ./usr/bin/nvdisasm
mkdir -p "$dest/bin"
install -m 755 "$tmp/usr/bin/cuobjdump" "$tmp/usr/bin/nvdisasm" "$dest/bin/"
echo "$dest/bin: $("$dest/bin/cuobjdump" --version | tail -1)"
