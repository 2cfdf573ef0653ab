//===- ColumnOps.cpp - The column kernels' ops and their properties -------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Kernels/ColumnKernel.h"

namespace weft::conversion {

const char *columnOpName(ColumnOp op) {
  switch (op) {
  case ColumnOp::Relu:
    return "Relu";
  case ColumnOp::Sigmoid:
    return "Sigmoid";
  case ColumnOp::Tanh:
    return "Tanh";
  case ColumnOp::Softmax:
    return "Softmax";
  case ColumnOp::LogSoftmax:
    return "LogSoftmax";
  case ColumnOp::Copy:
    return "Copy";
  case ColumnOp::Abs:
    return "Abs";
  case ColumnOp::Neg:
    return "Neg";
  case ColumnOp::Exp:
    return "Exp";
  case ColumnOp::Log:
    return "Log";
  case ColumnOp::Sqrt:
    return "Sqrt";
  case ColumnOp::Reciprocal:
    return "Reciprocal";
  case ColumnOp::LeakyRelu:
    return "LeakyRelu";
  case ColumnOp::ThresholdedRelu:
    return "ThresholdedRelu";
  case ColumnOp::Elu:
    return "Elu";
  case ColumnOp::Selu:
    return "Selu";
  case ColumnOp::Softplus:
    return "Softplus";
  case ColumnOp::Softsign:
    return "Softsign";
  case ColumnOp::HardSigmoid:
    return "HardSigmoid";
  case ColumnOp::HardSwish:
    return "HardSwish";
  case ColumnOp::Clip:
    return "Clip";
  case ColumnOp::AddScalar:
    return "AddScalar";
  case ColumnOp::SubScalar:
    return "SubScalar";
  case ColumnOp::ScalarSub:
    return "ScalarSub";
  case ColumnOp::MulScalar:
    return "MulScalar";
  case ColumnOp::DivScalar:
    return "DivScalar";
  case ColumnOp::Sign:
    return "Sign";
  case ColumnOp::Floor:
    return "Floor";
  case ColumnOp::Ceil:
    return "Ceil";
  case ColumnOp::Round:
    return "Round";
  case ColumnOp::Sin:
    return "Sin";
  case ColumnOp::Cos:
    return "Cos";
  case ColumnOp::Erf:
    return "Erf";
  case ColumnOp::Celu:
    return "Celu";
  case ColumnOp::Square:
    return "Square";
  case ColumnOp::PowScalar:
    return "PowScalar";
  case ColumnOp::AddTensor:
    return "AddTensor";
  case ColumnOp::SubTensor:
    return "SubTensor";
  case ColumnOp::TensorSub:
    return "TensorSub";
  case ColumnOp::MulTensor:
    return "MulTensor";
  case ColumnOp::DivTensor:
    return "DivTensor";
  case ColumnOp::MaxTensor:
    return "MaxTensor";
  case ColumnOp::MinTensor:
    return "MinTensor";
  case ColumnOp::PRelu:
    return "PRelu";
  case ColumnOp::AxisSoftmax:
    return "AxisSoftmax";
  case ColumnOp::AxisLogSoftmax:
    return "AxisLogSoftmax";
  case ColumnOp::Expression:
    return "Expression";
  }
  return "?";
}

std::optional<ColumnOp> parseColumnOp(std::string_view name) {
  for (int i = 0; i <= int(ColumnOp::Expression); ++i)
    if (name == columnOpName(ColumnOp(i)))
      return ColumnOp(i);
  return std::nullopt;
}

int64_t columnParamCount(ColumnOp op) {
  switch (op) {
  case ColumnOp::LeakyRelu:
  case ColumnOp::ThresholdedRelu:
  case ColumnOp::Elu:
  case ColumnOp::AddScalar:
  case ColumnOp::SubScalar:
  case ColumnOp::ScalarSub:
  case ColumnOp::MulScalar:
  case ColumnOp::DivScalar:
  case ColumnOp::Celu:
  case ColumnOp::PowScalar:
    return 1;
  case ColumnOp::Selu:
  case ColumnOp::HardSigmoid:
  case ColumnOp::HardSwish:
  case ColumnOp::Clip:
  case ColumnOp::AxisSoftmax:
  case ColumnOp::AxisLogSoftmax:
    return 2;
  default:
    return 0;
  }
}

bool columnTakesTensor(ColumnOp op) {
  switch (op) {
  case ColumnOp::AddTensor:
  case ColumnOp::SubTensor:
  case ColumnOp::TensorSub:
  case ColumnOp::MulTensor:
  case ColumnOp::DivTensor:
  case ColumnOp::MaxTensor:
  case ColumnOp::MinTensor:
  case ColumnOp::PRelu:
    return true;
  default:
    return false;
  }
}

bool isSoftmax(ColumnOp op) {
  return op == ColumnOp::Softmax || op == ColumnOp::LogSoftmax;
}

bool isAxisSoftmax(ColumnOp op) {
  return op == ColumnOp::AxisSoftmax || op == ColumnOp::AxisLogSoftmax;
}

std::pair<int64_t, int64_t> axisGroups(const std::vector<float> &p) {
  if (p.size() != 2 || !(p[0] >= 1) || !(p[1] >= 1))
    return {1, 1};
  return {int64_t(p[0]), int64_t(p[1])};
}

int64_t columnChunkMultiple(ColumnOp op, const std::vector<float> &params) {
  if (!isAxisSoftmax(op))
    return 1;
  auto [g, i] = axisGroups(params);
  return g * i;
}

bool columnRowsAllowed(ColumnOp op, const std::vector<float> &params, int64_t n,
                       int64_t rows) {
  if (rows < 1 || n < 1 || chunkSize(n, rows, rows - 1) < 1)
    return false;
  return chunkSize(n, rows, 0) % columnChunkMultiple(op, params) == 0;
}

int64_t internalColors(ColumnOp op) { return isSoftmax(op) ? 3 : 0; }

int64_t columnBuffers(ColumnOp op) {
  switch (op) {
  case ColumnOp::Relu:
  case ColumnOp::Copy:
  case ColumnOp::Abs:
  case ColumnOp::Neg:
  case ColumnOp::Exp:
  case ColumnOp::Log:
  case ColumnOp::Sqrt:
  case ColumnOp::Reciprocal:
  case ColumnOp::AddScalar:
  case ColumnOp::SubScalar:
  case ColumnOp::MulScalar:
  case ColumnOp::DivScalar:
    return 0;
  case ColumnOp::Tanh:
  case ColumnOp::LogSoftmax:
  case ColumnOp::AxisLogSoftmax:
  case ColumnOp::ThresholdedRelu:
  case ColumnOp::Softsign:
  case ColumnOp::HardSwish:
    return 2;
  case ColumnOp::Celu:
  case ColumnOp::PowScalar:
    return 2;
  case ColumnOp::LeakyRelu:
  case ColumnOp::Elu:
  case ColumnOp::Selu:
  case ColumnOp::Sin:
  case ColumnOp::Cos:
    return 3;
  case ColumnOp::Floor:
  case ColumnOp::Ceil:
  case ColumnOp::Round:
    return 4;
  case ColumnOp::Erf:
    return 5;
  // The constant tensor's chunk is the last buffer.
  case ColumnOp::TensorSub:
    return 2;
  case ColumnOp::PRelu:
    return 4;
  case ColumnOp::Expression:
    return kExpressionBuffers;
  default:
    return 1;
  }
}

} // namespace weft::conversion
