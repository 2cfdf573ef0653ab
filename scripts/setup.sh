#!/usr/bin/env bash
# Installs every system package weft needs on Debian 12 (bookworm). Idempotent:
# packages already present are skipped by apt-get. Uses sudo when not root.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

PACKAGES=(
  # Toolchain and build.
  cmake ninja-build ccache g++ git
  # LLVM/MLIR 22 and their tools (FileCheck, lit, mlir-tblgen live here).
  llvm-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  # clang-22 and its runtime for libFuzzer and sanitizers.
  clang-22 libclang-rt-22-dev
  # ONNX and protobuf.
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx
  # Python for lit, scripts and model export (Debian's interpreter).
  python3 python3-numpy python3-dev
  # The `weft` Python package (bindings built by CMake into build/python).
  pybind11-dev
  # Exporting torchvision models for the import benchmark.
  python3-torch python3-torchvision
  # Unit tests and benchmarks.
  googletest libgtest-dev libbenchmark-dev
  # Measuring peak memory.
  time
  # Distributed simulation (weft-sim under mpirun; optional in CMake).
  libopenmpi-dev openmpi-bin
  # A real browser for the HTML report's test (headless; docs/report.md).
  chromium
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#PACKAGES[@]} packages present"
fi
