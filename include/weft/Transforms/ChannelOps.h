//===- ChannelOps.h - Ops that work channel by channel ----------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Which linalg ops on a feature map [N, C, spatial...] compute each output
// channel from the same input channel alone: what --weft-split-concat-products
// moves below a concat and --weft-resolve-channel-moves runs once per channel
// range. One definition for both.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TRANSFORMS_CHANNELOPS_H
#define WEFT_TRANSFORMS_CHANNELOPS_H

#include "mlir/IR/Operation.h"

namespace weft {

/// Whether `op` is a linalg op that works channel by channel on its input 0:
/// a max or sum pooling, a depthwise convolution, or an elementwise generic of
/// that one input (identity maps, no index, not reading its init). `weight` is
/// set to the operand cut along the channels with it (a depthwise
/// convolution's [C, k...]: 1), else -1. The op's tensor semantics and result
/// count are the caller's to check.
bool isChannelwiseLinalgOp(mlir::Operation *op, int &weight);

} // namespace weft

#endif // WEFT_TRANSFORMS_CHANNELOPS_H
