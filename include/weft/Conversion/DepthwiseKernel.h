//===- DepthwiseKernel.h - Grouped convolutions to wavelet ops -*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A placed depthwise kernel (docs/execution-model.md, "Depthwise
// convolution"): a grouped convolution (depthwise or not) on one column x
// of `rows` rows from row 0, row r holding groups [r G/R, (r + 1) G/R):
// it receives their input channels, a chunk of the feature-map stream on
// `inColor` from the west, and sends their output channels east on
// `outColor`. The schedule, cost model and memory map are the kernel
// library's (weft/Kernels/DepthwiseMapping.h).
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_DEPTHWISEKERNEL_H
#define WEFT_CONVERSION_DEPTHWISEKERNEL_H

#include "weft/Kernels/DepthwiseMapping.h"
#include "weft/Kernels/Routing.h"

#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

#include <vector>

namespace weft::conversion {

struct DepthwiseKernel {
  ConvShape shape;
  /// The weights, OIHW with I = cin / groups (ONNX's layout), and the
  /// bias (cout values, or empty).
  std::vector<float> weights, bias;
  int64_t x = 0, rows = 1;
  /// Bands of output columns (convTiles), band t on column x + t, each
  /// running the program of its band's convolution.
  int64_t tiles = 1;
  int64_t inColor = 1, outColor = 2;
  /// Mixed: fp16 weights and line buffer, `ff2h` receives and `fmachs`
  /// (docs/execution-model.md, "Depthwise convolution").
  Precision precision = Precision::FP32;
};

/// Emits the kernel's wavelet.pe / wavelet.pe_group ops at `b`'s insertion
/// point (inside a wavelet.program), named after `name`, with the router
/// settings `routes` gives every PE. A mapping the PEs cannot run
/// (depthwiseMappingProblem), weights or bias of the wrong size, or a
/// column off the fabric fail with a diagnostic at `loc`.
mlir::LogicalResult emitDepthwiseKernel(mlir::OpBuilder &b, mlir::Location loc,
                                        const DepthwiseKernel &k,
                                        llvm::StringRef name,
                                        const RouteTable &routes);

} // namespace weft::conversion

#endif // WEFT_CONVERSION_DEPTHWISEKERNEL_H
