#!/usr/bin/env bash
# The main job on a bundled example. Until the ONNX path and the simulator
# exist, the furthest stage that works is: parse and verify a wavelet program
# against the machine model, and encode every instruction into its 20-bit
# machine word (decoded back and checked).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${WEFT_BUILD_DIR:-$root/build}"
bash "$root/scripts/build.sh" weft-opt weft-translate
example="$root/examples/vector-add.mlir"
echo "== verify $example against the machine model"
"$build/bin/weft-opt" "$example" > /dev/null
echo "   ok"
echo "== encode its instructions (slot: word  assembly)"
"$build/bin/weft-translate" --wavelet-to-listing "$example"
