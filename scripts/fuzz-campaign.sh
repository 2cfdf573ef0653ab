#!/usr/bin/env bash
# A long fuzzing campaign (issue 15, docs/performance.md "Fuzzing campaigns"):
# runs one of the three libFuzzer targets from the seed corpus its ctest uses
# (plus test/fuzz-import/regressions/ for the importer), with the ctest's
# limits except a 10 s per-input timeout and a 4 GiB RSS limit. Not run in CI.
#
# Usage: scripts/fuzz-campaign.sh wfb|sim|import WORKDIR [RUNS [SECONDS]]
#   BUILD (default ./build) must have built wfb-read-fuzzer (or
#   wfb-sim-fuzzer) and wfb-fuzz-seed-corpus, or onnx-import-fuzzer and
#   onnx-import-fuzz-seeds.
#   WORKDIR gets corpus/ (grown by the run), art/ (crash, leak, timeout and
#   OOM inputs) and log. RUNS defaults to 1000000, SECONDS (a time cap) to 0,
#   none. Exits with libFuzzer's status: 0 means no finding.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${BUILD:-$root/build}" && pwd)"
which="${1:-}" work="${2:-}" runs="${3:-1000000}" secs="${4:-0}"
case "$which" in
  wfb|sim|import) [ -n "$work" ] ;;
  *) false ;;
esac || { echo "usage: $0 wfb|sim|import WORKDIR [RUNS [SECONDS]]" >&2; exit 2; }
mkdir -p "$work/corpus" "$work/art"
case "$which" in
  wfb)
    cp "$build"/test/fuzz/seeds/*.wfb "$work/corpus/"
    if [ -d "$root/test/fuzz/regressions" ]; then
      cp "$root"/test/fuzz/regressions/* "$work/corpus/"
    fi
    cmd=("$build/bin/wfb-read-fuzzer" -malloc_limit_mb=256 -max_len=16384)
    ;;
  sim)
    cp "$build"/test/fuzz/seeds/*.wfb "$root"/test/fuzz/regressions/*.wfb \
       "$work/corpus/"
    cmd=("$build/bin/wfb-sim-fuzzer" -malloc_limit_mb=512 -max_len=16384)
    ;;
  import)
    cp "$build"/test/fuzz-import/seeds/*.onnx \
       "$root"/test/fuzz-import/regressions/*.onnx "$work/corpus/"
    export ASAN_OPTIONS=detect_container_overflow=0:detect_leaks=0
    cmd=("$build/bin/onnx-import-fuzzer" -malloc_limit_mb=1024 -max_len=65536)
    ;;
esac
cd "$work"
nice -n 10 "${cmd[@]}" -seed=20261123 -runs="$runs" \
  -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix=art/ corpus 2>&1 | tee log
