#!/usr/bin/env bash
# Issue 15 on the command line (host backend): an all-zero V gives an all-zero reference output
# (the oracle once wrote 0.5 for every exact zero), and a sage2 variant warns about all-zero V
# channels (its output is NaN there, as SageAttention's is); an inputs file may carry k_mean.
set -u
source "$(dirname "$0")/lib.sh"
export SAGERUN_TEST_FAULTS=1 # the fault plugins refuse to load without it

if ! "$S" list --backend host 2>/dev/null | grep -q '^  reference '; then
    echo "SKIP: the reference plugin is not built"; exit 0
fi
if ! command -v python3 >/dev/null; then
    echo "SKIP: no python3 to edit the inputs file"; exit 0
fi

check "inputs saved" 0 "$S" run --backend host --variant reference --shape 1,40,2,16 \
    --iterations 1 --warmup 0 --save-inputs "$TMP/in.safetensors"

# rewrite_inputs SRC DST ZERO_V [K_MEAN_DTYPE]: v zeroed (all of it, or channel 3 of head 1),
# plus a k_mean tensor when asked (a plain Python safetensors writer: header, then the data).
rewrite() {
    python3 - "$@" <<'EOF'
import json, struct, sys
src, dst, zero, km_dtype = sys.argv[1], sys.argv[2], sys.argv[3], (sys.argv[4:] or [None])[0]
raw = open(src, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n]); data = raw[8 + n:]
tensors = {}
for name, t in head.items():
    if name == "__metadata__": continue
    b, e = t["data_offsets"]; tensors[name] = (t["dtype"], t["shape"], bytearray(data[b:e]))
dt, shape, v = tensors["v"]
B, N, H, D = shape
for i in range(len(v) // 2):
    c, h = i % D, i // D % H
    if zero == "all" or (c == 3 and h == 1):
        v[2 * i:2 * i + 2] = b"\0\0"
if km_dtype:
    tensors["k_mean"] = (km_dtype, [B, 1, H, D], bytearray(struct.pack("<e", 0.25) * (B * H * D)))
out, off, header = bytearray(), 0, {}
for name, (dt, shape, buf) in tensors.items():
    header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(buf)]}
    out += buf; off += len(buf)
hj = json.dumps(header).encode(); hj += b" " * (-len(hj) % 8)
open(dst, "wb").write(struct.pack("<Q", len(hj)) + hj + out)
EOF
}
rewrite "$TMP/in.safetensors" "$TMP/zero.safetensors" all
rewrite "$TMP/in.safetensors" "$TMP/onezero.safetensors" one F16
rewrite "$TMP/in.safetensors" "$TMP/badkm.safetensors" one BF16

check "reference on all-zero V" 0 "$S" run --backend host --variant reference \
    --inputs "$TMP/zero.safetensors" --iterations 1 --warmup 0 --save-output "$TMP/o.safetensors"
py "the reference output of an all-zero V is all zeros (not 0.5, 0x3800)" '
import json, struct, sys
raw = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", raw[:8])[0]
t = json.loads(raw[8:8 + n])["o"]; b, e = t["data_offsets"]
o = raw[8 + n + b:8 + n + e]
assert len(o) > 0 and o == bytes(len(o)), "non-zero bytes: %r" % o[:16]
' "$TMP/o.safetensors"

SAGE2_FAKE=(--plugin "$FAKES/fault_error_prepare_sage2.so" --variant fault-error-prepare-sage2)
if [ -f "$FAKES/fault_error_prepare_sage2.so" ]; then
    # the fake fails in prepare, after the host quantized the inputs for it
    check "sage2 variant on one zero V channel" 1 "$S" run --backend host "${SAGE2_FAKE[@]}" \
        --inputs "$TMP/onezero.safetensors" --iterations 1 --warmup 0
    contains "warns about the zero V channel" "warning: V has 1 all-zero channel (of 32)"
    contains "warns that the output is NaN there" "NaN there"
    check "no warning without zero channels" 1 "$S" run --backend host "${SAGE2_FAKE[@]}" \
        --inputs "$TMP/in.safetensors" --iterations 1 --warmup 0
    grep -q "all-zero" <<<"$out" && fail "no warning without zero channels" "$out"
else
    echo "SKIP: fault plugins not built ($FAKES): no sage2 warning cases"
fi

check "an F16 k_mean is accepted" 0 "$S" run --backend host --variant reference \
    --inputs "$TMP/onezero.safetensors" --iterations 1 --warmup 0
check "a k_mean of another dtype is refused" 1 "$S" run --backend host --variant reference \
    --inputs "$TMP/badkm.safetensors" --iterations 1 --warmup 0
contains "the error names k_mean and the dtype it must have" '"k_mean" must be F16 [1, 1, 2, 16]'
finish
