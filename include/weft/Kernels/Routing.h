//===- Routing.h - Per-PE routes of the mapping schemes ---------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). The router settings every stream and internal channel
// of the mapping schemes of docs/execution-model.md needs, PE by PE: one
// place that --weft-route-streams materializes as fabric.route /
// fabric.switch ops, that color allocation reads (which PEs a stream passes)
// and that the lowering emits as wavelet.route ops.
//
// A route lists every PE a stream's wavelets visit, the PE that takes them
// off the fabric (to its ramp) included, so two routes conflict exactly when
// they share a PE.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_ROUTING_H
#define WEFT_KERNELS_ROUTING_H

#include "weft/Kernels/ConvMapping.h"
#include "weft/Kernels/DenseMapping.h"
#include "weft/Machine/Target.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace weft::conversion {

/// Router ports as a mask over weft::machine::Dir.
using machine::DirSet;

/// One setting of a router that cycles through positions
/// (docs/architecture.md, "Positions"): `count` wavelets enter through `in`
/// and leave through `out`, then the next position.
struct SwitchPosition {
  DirSet in = 0, out = 0;
  int64_t count = 0;
  bool operator==(const SwitchPosition &o) const {
    return in == o.in && out == o.out && count == o.count;
  }
};

/// One PE's setting for a route: wavelets entering through any port of `in`
/// leave through every port of `out`; with `positions`, `in` and `out` are
/// their unions and the router cycles through them.
struct Switch {
  DirSet in = 0, out = 0;
  std::vector<SwitchPosition> positions;
  bool operator==(const Switch &o) const {
    return in == o.in && out == o.out && positions == o.positions;
  }
};

/// The switches of one route by PE (x, y), ordered by x then y. Adding a
/// second setting at a PE merges the port sets: a plain one joins every
/// position (the wavelets that pass also go where it sends them).
class RoutePlan {
public:
  void add(int64_t x, int64_t y, DirSet in, DirSet out);
  /// A cycle of positions at PE (x, y) (positions of zero count are
  /// dropped; one left is a plain setting). A PE has at most one cycle.
  void addPositions(int64_t x, int64_t y,
                    const std::vector<SwitchPosition> &positions);
  /// Appends `other`'s switches (merged where both have the PE).
  void append(const RoutePlan &other);
  bool empty() const { return switches.empty(); }
  const std::map<std::pair<int64_t, int64_t>, Switch> &get() const {
    return switches;
  }
  std::vector<std::pair<int64_t, int64_t>> pes() const;

private:
  std::map<std::pair<int64_t, int64_t>, Switch> switches;
};

/// Router settings by PE (x, y) and color: what the fabric.route ops of a
/// routed program give every PE, and what the emitters write.
using RouteTable =
    std::map<std::pair<int64_t, int64_t>, std::map<int64_t, Switch>>;

/// Adds `plan`'s switches to `table` on `color`.
void addRoute(RouteTable &table, const RoutePlan &plan, int64_t color);

/// Whether PEs (x, ya) and (x, yb) have the same router settings in
/// `table`: the emitters share one program between PEs of equal roles only
/// where this holds too (a stream relayed past a kernel changes the
/// settings of the rows it passes).
bool sameSwitches(const RouteTable &table, int64_t x, int64_t ya, int64_t yb);

//===----------------------------------------------------------------------===//
// Dense layer (docs/execution-model.md, "Dense layer")
//===----------------------------------------------------------------------===//

/// The receiving end of the row-chunk stream into a dense layer's
/// redistribution: row r's chunk is relayed east to the diagonal PE
/// (x0 + r, y0 + r), which takes it off the fabric. With m.merge = k > 1
/// (a convolution; docs/execution-model.md, "Merged lanes") lane jk + i is
/// relayed east to column j and north to its turn PE (x0 + j, y0 + jk):
/// lane jk + i's PE there cycles per pixel through [west x laneChunk, south
/// x (k - 1 - i) laneChunk], so the turn PE receives lane jk's channels of
/// a pixel, then jk + 1's, ...: the column's k x laneChunk channels in
/// order. `laneChunk` (the channels of one lane) only matters when k > 1.
RoutePlan denseRowsToDiagonal(const DenseMapping &m, int64_t laneChunk = 1);

/// The redistribution's output: the turn PE of column c (row
/// m.turnRow(c)) multicasts chunk c north and south to every row of column
/// c (to the ramps of rows < m.rows).
RoutePlan denseColumns(const DenseMapping &m);

/// The partial sums moving east along the rows: the hops leaving column c
/// where (c + 1) % 2 == parity (alternating parities let a PE receive and
/// send on different colors).
RoutePlan densePartialSums(const DenseMapping &m, int parity);

/// The sending end of a dense layer's output: the last column's PEs send
/// their results east.
RoutePlan denseResults(const DenseMapping &m);

//===----------------------------------------------------------------------===//
// A trained dense layer's backward channels (docs/training.md, "Colors added
// per trained dense layer"); only merge = 1, tiles = 1.
//===----------------------------------------------------------------------===//

/// The receiving end of the gradient stream into the layer: row r's chunk
/// of dL/dy arrives from the east at the last column, PE (x0 + S - 1, y0 + r).
RoutePlan denseGradientIn(const DenseMapping &m);

/// dL/dz chunk r, multicast west along row r from the last column to the
/// CEs of columns 0 .. S - 2 (none when S = 1).
RoutePlan denseDeltaRows(const DenseMapping &m);

