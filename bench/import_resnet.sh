#!/usr/bin/env bash
# Times `weft-translate --import-onnx` on torchvision ResNet-18 and ResNet-50
# (random weights, exported with python3-torch; BN kept as separate nodes with
# do_constant_folding=False). Prints the median of 5 runs per model, the
# weight bytes and the time per 100 MB of weights. The IR is printed with
# blobs elided (printing 100 MB as hex is a separate cost, not import).
#   bench/import_resnet.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-${WEFT_BUILD_DIR:-$root/build}}"
tool="$build/bin/weft-translate"
out="$build/bench-models"
mkdir -p "$out"
/usr/bin/python3 - "$out" <<'PY'
import os, sys
import torch, torchvision
out = sys.argv[1]
torch.manual_seed(0)
for name in ("resnet18", "resnet50"):
    path = os.path.join(out, name + ".onnx")
    if os.path.exists(path):
        continue
    model = getattr(torchvision.models, name)().eval()
    torch.onnx.export(model, torch.randn(1, 3, 224, 224), path, opset_version=13,
                      do_constant_folding=False, input_names=["input"],
                      output_names=["logits"])
PY
for name in resnet18 resnet50; do
  model="$out/$name.onnx"
  bytes=$(stat -c %s "$model")
  times=()
  for i in 1 2 3 4 5; do
    start=$(date +%s.%N)
    "$tool" --import-onnx "$model" --mlir-elide-resource-strings-if-larger=1 -o /dev/null
    end=$(date +%s.%N)
    times+=("$(echo "$end - $start" | bc -l)")
  done
  median=$(printf '%s\n' "${times[@]}" | sort -g | sed -n 3p)
  rss=$( { /usr/bin/time -f '%M' "$tool" --import-onnx "$model" --mlir-elide-resource-strings-if-larger=1 -o /dev/null; } 2>&1 | tail -1)
  printf '%s: %d bytes, import median %.3f s (of 5), %.3f s per 100 MB, peak RSS %d KiB\n' \
    "$name" "$bytes" "$median" "$(echo "$median * 100000000 / $bytes" | bc -l)" "$rss"
done
