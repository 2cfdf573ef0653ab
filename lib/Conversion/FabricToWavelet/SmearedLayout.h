//===- SmearedLayout.h - Roles of a smeared layer's PEs (internal) -*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The PEs of a layer laid out like a dense layer (a dense layer or a
// convolution): S columns of input chunks by R rows of output chunks, input
// chunk c turning into column c at the diagonal PE (c, c), or with k lanes
// merged per column at its turn PE (c, ck). What each PE
// does there, and the runs of PEs of one column with equal roles and
// routes, which the emitters write as one wavelet.pe_group.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_CONVERSION_SMEAREDLAYOUT_H
#define WEFT_LIB_CONVERSION_SMEAREDLAYOUT_H

#include "weft/Kernels/Chunks.h"
#include "weft/Kernels/DenseMapping.h"
#include "weft/Kernels/Routing.h"
#include "weft/Machine/Target.h"

#include "WaveletBuilder.h"

#include <algorithm>

namespace weft::conversion {

/// The role of a PE in the layout; PEs with equal roles share code.
struct SmearedRole {
  int64_t column = 0;                     // c
  bool compute = false;                   // holds weights (row < rows)
  bool diagonal = false;                  // turns input chunk c into column c
  bool relayIn = false;                   // passes a row's input chunk east
  bool mergeIn = false;                   // passes a lane north to the turn
  bool hasColumn = false;                 // on column c's multicast
  machine::Dir columnIn = machine::Dir::Ramp; // where the multicast comes from
  bool north = false, south = false;      // the multicast continues north/south
  int64_t lm = 0;                         // outputs of its row chunk
  bool empty() const {
    return !compute && !diagonal && !relayIn && !mergeIn && !hasColumn;
  }
  bool operator==(const SmearedRole &o) const {
    return column == o.column && compute == o.compute &&
           diagonal == o.diagonal && relayIn == o.relayIn &&
           mergeIn == o.mergeIn &&
           hasColumn == o.hasColumn && columnIn == o.columnIn &&
           north == o.north && south == o.south && lm == o.lm;
  }
};

/// The role of PE (c, r) of a layer of M outputs under `m`.
inline SmearedRole smearedRole(const DenseMapping &m, int64_t M, int64_t c,
                               int64_t r) {
  SmearedRole role;
  role.column = c;
  role.compute = r < m.rows;
  // Lane r turns into column r / k at row (r / k) k (k = m.merge; the
  // diagonal when k = 1).
  const int64_t d = m.turnRow(c);
  role.diagonal = r == d;
  role.relayIn = r < m.lanes() && r / m.merge > c;
  role.mergeIn = d < r && r < d + m.merge;
  // Column c's multicast starts at the turn PE (c, d) and reaches rows
  // 0 .. rows-1; between a turn below the rectangle and its last row it
  // only passes north.
  role.hasColumn = r <= d || r < m.rows;
  role.columnIn = r == d   ? machine::Dir::Ramp
                  : r < d ? machine::Dir::South
                          : machine::Dir::North;
  role.north = r > 0 && r <= d;
  role.south = r >= d && r + 1 < m.rows;
  role.lm = role.compute ? chunkSize(M, m.rows, r) : 0;
  return role;
}

/// Calls emit(c, r0, r1, role) for every run [r0, r1) of PEs of one column
/// with the same role and router settings, skipping PEs with nothing to do.
template <typename F>
void forEachSmearedGroup(const DenseMapping &m, int64_t M,
                         const RouteTable &routes, F emit) {
  int64_t height = m.footprint();
  for (int64_t c = 0; c < m.smear; ++c) {
    int64_t r0 = 0;
    for (int64_t r = 1; r <= height; ++r) {
      if (r < height && smearedRole(m, M, c, r) == smearedRole(m, M, c, r0) &&
          sameSwitches(routes, m.x0 + c, m.y0 + r, m.y0 + r0))
        continue;
      SmearedRole role = smearedRole(m, M, c, r0);
      if (!role.empty())
        emit(c, r0, r, role);
      r0 = r;
    }
  }
}

/// Where PE (c, r) sits in its column's reduction of the gradient of the
/// layer's input (docs/training.md): the rows above the diagonal (the turn
/// PE) pass their sums south, those below it north, on the two parity
/// channels, and the diagonal sends the column's sum west.
enum class ReduceRole { None, Upper, Diagonal, Lower };

struct ReduceKey {
  ReduceRole reduce = ReduceRole::None;
  bool receives = false;      // from the north (upper) or the south (lower)
  bool receivesSouth = false; // the diagonal's second input
  int parity = 0;
  bool operator==(const ReduceKey &o) const {
    return reduce == o.reduce && receives == o.receives &&
           receivesSouth == o.receivesSouth && parity == o.parity;
  }
};

/// The reduction key of PE (c, r); None outside the rectangle's rows.
inline ReduceKey gradientReduceKey(const DenseMapping &m, int64_t c,
                                   int64_t r) {
  ReduceKey k;
  if (r >= m.rows)
    return k;
  const int64_t d = m.turnRow(c);
  k.parity = int(r % 2);
  if (r < d) {
    k.reduce = ReduceRole::Upper;
    k.receives = r > 0;
  } else if (r > d) {
    k.reduce = ReduceRole::Lower;
    k.receives = r + 1 < m.rows;
  } else {
    k.reduce = ReduceRole::Diagonal;
    k.receives = r > 0;
    k.receivesSouth = r + 1 < m.rows;
  }
  return k;
}

/// The column's reduction of the input gradient's partial sums in record
/// "dx" (docs/training.md): an upper or lower row adds what it receives
/// ("red_in") and passes the sum on ("red_out"); the diagonal adds the
/// north's into dx and sends dx plus the south's west ("red_north",
/// "red_south", "red_out"). With `sumBeforeSend` the diagonal adds both
/// into dx first and sends dx alone (a send on a microthread must read a
/// finished buffer). `vec` and `un` are DSR triples for the three- and
/// two-operand steps.
inline void emitGradientReduce(WaveletBuilder &w, const ReduceKey &key,
                               int64_t vec, int64_t un, bool sumBeforeSend) {
  using Opcode = WaveletBuilder::Opcode;
  switch (key.reduce) {
  case ReduceRole::Upper:
  case ReduceRole::Lower:
    if (key.receives)
      w.vecVia(vec, Opcode::FADD, "red_out", "dx", "red_in");
    else
      w.unVia(un, Opcode::MOV32, "red_out", "dx");
    return;
  case ReduceRole::Diagonal:
    if (key.receives)
      w.vecVia(vec, Opcode::FADD, "dx", "dx", "red_north");
    if (sumBeforeSend) {
      if (key.receivesSouth)
        w.vecVia(vec, Opcode::FADD, "dx", "dx", "red_south");
      w.unVia(un, Opcode::MOV32, "red_out", "dx");
    } else if (key.receivesSouth) {
      w.vecVia(vec, Opcode::FADD, "red_out", "dx", "red_south");
    } else {
      w.unVia(un, Opcode::MOV32, "red_out", "dx");
    }
    return;
  case ReduceRole::None:
    return;
  }
}

} // namespace weft::conversion

#endif // WEFT_LIB_CONVERSION_SMEAREDLAYOUT_H
