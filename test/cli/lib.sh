# Shared by the CLI test scripts (sourced, not run): the binary, the folders, a temporary
# folder removed on exit, and the checks. Each check prints "ok   NAME" or "FAIL NAME" with the
# output indented, and counts failures in $fails; a script ends with `finish`.
S=${SAGERUN:?set SAGERUN to the sagerun binary}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FAKES=${SAGERUN_TEST_FAKES:-$ROOT/build/test-plugins}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0

fail() { # fail NAME [OUTPUT]
    echo "FAIL $1"; [ -n "${2:-}" ] && echo "$2" | sed 's/^/  | /'; fails=$((fails+1))
}
check() { # check NAME EXPECTED_RC COMMAND... ; output (stdout + stderr) in $out
    local name=$1 want=$2; shift 2
    out=$("$@" 2>&1); local rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "$name: exit $rc, expected $want" "$out"
        return 1
    fi
    echo "ok   $name"
}
contains() { # contains NAME TEXT: the last check's output holds TEXT
    grep -qF -- "$2" <<<"$out" || fail "$1: output lacks '$2'" "$out"
}
py() { # py NAME SCRIPT ARGS... : a python3 check
    local name=$1 script=$2; shift 2
    if msg=$(python3 -c "$script" "$@" 2>&1); then echo "ok   $name"; else fail "$name" "$msg"; fi
}
finish() {
    echo "---- $fails failure(s)"
    [ "$fails" -eq 0 ]
}
