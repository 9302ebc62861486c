#!/usr/bin/env bash
# The NVTX ranges as Nsight Systems and Nsight Compute see them, on a GPU machine with both
# (CUDA toolkit's nsys and ncu on PATH); run from the repository root after `make`:
#   test/gpu/nvtx/check_ranges.sh [VARIANT] [OUT]     (default interleave-softmax, /tmp/sagerun-nvtx)
# A sage2 variant launches one kernel per run, so:
#   1. ncu --nvtx --nvtx-include "profile V/" on `sagerun profile` profiles exactly 1 kernel;
#   2. nsys --capture-range=nvtx --nvtx-capture="profile V" records exactly 1 kernel, inside the
#      ranges "profile V" > "run V";
#   3. nsys on `sagerun compare --in-process` shows the engine's ranges (rounds, round 1, LABEL
#      sample (round 1), run NAME, hashing, ...);
#   4. ncu --nvtx-include "run V/" on that compare profiles only the variant's kernel, none of the
#      timer's (sr_timer_hold/clock/flush), and the count is every call of run (warm-up, samples,
#      checked calls).
# A tool missing is a SKIP line; a check that fails is a FAIL line; exit 1 on any FAIL.
set -u
V=${1:-interleave-softmax}
OUT=${2:-/tmp/sagerun-nvtx}
S=${SAGERUN:-build/bin/sagerun}
mkdir -p "$OUT"
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
SHAPE=(--shape 1,4096,8,128)
CMP=(compare --variant "$V" --in-process --schedule fixed --warmup 1 --rounds 2 --iterations 2
     --no-accuracy "${SHAPE[@]}")

"$S" profile --variant "$V" "${SHAPE[@]}" > "$OUT/profile-plain.txt" 2>&1 \
    && grep -q "NVTX: no tool attached" "$OUT/profile-plain.txt" \
    && ok "profile without a tool: no NVTX calls" || bad "profile without a tool ($OUT/profile-plain.txt)"

if command -v ncu >/dev/null; then
    ncu --nvtx --nvtx-include "profile $V/" --metrics gpu__time_duration.sum --csv \
        "$S" profile --variant "$V" "${SHAPE[@]}" > "$OUT/ncu-profile.csv" 2> "$OUT/ncu-profile.err"
    n=$(grep -c '"gpu__time_duration.sum"' "$OUT/ncu-profile.csv")
    [ "$n" -eq 1 ] && ok "ncu --nvtx-include \"profile $V/\": 1 kernel profiled" \
        || bad "ncu --nvtx-include \"profile $V/\": $n kernels profiled, want 1 ($OUT/ncu-profile.*)"
    grep -q "NVTX: a tool is attached" "$OUT/ncu-profile.csv" "$OUT/ncu-profile.err" \
        && ok "profile saw ncu as a tool" || bad "profile did not see ncu (NVTX_INJECTION64_PATH)"
    ncu --nvtx --nvtx-include "run $V/" --metrics gpu__time_duration.sum --csv \
        "$S" "${CMP[@]}" > "$OUT/ncu-compare.csv" 2> "$OUT/ncu-compare.err"
    grep -q 'sr_timer' "$OUT/ncu-compare.csv" \
        && bad "ncu --nvtx-include \"run $V/\" profiled a timer kernel ($OUT/ncu-compare.csv)" \
        || ok "ncu --nvtx-include \"run $V/\": no timer kernel in the variant's calls"
    n=$(grep -c '"gpu__time_duration.sum"' "$OUT/ncu-compare.csv")
    echo "     ($n kernels profiled in \"run $V\" ranges: warm-up 1, 2 rounds x 2 samples x K calls,"
    echo "      2 checked calls; compare with the K in the report $OUT/ncu-compare.csv)"
else
    echo "SKIP: ncu is not on PATH"
fi

if command -v nsys >/dev/null; then
    nsys profile --trace=cuda,nvtx --capture-range=nvtx --nvtx-capture="profile $V" \
        --capture-range-end=stop --force-overwrite=true -o "$OUT/nsys-profile" \
        "$S" profile --variant "$V" "${SHAPE[@]}" > "$OUT/nsys-profile.txt" 2>&1
    nsys stats --force-export=true --report cuda_gpu_kern_sum --format csv \
        "$OUT/nsys-profile.nsys-rep" > "$OUT/nsys-profile-kernels.csv" 2>&1
    # the Instances column (3rd) of each kernel's row
    n=$(awk -F, '{ gsub(/"/, "", $3) } $3 ~ /^[0-9]+$/ { s += $3 } END { print s + 0 }' \
        "$OUT/nsys-profile-kernels.csv")
    [ "$n" -eq 1 ] && ok "nsys --nvtx-capture=\"profile $V\": 1 kernel launch recorded" \
        || bad "nsys --nvtx-capture=\"profile $V\": $n kernel launches, want 1 ($OUT/nsys-profile-kernels.csv)"
    nsys stats --force-export=true --report nvtx_sum --format csv "$OUT/nsys-profile.nsys-rep" \
        > "$OUT/nsys-profile-nvtx.csv" 2>&1
    grep -q "profile $V" "$OUT/nsys-profile-nvtx.csv" && grep -q "run $V" "$OUT/nsys-profile-nvtx.csv" \
        && ok "nsys: ranges \"profile $V\" and \"run $V\"" || bad "nsys ranges ($OUT/nsys-profile-nvtx.csv)"
    nsys profile --trace=cuda,nvtx --force-overwrite=true -o "$OUT/nsys-compare" \
        "$S" "${CMP[@]}" > "$OUT/nsys-compare.txt" 2>&1
    nsys stats --force-export=true --report nvtx_sum --format csv "$OUT/nsys-compare.nsys-rep" \
        > "$OUT/nsys-compare-nvtx.csv" 2>&1
    for r in "sagerun compare" "create and prepare" "warm-up" "first checked calls" "rounds" \
             "round 1" "baseline sample (round 1)" "$V sample (round 1)" "run baseline" "run $V" \
             "last checked calls" "hashing" "byte differences"; do
        grep -qF "$r" "$OUT/nsys-compare-nvtx.csv" && ok "nsys on compare: range \"$r\"" \
            || bad "nsys on compare: no range \"$r\" ($OUT/nsys-compare-nvtx.csv)"
    done
else
    echo "SKIP: nsys is not on PATH"
fi
echo "---- $fails failure(s); files in $OUT"
[ "$fails" -eq 0 ]
