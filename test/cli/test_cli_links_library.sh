#!/usr/bin/env bash
# The CLI is a client of libsagerun.so and nothing else (README "Library"): its binary needs
# libsagerun.so.0 (readelf NEEDED), the loader finds the build's own copy beside it (ldd), and it
# defines none of the library's symbols — neither the exported sagerun_* nor the hidden sr_*
# internals (nm of both files): a CLI that links libsagerun_internal.a again, or compiles a
# library source into itself, fails here. The CLI's sources include no internal header.
set -u
source "$(dirname "$0")/lib.sh"

BIN=$(readlink -f "$S")
LIBDIR=$(cd "$(dirname "$BIN")/../lib" 2>/dev/null && pwd)
LIB=$(readlink -f "$LIBDIR/libsagerun.so.0" 2>/dev/null)
if [ -z "$LIB" ] || [ ! -f "$LIB" ]; then
    fail "the build's libsagerun.so.0 next to $BIN (expected in $LIBDIR)"; finish; exit
fi
for tool in readelf nm ldd; do
    command -v $tool >/dev/null || { echo "SKIP: $tool is not installed"; exit 0; }
done

# ---- NEEDED and what the loader resolves ----
readelf -d "$BIN" | grep -q 'NEEDED.*\[libsagerun\.so\.0\]' \
    && echo "ok   sagerun needs libsagerun.so.0" \
    || fail "readelf -d: libsagerun.so.0 is not NEEDED by $BIN" "$(readelf -d "$BIN" | grep NEEDED)"
resolved=$(ldd "$BIN" | awk '$1 == "libsagerun.so.0" { print $3 }')
[ -n "$resolved" ] && [ "$(readlink -f "$resolved")" = "$LIB" ] \
    && echo "ok   ldd: libsagerun.so.0 => the build's $LIB" \
    || fail "ldd: libsagerun.so.0 resolves to '$resolved', not $LIB" "$(ldd "$BIN")"

# ---- no symbol of the library defined in the binary ----
syms() { nm --defined-only "$1" 2>/dev/null | awk 'NF == 3 && $3 ~ /^(sr_|sagerun_)/ { print $3 }' | sort -u; }
lib_syms=$(syms "$LIB")
[ "$(wc -l <<<"$lib_syms")" -gt 100 ] && grep -qx sr_report_read <<<"$lib_syms" \
    || fail "nm sees the library's internal symbols (is $LIB stripped?)" "$(head <<<"$lib_syms")"
both=$(comm -12 <(syms "$BIN") <(echo "$lib_syms"))
[ -z "$both" ] && echo "ok   sagerun defines none of the library's $(wc -l <<<"$lib_syms") symbols" \
    || fail "sagerun defines symbols of the library (linked its internals?)" "$both"
undefined=$(nm --undefined-only "$BIN" | awk '$2 ~ /^sr_/ { print $2 }')
[ -z "$undefined" ] && echo "ok   sagerun asks the library for no sr_* internal" \
    || fail "sagerun needs internal sr_* symbols" "$undefined"

# ---- the sources: public headers only ----
internal=$(cd "$ROOT/libsagerun" && ls *.h)
bad=$(cd "$ROOT/libsagerun/cli" && for h in $internal; do
          grep -l "#include \"$h\"" *.c *.h 2>/dev/null | sed "s|$| includes $h|"; done)
[ -z "$bad" ] && echo "ok   the CLI's sources include no header of libsagerun/" \
    || fail "the CLI includes internal headers" "$bad"

# ---- and it works that way: a command through the library's API ----
check "the linked CLI runs a comparison" 0 "$S" compare --backend host --quiet --shape 1,32,2,64 \
    --schedule fixed --rounds 2 --iterations 1 --warmup 0 --no-accuracy \
    && contains "the table" "reference-mt"
finish
