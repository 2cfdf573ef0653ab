#!/usr/bin/env bash
# Builds weft and runs every test (lit + FileCheck, gtest) under ctest, then
# the sanitizer pass (scripts/test-sanitize.sh: the same tests on an ASan +
# UBSan build in ./build-sanitize; docs/testing.md). Prints the build times
# and ends with the sanitizer pass's ctest summary.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${WEFT_BUILD_DIR:-$root/build}"
start=$(date +%s)
bash "$root/scripts/build.sh" all
end=$(date +%s)
echo "weft: build took $((end - start)) s"
(cd "$build" && ctest --output-on-failure -j "${WEFT_JOBS:-2}")
echo "weft: tests took $(( $(date +%s) - end )) s"
bash "$root/scripts/test-sanitize.sh"
