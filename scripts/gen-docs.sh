#!/usr/bin/env bash
# Regenerates the op/attribute reference in docs/dialects/generated/ from the
# ODS files (mlir-tblgen), so the committed docs match the dialects.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${WEFT_BUILD_DIR:-$root/build}"
bash "$root/scripts/build.sh" mlir-doc
mkdir -p "$root/docs/dialects/generated"
cp "$build"/docs/dialects/*.md "$root/docs/dialects/generated/"
