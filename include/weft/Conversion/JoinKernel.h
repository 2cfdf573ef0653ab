//===- JoinKernel.h - Emitting the join kernel ------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The join kernel's emitter (docs/execution-model.md, "Join kernels"); its
// plan, cost model and memory bound are in weft/Kernels/JoinKernel.h.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_CONVERSION_JOINKERNEL_H
#define WEFT_CONVERSION_JOINKERNEL_H

#include "weft/Kernels/JoinKernel.h"
#include "weft/Kernels/Routing.h"

#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

namespace weft::conversion {

/// Emits the kernel's wavelet.pe / wavelet.pe_group ops at `b`'s insertion
/// point (inside a wavelet.program), PEs with equal chunk length sharing one
/// group, named after `name`, with the layer attribute `layer`. Every PE
/// gets the router settings `routes` gives it (a routed program's
/// fabric.route switches: both inputs from the west to the ramp, the output
/// from the ramp to the east); without `routes`, Routing.h's columnInputs
/// for colorA and colorB and columnResults for outColor. An empty chunk, a
/// FIFO of no chunk or one that does not fit, a chunk longer than a DSD
/// describes, bad colors or a column off the fabric fail with a diagnostic
/// at `loc`.
mlir::LogicalResult emitJoinKernel(mlir::OpBuilder &b, mlir::Location loc,
                                   const JoinKernel &k, llvm::StringRef name,
                                   llvm::StringRef layer,
                                   const RouteTable *routes = nullptr);

/// The training program of docs/training.md ("Residual blocks") for the
/// Add that ends a residual block (`k.op` Add, no broadcast): each sample
/// takes the rows of a (0) and b (1) in `order` (each input's rows in
/// turn; both inputs have the same number of rows, which divide every
/// chunk); dL/dy arrives on `gradIn`, and dL/da and dL/db (the same, after
/// the ReLU's mask) leave west on `gradOut[0]` and `gradOut[1]` (-1: that
/// input's producer is not trained and takes none).
mlir::LogicalResult emitTrainedJoin(mlir::OpBuilder &b, mlir::Location loc,
                                    const JoinKernel &k,
                                    llvm::ArrayRef<int> order, int64_t gradIn,
                                    const int64_t gradOut[2],
                                    llvm::StringRef name,
                                    const RouteTable &routes);

} // namespace weft::conversion

#endif // WEFT_CONVERSION_JOINKERNEL_H
