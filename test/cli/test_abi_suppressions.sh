#!/usr/bin/env bash
# make check-abi compares the library with abi/libsagerun.abi through abi/internal.suppr: a type
# defined outside include/sagerun/ (an internal struct behind an opaque handle) may grow without a
# report, and a public type may not. Two builds of a small library, laid out like ours, each
# compared with the first one's abidw baseline.
set -u
source "$(dirname "$0")/lib.sh"

if ! command -v abidw > /dev/null || ! command -v abidiff > /dev/null; then
    echo "SKIP abidw/abidiff not installed (abigail-tools)"; finish; exit
fi
mkdir -p "$TMP/t/include/sagerun" "$TMP/t/libsagerun"
cd "$TMP/t" || exit 1
build() { # build PUBLIC_EXTRA INTERNAL_EXTRA OUT
    printf 'typedef struct pub_s { int a;%s } pub_s;\ntypedef struct hidden_s hidden_s;\n' "$1" \
        > include/sagerun/pub.h
    printf '#include "sagerun/pub.h"\nstruct hidden_s { int x;%s };\n' "$2" > libsagerun/priv.h
    printf '#include "priv.h"\n%s\n%s\n' '__attribute__((visibility("default"))) int pub_get(const pub_s *p) { return p->a; }' \
        '__attribute__((visibility("default"))) int hidden_get(const hidden_s *h) { return h->x; }' \
        > libsagerun/lib.c
    cc -std=c11 -g -O0 -fPIC -shared -fvisibility=hidden -Iinclude -Ilibsagerun -o "$3" libsagerun/lib.c
}
build "" "" v1.so && abidw --no-corpus-path --out-file base.abi v1.so
build "" " int y;" v2.so
build " int b;" "" v3.so
check "an internal struct behind an opaque handle grows: no ABI report" 0 \
    abidiff --suppressions "$ROOT/abi/internal.suppr" base.abi v2.so
check "without the suppressions the same growth is reported" 4 abidiff base.abi v2.so
check "a public struct grows: reported through the suppressions" 4 \
    abidiff --suppressions "$ROOT/abi/internal.suppr" base.abi v3.so
finish