/// The reduction of the partial input gradients of column c toward its
/// diagonal PE (c, c) on the two colors U[0], U[1] (`parity` picks one):
/// row r above the diagonal sends its running sum south on U[r % 2], row r
/// below it north on U[(r + 1) % 2], so the diagonal receives from the north
/// on U[(c + 1) % 2] and from the south on U[c % 2]. A diagonal below the
/// rectangle (c >= rows) receives row rows - 1's sum, passed south by the
/// routers of the rows between.
RoutePlan denseGradientReduce(const DenseMapping &m, int parity);

/// The sending end of the gradient stream out of the layer: the diagonal PE
/// (c, c) sends dL/dx chunk c west along row c, out of the rectangle's west
/// side, where the producer's chunk c came from.
RoutePlan denseGradientOut(const DenseMapping &m);

//===----------------------------------------------------------------------===//
// Convolution cut into bands of output columns (docs/execution-model.md,
// "Bands of output columns"): m.tiles copies of the S x R rectangle side by
// side; denseColumns and densePartialSums cover every band.
//===----------------------------------------------------------------------===//

/// The receiving end of the row-chunk stream into a convolution: row r is
/// relayed east through the bands; band t's diagonal PE takes its input
/// columns of every input row off the fabric and passes on what the bands
/// east of it read (positions counting `lk` wavelets a pixel). Unbanded,
/// denseRowsToDiagonal.
/// With `passThrough` the whole row also goes on east of the rectangle (the
/// stream has a reader further east on the same lanes): every band's
/// diagonal then sees every column, passes it east, and takes a copy of its
/// own columns [in0, in1) off the lane.
RoutePlan convRowsToDiagonals(const ConvShape &s, const DenseMapping &m,
                              bool passThrough = false);

/// The sending end: band t's last column sends its output columns of every
/// row; from band 1 on, its router first passes the row's columns of the
/// bands west of it, then its own (positions counting `lm` wavelets a
/// pixel), so every row leaves in order on one lane. Unbanded,
/// denseResults.
RoutePlan convResults(const ConvShape &s, const DenseMapping &m);

/// A window column kernel (a depthwise or grouped convolution, `s`, or a
/// max pool, its window()) of `rows` rows at column x cut into `tiles`
/// bands of output columns, band t on column x + t
/// (docs/execution-model.md, "Depthwise convolution", "Pooling"): on every row, band
/// t's PE takes its input columns off the lane (positions counting
/// cin / rows wavelets a pixel) and passes on what the bands east of it
/// read, or with `passThrough` (a reader further east) every column;
/// tiles = 1 is columnInputs.
RoutePlan windowBandInputs(const ConvShape &s, int64_t x, int64_t rows,
                              int64_t tiles, bool passThrough = false);

/// Its sending end: band t's PE sends its output columns of every row;
/// from band 1 on its router first passes the row's columns of the bands
/// west of it, then its own, so every row leaves in order on one lane;
/// tiles = 1 is columnResults.
RoutePlan windowBandResults(const ConvShape &s, int64_t x, int64_t rows,
                               int64_t tiles);

//===----------------------------------------------------------------------===//
// Column kernels, host output
//===----------------------------------------------------------------------===//

/// A column kernel at column x, rows [y0, y0 + rows): chunks in from the
/// west, results out to the east.
RoutePlan columnInputs(int64_t x, int64_t y0, int64_t rows);
RoutePlan columnResults(int64_t x, int64_t y0, int64_t rows);

/// The three channels of a column all-reduce (softmax over rows > 1):
/// channel 0 and 1 carry the partial results north (sent by rows of that
/// parity), channel 2 multicasts row 0's totals south.
RoutePlan columnReduce(int64_t x, int64_t y0, int64_t rows, int channel);

/// A trained column kernel's backward ends (docs/training.md): the
/// gradient of its result arrives from the east, the gradient of its input
/// leaves to the west, on every row.
RoutePlan columnGradientIn(int64_t x, int64_t y0, int64_t rows);
RoutePlan columnGradientOut(int64_t x, int64_t y0, int64_t rows);

/// The labels of the loss column at x: from the east edge (column
/// gridWidth - 1) west along row y0, then multicast down the column's
/// rows to every CE.
RoutePlan columnLabels(int64_t x, int64_t gridWidth, int64_t y0,
                       int64_t rows);

/// Relays from column x0 to the east edge (columns [x0, gridWidth)) on rows
/// [0, rows): the receiving end of a host output on the east edge.
RoutePlan relayEast(int64_t x0, int64_t gridWidth, int64_t rows);

//===----------------------------------------------------------------------===//
// Kernel channels
//===----------------------------------------------------------------------===//

/// The names of a kernel's internal routes (`fabric.route @k channel "..."`),
/// which --weft-route-streams creates and the lowerings read the colors of:
/// a dense kernel's partial sums by parity (densePartialSums), a trained
/// one's delta rows (denseDeltaRows) and input-gradient reductions by parity
/// (denseGradientReduce), a column all-reduce's three (columnReduce), and
/// the loss kernel's labels (columnLabels).
inline constexpr const char *kPartialSumChannels[2] = {"psum_even",
                                                       "psum_odd"};
inline constexpr const char *kDeltaChannel = "delta";
inline constexpr const char *kGradientReduceChannels[2] = {
    "grad_reduce_even", "grad_reduce_odd"};
inline constexpr const char *kColumnReduceChannels[3] = {
    "reduce_even", "reduce_odd", "broadcast"};
inline constexpr const char *kLabelsChannel = "labels";

} // namespace weft::conversion

#endif // WEFT_KERNELS_ROUTING_H
