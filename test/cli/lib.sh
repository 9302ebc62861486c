# Shared by the CLI test scripts (sourced, not run): the binary, the folders, a temporary
# folder removed on exit, and the checks. Each check prints "ok   NAME" or "FAIL NAME" with the
# output indented, and counts failures in $fails; a script ends with `finish`.
S=${SAGERUN:?set SAGERUN to the sagerun binary}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FAKES=${SAGERUN_TEST_FAKES:-$ROOT/build/test-plugins}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
# set when sagerun was built without nvcc (no GPU code, no CUDA plugins)
NO_CUDA_BUILD=$("$S" --version 2>/dev/null | grep -o "built without CUDA")

fail() { # fail NAME [OUTPUT]
    echo "FAIL $1"; [ -n "${2:-}" ] && echo "$2" | sed 's/^/  | /'; fails=$((fails+1))
}
# Every report a checked compare or sweep writes (--json FILE, sweep's --out-dir DIR/*.json) is kept
# as written, and `finish` validates them all against schema/report.schema.json.
REPORTS=$TMP/.reports-written
mkdir -p "$REPORTS"
n_reports=0
keep_reports() { # keep_reports COMMAND ARGS... (after it ran; $TMP/.stamp from before)
    local prev="" a f
    [[ " $* " == *" compare "* || " $* " == *" sweep "* ]] || return 0 # what writes reports
    for a in "$@"; do
        if [ "$prev" = --json ] && [ "$a" != - ] && [ -f "$a" ] && [ "$a" -nt "$TMP/.stamp" ]; then
            n_reports=$((n_reports + 1)); cp "$a" "$REPORTS/$n_reports.json"
        fi
        if [ "$prev" = --out-dir ] && [ -d "$a" ]; then
            for f in "$a"/*.json; do
                [ -f "$f" ] && [ "${f##*/}" != summary.json ] && [ "$f" -nt "$TMP/.stamp" ] || continue
                n_reports=$((n_reports + 1)); cp "$f" "$REPORTS/$n_reports.json"
            done
        fi
        prev=$a
    done
}
check() { # check NAME EXPECTED_RC COMMAND... ; output (stdout + stderr) in $out
    local name=$1 want=$2; shift 2
    touch "$TMP/.stamp"; sleep 0.01
    out=$("$@" 2>&1); local rc=$?
    keep_reports "$@"
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
    if [ "$n_reports" -gt 0 ]; then
        if msg=$(python3 "$ROOT/test/cli/validate_reports.py" "$REPORTS"/*.json 2>&1); then
            echo "ok   the $n_reports reports written validate against schema/report.schema.json"
        else
            fail "reports written validate against schema/report.schema.json" "$msg"
        fi
    fi
    echo "---- $fails failure(s)"
    [ "$fails" -eq 0 ]
}
