//===- Chain.h - A placed chain of kernels, analysed ------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// What routing, color allocation and the lowering to wavelet programs need
// to know of a partitioned fabric.program: the chain host input -> kernels
// -> host output its streams describe (through the redistributions routing
// inserts), each kernel's scheme (a dense layer with its mapping, or a
// column kernel with its row chunks) and the checks that the placement and
// the layouts line up.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_CHAIN_H
#define WEFT_CONVERSION_CHAIN_H

#include "weft/Conversion/ColumnKernels.h"
#include "weft/Conversion/DenseLayer.h"

#include "fabric/FabricOps.h"

#include "mlir/Support/LLVM.h"

#include <vector>

namespace weft::conversion {

/// One kernel of the chain, analysed.
struct Stage {
  fabric::KernelOp kernel;
  /// The redistribution feeding the kernel, once routing has inserted it.
  fabric::RedistributeOp turn;
  bool dense = false;
  DenseLayer layer;    // dense
  DenseMapping m;      // dense
  ColumnKernel column; // column kernels (colors unset)
  int64_t x = 0, width = 1, height = 1;
  int64_t inRows = 1, outRows = 1; // row chunks received and sent
  int64_t inN = 0, outN = 0;       // elements per sample in and out
};

struct Chain {
  fabric::IoOp in, out;
  std::vector<Stage> stages;
  /// The first column east of the last kernel.
  int64_t endX = 0;
};

/// The chain of `program` with every kernel analysed and the placement
/// checked (kernels side by side from column 0, inside the fabric, each
/// receiving the row chunks its predecessor sends), or an error on the
/// offending op.
mlir::FailureOr<Chain> analyzeChain(fabric::ProgramOp program);

} // namespace weft::conversion

#endif // WEFT_CONVERSION_CHAIN_H
