//===- WaveletDialect.cpp - The wavelet dialect ----------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "wavelet/WaveletDialect.h"
#include "wavelet/WaveletOps.h"

using namespace mlir;
using namespace weft::wavelet;

#include "wavelet/WaveletDialect.cpp.inc"

void WaveletDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "wavelet/WaveletOps.cpp.inc"
      >();
}
