#!/usr/bin/env bash
# Configures (once) and builds weft into ./build with Ninja, ccache and the
# shared libMLIR.so. Usage: scripts/build.sh [ninja targets...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${WEFT_BUILD_DIR:-$root/build}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
    -DPython3_EXECUTABLE=/usr/bin/python3
fi
cmake --build "$build" -j "${WEFT_JOBS:-2}" -- "$@"
