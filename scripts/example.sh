#!/usr/bin/env bash
# The main job on the bundled example: weftc compiles an MLP in ONNX
# (examples/mlp.onnx: Gemm 64 -> 48 + ReLU, Gemm 48 -> 32 + Tanh,
# Gemm 32 -> 10 + Softmax, a batch of 8) to a fabric binary for a 16x16
# fabric, a separate weft-sim process runs it on random inputs, and --check
# compares every output with the host reference. Then the bundled
# hand-written wavelet program (a vector add on one PE) goes through the
# lower layers alone: verified, translated to .wfb, simulated and compared
# with numpy.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${WEFT_BUILD_DIR:-$root/build}"
bash "$root/scripts/build.sh" weft-opt weft-translate weft-sim weftc
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

model="$root/examples/mlp.onnx"
echo "== compile $model (ONNX -> fabric -> wavelet -> .wfb)"
"$build/bin/weftc" compile "$model" -o "$out/mlp.wfb" --grid 16x16
ls -l "$out/mlp.wfb" | awk '{print "   " $5 " bytes"}'
echo "== run it on the simulated fabric (8 samples) and check against the host reference"
/usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(2026)
np.save(f"{sys.argv[1]}/x.npy", rng.standard_normal((8, 64)).astype(np.float32))
PY
"$build/bin/weftc" run "$model" --grid 16x16 --input x="$out/x.npy" --check \
  --output-dir "$out/out" --stats "$out/stats.json"

example="$root/examples/vector-add.mlir"
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
  --output-dir "$out/vout" --stats "$out/vstats.json"
echo "== compare with numpy"
/usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np
d = sys.argv[1]
got = np.load(f"{d}/vout/sum.npy")
want = np.load(f"{d}/a.npy") + np.load(f"{d}/b.npy")
assert got.dtype == np.float32 and got.shape == want.shape
assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), "mismatch"
print(f"   {got.size} elements bit-identical to numpy's a + b")
PY
