#!/usr/bin/env bash
# The main job on a bundled example: the bundled wavelet program (a vector
# add on one PE) is verified against the machine model, translated to a .wfb
# binary, run by the cycle-level simulator on random inputs, and its output
# checked against numpy. (The ONNX -> fabric path of `weftc run` replaces
# this example when it lands.)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${WEFT_BUILD_DIR:-$root/build}"
bash "$root/scripts/build.sh" weft-opt weft-translate weft-sim
example="$root/examples/vector-add.mlir"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "== verify $example against the machine model"
"$build/bin/weft-opt" "$example" > /dev/null
echo "   ok"
echo "== translate to a PE task binary"
"$build/bin/weft-translate" --wavelet-to-wfb "$example" -o "$out/vadd.wfb"
ls -l "$out/vadd.wfb" | awk '{print "   " $5 " bytes"}'
echo "== simulate with random inputs"
/usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(2026)
for name in ("a", "b"):
    np.save(f"{sys.argv[1]}/{name}.npy", rng.standard_normal(64).astype(np.float32))
PY
"$build/bin/weft-sim" "$out/vadd.wfb" --input a="$out/a.npy" --input b="$out/b.npy" \
  --output-dir "$out/out" --stats "$out/stats.json"
echo "== compare with numpy"
/usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np
d = sys.argv[1]
got = np.load(f"{d}/out/sum.npy")
want = np.load(f"{d}/a.npy") + np.load(f"{d}/b.npy")
assert got.dtype == np.float32 and got.shape == want.shape
assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), "mismatch"
print(f"   {got.size} elements bit-identical to numpy's a + b")
PY
