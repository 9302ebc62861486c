#!/usr/bin/env bash
# The warp-specialized kernel's configurations (variants/warp-specialized/ws_params.h) all build:
# the default that ships, and the measured alternatives (with a producer warpgroup; V8 converted
# in every CTA; one slice per warp, with or without a producer; 256-row CTAs; the ping-pong of two
# warpgroups; 64-row CTAs, three per SM) and the measuring switches (phase clocks, one CTA per
# SM), which no plugin builds and which would otherwise rot. For each: nvcc succeeds (the layout's
# and the register split's static_asserts hold) and ptxas serialises no wgmma (C7514/C7515/C7517:
# an accumulator touched while its wgmma is in flight, which costs the kernel its overlap). The shipped build, the
# ping-pong, one slice without a producer and the 64-row CTAs (168 registers) also spill nothing
# (spills in the tile loop cost 2-11%, issue 17).
set -u
source "$(dirname "$0")/lib.sh"

NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
if [ -n "$NO_CUDA_BUILD" ] || ! [ -x "$NVCC" ]; then
    echo "SKIP: no nvcc ($NVCC): the CUDA configurations are not built"
    finish
    exit
fi

shipped="$ROOT/build/variants/warp-specialized/image.ptxas.txt"
if [ -f "$shipped" ]; then
    grep -q "C751[0-9]" "$shipped" && fail "the shipped build serialises no wgmma" "$(grep C751 "$shipped" | head -3)" \
        || echo "ok   the shipped build serialises no wgmma"
    spills=$(grep -E "[1-9][0-9]* bytes spill (stores|loads)" "$shipped")
    [ -n "$spills" ] && fail "the shipped build spills nothing" "$spills" || echo "ok   the shipped build spills nothing"
fi

build() { # build NAME FLAGS...
    local name=$1; shift
    "$NVCC" -O3 -std=c++17 --use_fast_math -Xptxas -v -gencode arch=compute_90a,code=sm_90a \
        -I"$ROOT/include" "$@" -cubin "$ROOT/variants/warp-specialized/warp_specialized_kernel.cu" \
        -o "$TMP/$name.cubin" > "$TMP/$name.log" 2>&1
    echo $? > "$TMP/$name.rc"
}
build producer -DWS_PRODUCER=1 &
build v8-per-cta -DWS_V_F16=0 &
build one-slice -DWS_SLICES=1 &
build one-slice-no-producer -DWS_SLICES=1 -DWS_PRODUCER=0 &
build rows256 -DWS_SLICES=2 -DWS_CONSUMER_WGS=2 -DWS_PRODUCER_REGS=40 &
build experiments -DWS_TRACE=1 -DWS_SMEM_PAD=1 &
build pingpong -DWS_PINGPONG=1 &
build three-ctas -DWS_SLICES=1 -DWS_CONSUMER_WGS=1 -DWS_CTAS_PER_SM=3 &
wait
for name in producer v8-per-cta one-slice one-slice-no-producer rows256 experiments pingpong three-ctas; do
    if [ "$(cat "$TMP/$name.rc")" = 0 ]; then echo "ok   $name builds"; else fail "$name builds" "$(tail -20 "$TMP/$name.log")"; fi
    grep -q "C751[0-9]" "$TMP/$name.log" && fail "$name serialises no wgmma" "$(grep C751 "$TMP/$name.log" | head -3)" \
        || echo "ok   $name serialises no wgmma"
done
for name in pingpong one-slice-no-producer three-ctas; do
    spills=$(grep -E "[1-9][0-9]* bytes spill (stores|loads)" "$TMP/$name.log")
    [ -n "$spills" ] && fail "$name spills nothing" "$spills" || echo "ok   $name spills nothing"
done
finish
