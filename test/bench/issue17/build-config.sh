#!/usr/bin/env bash
# Builds one configuration of the warp-specialized kernel (ws_params.h) as a plugin under another
# name, with the flags of the shipped build: build-config.sh OUT_DIR NAME [-DWS_...=...]...
# OUT_DIR/NAME.so is the plugin (variant NAME); OUT_DIR/NAME.ptxas.txt ptxas's report. NAME
# "warp-specialized" builds the configuration under the shipped name (for the golden test). Where a
# cuobjdump is at hand (tools/get-cuobjdump.sh), OUT_DIR/NAME.loops.txt has the tile loops' SASS counts.
set -eu
out=$1 name=$2; shift 2
root=$(cd "$(dirname "$0")/../../.." && pwd)
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
"$NVCC" -O3 -std=c++17 --use_fast_math -Xptxas -v -gencode arch=compute_90a,code=sm_90a -I"$root/include" "$@" \
    -fatbin "$root/variants/warp-specialized/warp_specialized_kernel.cu" -o "$tmp/image.fatbin" 2> "$out/$name.ptxas.txt" \
    || { cat "$out/$name.ptxas.txt"; exit 1; }
cc -c -DSR_IMAGE_SYMBOL=sagerun_variant_image -DSR_IMAGE_FILE="\"$tmp/image.fatbin\"" "$root/libsagerun/incbin.S" -o "$tmp/image.o"
cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -fPIC -fvisibility=hidden -I"$root/include" \
    -I"${CUDA_HOME:-/usr/local/cuda}/include" -DWS_NAME="\"$name\"" "$@" \
    -c "$root/variants/warp-specialized/warp_specialized.c" -o "$tmp/plugin.o"
cc -shared -Wl,--no-undefined -o "$out/$name.so" "$tmp/plugin.o" "$tmp/image.o" -lm -lpthread
chmod go-w "$out/$name.so" "$out"
if [ -x "$root/build/cuda-tools/bin/cuobjdump" ] || [ -n "${CUOBJDUMP:-}" ]; then
    python3 "$root/test/bench/issue17/sass_loops.py" "$tmp/image.fatbin" > "$out/$name.loops.txt"
    grep -A2 "^sage2_attn_warp_specialized:" "$out/$name.loops.txt" | sed "s/^/$name: /"
fi
grep -E "C751|spill" "$out/$name.ptxas.txt" | sort | uniq -c | sed "s/^/$name: /"
