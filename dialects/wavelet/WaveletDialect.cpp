//===- WaveletDialect.cpp - The wavelet dialect ----------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "wavelet/WaveletDialect.h"
#include "wavelet/WaveletOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace weft::wavelet;

#include "wavelet/WaveletDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "wavelet/WaveletAttrs.cpp.inc"

void WaveletDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "wavelet/WaveletAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "wavelet/WaveletOps.cpp.inc"
      >();
}
