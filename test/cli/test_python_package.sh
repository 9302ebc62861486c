#!/usr/bin/env bash
# The sagerun Python package (python/): its pytest suite on the host backend
# (test/python/package), the notebook example executed headless (nbclient), a report it saves
# read by `sagerun show` and validated against the schema, and `pip install ./python` from the
# tracked files alone (a fresh clone) without network, finding the library it was built with.
set -u
source "$(dirname "$0")/lib.sh"
PY=${SAGERUN_TEST_PYTHON:-/usr/bin/python3}
LIB=$(cd "$(dirname "$S")/../lib" && pwd)/libsagerun.so.0
# A sanitized libsagerun loads into Python only behind its runtime (LD_PRELOAD): ASan/UBSan run
# the pytest suite so (leak checks off: CPython's own allocations live until exit); TSan skips
# (the interpreter is not built for it, and its threads' unsynchronized state would be reported).
SANITIZED=
if nm -D "$LIB" 2>/dev/null | grep -q '__tsan_init'; then
    echo "SKIP: a TSan build's libsagerun is not loaded into $PY (an interpreter not built for TSan)"
    exit 0
elif nm -D "$LIB" 2>/dev/null | grep -q '__asan_init'; then
    SANITIZED="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
    export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
    if ! LD_PRELOAD=$SANITIZED "$PY" -c "import ctypes; ctypes.CDLL('$LIB')" 2>/dev/null; then
        echo "SKIP: $PY cannot load the ASan build's libsagerun, even behind LD_PRELOAD=$SANITIZED"
        exit 0
    fi
fi
for mod in numpy pytest; do
    "$PY" -c "import $mod" 2>/dev/null || { echo "SKIP: $PY has no $mod (python3-$mod)"; exit 0; }
done
if ! "$S" list --backend host --plugin "$ROOT/examples/python/numpy_attention.py" 2>&1 \
        | grep -q numpy-reference; then
    echo "SKIP: sagerun's Python bridge is not built (no Python headers: python3-dev)"; exit 0
fi
export SAGERUN_LIBRARY=$LIB SAGERUN_PYTHON=$PY PYTHONPATH=$ROOT/python PYDEVD_DISABLE_FILE_VALIDATION=1

check "pytest test/python/package (host backend)${SANITIZED:+, under ASan/UBSan}" 0 \
    env ${SANITIZED:+LD_PRELOAD="$SANITIZED"} "$PY" -m pytest -q -p no:cacheprovider \
    "$ROOT/test/python/package"
contains "every case passed" " passed"
if [ -n "$SANITIZED" ]; then
    echo "ok   (the notebook and pip install: in the plain build's run)"; finish; exit
fi

check "a report saved by the package" 0 "$PY" -c "
import sagerun, sys
sagerun.compare('reference', 'reference-mt', shape=(1, 64, 2, 64), backend='host', rounds=3,
                iterations=1, warmup=0, progress=False).save(sys.argv[1])" "$TMP/py.json"
check "is read by sagerun show" 0 "$S" show "$TMP/py.json"
contains "its table" "reference-mt"
n_reports=$((n_reports + 1)); cp "$TMP/py.json" "$REPORTS/$n_reports.json" # validated by finish

if "$PY" -c "import nbclient, nbformat, ipykernel" 2>/dev/null; then
    check "the notebook example runs headless, its HTML table checked" 0 \
        "$PY" "$ROOT/test/python/package/run_notebook.py" "$ROOT/examples/notebook/ab-test.ipynb"
else
    echo "SKIP: the notebook (no python3-nbclient / python3-ipykernel)"
fi

# pip install ./python from the files git tracks or would (what a fresh clone has: no build
# folder), no package index
mkdir -p "$TMP/clone"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard python include/sagerun \
    | xargs -0 cp --parents -t "$TMP/clone")
if "$PY" -m venv --system-site-packages "$TMP/venv" >/dev/null 2>&1; then
    check "pip install ./python offline (a fresh clone's files)" 0 env SAGERUN_BUILD_LIBRARY="$LIB" \
        "$TMP/venv/bin/python" -m pip install --no-index --no-deps --no-cache-dir "$TMP/clone/python"
    check "the installed package finds the library it was built with" 0 \
        env -u SAGERUN_LIBRARY -u PYTHONPATH "$TMP/venv/bin/python" -c "
import sagerun; print(sagerun.__file__, sagerun.library_version())"
    contains "that library" "'$LIB')"
    contains "from the venv" "$TMP/venv/"
else
    echo "SKIP: pip install (no venv module: python3-venv)"
fi
finish
