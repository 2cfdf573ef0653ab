#!/usr/bin/env bash
# The sanitizer pass (issue 15, docs/testing.md): configures (once) and builds
# weft with -DWEFT_SANITIZE=address,undefined into ./build-sanitize (Ninja,
# ccache, g++), then runs its ctest entries there: the gtest unit tests, the
# lit tests (test/e2e included, whose weftc and weft-sim are this build's),
# the conformance runs and the MPI runs.
# Any ASan, UBSan or LeakSanitizer report fails the test that hit it.
# Prints the build and test times.
# Usage: scripts/test-sanitize.sh [ctest options...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${WEFT_SANITIZE_BUILD_DIR:-$root/build-sanitize}"

# halt_on_error and print_stacktrace: the first report ends the process with
# its stack. detect_container_overflow=0: libstdc++ and libLLVM are not
# instrumented, and a std::vector grown in one and read in the other gives
# false container-overflow reports (the same setting as
# scripts/fuzz-campaign.sh). allow_user_poisoning=0: LLVM's allocator
# headers (BumpPtrAllocator, Recycler) poison and unpoison memory by hand in
# a file built with ASan, but the uninstrumented libMLIR.so hands out pieces
# of the same slabs without unpoisoning them, so attributes and operations
# built through both read as use-after-poison (every dialect and conversion
# lit test, before this option); weft itself poisons nothing by hand. Leaks
# stay on. gtest's test discovery runs the instrumented test binaries at
# build time, so the build sees these settings too.
export ASAN_OPTIONS="halt_on_error=1:print_stacktrace=1:detect_container_overflow=0:check_initialization_order=1:strict_init_order=1:allow_user_poisoning=0${ASAN_OPTIONS_EXTRA:+:$ASAN_OPTIONS_EXTRA}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# The two torchvision e2e tests (ResNet-18 and MobileNetV2 at 64x64) take
# 400 s each under ASan and run no code path the smaller e2e networks
# (basic and bottleneck blocks, inverted residuals, bands, merges, joins)
# do not; the normal pass runs them. LIT_FILTER_OUT is lit's own exclusion.
export LIT_FILTER_OUT="${LIT_FILTER_OUT:-e2e/torchvision-}"
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-22/bin/llvm-symbolizer}"

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
    -DPython3_EXECUTABLE=/usr/bin/python3 \
    -DWEFT_SANITIZE=address,undefined
fi
start=$(date +%s)
cmake --build "$build" -j "${WEFT_JOBS:-2}" -- all
end=$(date +%s)
echo "weft-sanitize: build took $((end - start)) s"
cd "$build"
ctest --output-on-failure -j "${WEFT_JOBS:-2}" "$@"
echo "weft-sanitize: tests took $(( $(date +%s) - end )) s"
