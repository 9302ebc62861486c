#!/usr/bin/env bash
# A build without nvcc (NVCC naming no program, as on a Debian machine without the CUDA toolkit):
# make builds the library, the CLI and the host plugins, says which plugins it skipped and why,
# and that sagerun runs the default comparison on the host backend.
set -u
source "$(dirname "$0")/lib.sh"

B="$TMP/b"
log=$(cd "$ROOT" && env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS \
      make -j2 NVCC=/nonexistent/nvcc B="$B" lib cli plugins 2>&1); rc=$?
out=$log
[ $rc -eq 0 ] && echo "ok   make without nvcc" || fail "make without nvcc: exit $rc" "$(tail -30 <<<"$log")"
contains "says it builds without CUDA" "sagerun: no nvcc at /nonexistent/nvcc (set CUDA_HOME or NVCC): building without CUDA"
cuda_variants=$(cd "$ROOT/variants" && for d in */; do d=${d%/}; [ "$d" != common ] && ls "$d"/*.cu >/dev/null 2>&1 && printf '%s ' "$d"; done)
contains "names the skipped plugins and why" "sagerun: skipped plugins (they have CUDA kernels): ${cuda_variants% }"
grep -q "nvcc -" <<<"$log" && fail "no nvcc command is run" "$(grep 'nvcc -' <<<"$log" | head -3)" || echo "ok   no nvcc command is run"
grep -q "cuda/include" <<<"$log" && fail "no CUDA include folder is used" || echo "ok   no CUDA include folder is used"

# what it built: the host plugins only, beside the build (never in the tree's plugins/)
for p in reference reference-mt; do
    [ -f "$B/plugins/$p.so" ] && echo "ok   built $p.so" || fail "built $p.so" "$(ls "$B/plugins" 2>&1)"
done
for p in $cuda_variants; do
    [ ! -e "$B/plugins/$p.so" ] && echo "ok   skipped $p.so" || fail "skipped $p.so"
done

CLI="$B/bin/sagerun"
check "version says so" 0 "$CLI" --version && contains "built without CUDA" "built without CUDA: host backend only"
check "list finds the host plugins" 0 env SAGERUN_PLUGIN_PATH= "$CLI" list
contains "reference listed" "reference"
grep -q "^  baseline " <<<"$out" && fail "baseline not listed" "$out" || echo "ok   baseline not listed"
check "compare on the default backend runs on the host" 0 env SAGERUN_PLUGIN_PATH= "$CLI" compare \
    --rounds 2 --iterations 1 --warmup 0 --no-accuracy --json "$TMP/r.json"
contains "says why" "built without CUDA"
contains "host backend" "using the host backend"
check "the CUDA backend is refused with the reason" 1 env SAGERUN_PLUGIN_PATH= "$CLI" compare --backend cuda
contains "names the reason" "this sagerun was built without CUDA (no nvcc at build time)"

# The NVTX layer compiles out (libsagerun/nvtx.h): no NVTX code in the library, and the unit test
# built here hands its ranges to the CUDA build's test tool without it ever loading.
lib=$(ls "$B"/lib/libsagerun.so.*.*.* | head -1)
n=$(nm -a "$lib" | grep -ci nvtx)
[ "$n" -eq 0 ] && echo "ok   no NVTX symbol in $lib" || fail "no NVTX symbol in $lib ($n)"
main_lib=$(ls "$(dirname "$(dirname "$S")")"/lib/libsagerun.so.*.*.* 2>/dev/null | head -1)
if [ -z "$NO_CUDA_BUILD" ] && [ -n "$main_lib" ]; then
    n=$(nm -a "$main_lib" | grep -ci nvtx)
    [ "$n" -gt 0 ] && echo "ok   NVTX compiled into the CUDA build's $main_lib" || fail "NVTX compiled into $main_lib"
fi
log=$(cd "$ROOT" && env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS \
      make NVCC=/nonexistent/nvcc B="$B" "$B/test/test_nvtx" 2>&1) \
    && echo "ok   make the NVTX unit test without nvcc" || fail "make the NVTX unit test without nvcc" "$log"
tool=$(dirname "$(dirname "$S")")/test/nvtx/fake_tool.so
[ -f "$tool" ] || { echo "SKIP: no NVTX test tool at $tool (the CUDA build makes it)"; tool=; }
check "without CUDA, ranges reach no tool" 0 env SAGERUN_TEST_NVTX_TOOL="$tool" "$B/test/test_nvtx" \
    && contains "the compiled-out case ran" "test_ranges_compile_out"
check "profile runs one call on the host, no ranges" 0 env SAGERUN_PLUGIN_PATH= "$CLI" profile \
    --variant reference --shape 1,64,2,64 --warmup 1
contains "says the ranges are compiled out" "NVTX: compiled out (built without CUDA)"
contains "prints the output hash" "output_sha256 "

finish
