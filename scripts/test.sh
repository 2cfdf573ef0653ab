#!/usr/bin/env bash
# Builds weft and runs every test (lit + FileCheck, gtest) under ctest.
# Prints the build time and ends with ctest's summary line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${WEFT_BUILD_DIR:-$root/build}"
start=$(date +%s)
bash "$root/scripts/build.sh" all
end=$(date +%s)
echo "weft: build took $((end - start)) s"
cd "$build"
ctest --output-on-failure -j "${WEFT_JOBS:-2}"
