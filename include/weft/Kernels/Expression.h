//===- Expression.h - Fused elementwise bodies as programs ------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). An Expression column kernel computes a fused
// elementwise body of x and scalar constants that no single column op
// matches (SiLU, GELU, Mish...; docs/execution-model.md, "Expressions").
// Its params are a program of nodes, four floats each; the compiler here
// turns the program into vector steps (weft/Kernels/ColumnSequences.h) over
// at most kExpressionBuffers buffers, and the builder is how the matcher
// writes a program.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_EXPRESSION_H
#define WEFT_KERNELS_EXPRESSION_H

#include "weft/Kernels/ColumnSequences.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace weft::conversion::column {

/// The kind of a node of an Expression program. Node 0 is x; node i >= 1
/// is params[4 (i - 1) ..] = {kind, a, b, v}, a and b node indices.
enum class ExprKind : int32_t {
  Const = 0,  ///< the constant v
  Add = 1,    ///< a + b
  Sub = 2,    ///< a - b
  Mul = 3,    ///< a b
  Div = 4,    ///< a / b
  Max = 5,    ///< max(a, b)
  Min = 6,    ///< min(a, b)
  Lt = 7,     ///< a < b (a condition: only selects read it)
  Le = 8,     ///< a <= b, computed as !(b < a)
  Select = 9, ///< a ? b : node v
  Unary = 10, ///< the unary column op b of a, its constant v (Pow)
  Tanh = 11,  ///< tanh(a), as the Tanh kernel: 1 - 2 / (1 + exp(2a))
};
inline constexpr int64_t kExprFields = 4;

struct ExprNode {
  ExprKind kind = ExprKind::Const;
  int32_t a = 0, b = 0, c = 0; // c: Select's false arm
  float v = 0;
};

/// The nodes of an Expression program (node 0, x, included).
std::vector<ExprNode> exprNodes(const std::vector<float> &p);

/// An Expression program compiled: its steps (in is read once, out written
/// once, by the last step), its constants (registerConstants) and the
/// buffers it uses; `error` says why it cannot be, if it cannot.
struct ExprCode {
  std::vector<Step> steps;
  std::vector<float> consts;
  int64_t buffers = 0;
  std::string error;
};
ExprCode compileExpression(const std::vector<float> &params);

/// Writes an Expression program node by node, in the order of the body it
/// comes from; finish() keeps what the result reads.
class ExpressionBuilder {
public:
  /// Appends the node {kind, a, b, v} and returns its index.
  int32_t add(ExprKind kind, int32_t a, int32_t b, float v);
  /// The node of the constant `v`, one per distinct value (bit pattern).
  int32_t constant(float v);
  /// The program computing node `y` (>= 1): the nodes after it and those it
  /// does not read are dropped, the others renumbered in order. Nothing,
  /// with a sentence in `why`, when it does not fit a PE (checkExpression).
  std::optional<std::vector<float>> finish(int32_t y, std::string &why) const;

private:
  std::vector<float> prog;
  std::map<uint32_t, int32_t> consts;
  int32_t count = 1;
};

} // namespace weft::conversion::column

#endif // WEFT_KERNELS_EXPRESSION_H
