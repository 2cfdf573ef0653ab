//===- Binary.h - The .wfb PE task binary, in memory ------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A weft binary is everything the fabric needs at load time (the load-time
// state of docs/architecture.md §12) plus the host's I/O map. This header is
// the in-memory form that the emitter builds, the reader returns and the
// simulator loads; docs/binary-format.md gives the byte layout of the file.
//
// Sharing: PEs with the same role share one CodeImage (routes, code, shared
// data and descriptors, initial active/block bits). A Group places an image
// on a rectangle of PEs and gives each PE its own parameters (GPR values
// that are linear in the PE's position in the group) and its own slices of
// per-PE segments (weights). A single PE is a 1x1 group.
//
// No MLIR dependency: the simulator uses this library.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_BINARY_BINARY_H
#define WEFT_BINARY_BINARY_H

#include "weft/Machine/ISA.h"
#include "weft/Machine/Target.h"
#include "weft/Machine/Wavelet.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::binary {

/// One position of a positioned route (docs/architecture.md §4.4): the next
/// `count` wavelets of the color enter through a port of `inputs` and leave
/// through every port of `outputs`.
struct RoutePosition {
  machine::DirSet inputs = 0, outputs = 0;
  uint32_t count = 0;
  bool operator==(const RoutePosition &o) const {
    return inputs == o.inputs && outputs == o.outputs && count == o.count;
  }
};

/// The router setting of one color: wavelets entering through any port of
/// `inputs` leave through every port of `outputs`. A positioned route cycles
/// through its `positions` (2 to 4, in order, then from the first again);
/// `inputs` and `outputs` are then the unions of the positions' sets, so
/// every check on a route's ports holds for all its positions. No positions
/// is a static route.
struct Route {
  uint8_t color = 0;
  machine::DirSet inputs = 0;
  machine::DirSet outputs = 0;
  std::vector<RoutePosition> positions;
  bool operator==(const Route &o) const {
    return color == o.color && inputs == o.inputs && outputs == o.outputs &&
           positions == o.positions;
  }
};

/// Why the positions of `route` are not a valid positioned route, as a
/// phrase that names the position (counted from 1) and the values ("position
/// 2 takes [ramp], which the route's inputs [west] do not include"); empty
/// when the route has no positions or valid ones: 2 to 4 positions, each
/// with non-empty port sets inside the route's and a count of 1 to 2^24,
/// whose sets together are exactly the route's.
std::string checkPositions(const Route &route);

/// Initial memory contents: `words` 16-bit words from word address `address`.
struct Segment {
  uint32_t address = 0;
  std::vector<uint16_t> words;
  /// Optional symbol name (for disassembly back to the wavelet dialect).
  /// Machine-generated segments (code, descriptor records) have none.
  std::string name;
  /// Optional type of the value the words came from, as MLIR type text
  /// (e.g. "tensor<64xf32>"), so disassembly can print the value with its
  /// original element type and shape. The simulator ignores it.
  std::string type;
  bool operator==(const Segment &o) const {
    return address == o.address && words == o.words && name == o.name &&
           type == o.type;
  }
};

/// What a named range of a code image holds; lets --wfb-to-wavelet rebuild
/// the wavelet ops. The simulator ignores symbols.
enum class SymbolKind : uint8_t {
  /// A task: `address` is its first slot, `size` its slot count.
  Task = 0,
  /// A DSD record at word `address` (size 4).
  Dsd = 1,
  /// An XDSD record at word `address` (size 4).
  Xdsd = 2,
  /// A label inside a task: `address` is its slot.
  Label = 3,
};

struct Symbol {
  SymbolKind kind = SymbolKind::Task;
  std::string name;
  uint32_t address = 0;
  uint32_t size = 0;
  /// Tasks only: 0 data, 1 local, 2 control; and the task id/control index.
  uint8_t taskKind = 0;
  uint8_t taskId = 0;
  bool operator==(const Symbol &o) const {
    return kind == o.kind && name == o.name && address == o.address &&
           size == o.size && taskKind == o.taskKind && taskId == o.taskId;
  }
};

/// Code, routes and shared data of one PE role.
struct CodeImage {
  std::vector<Route> routes;
  /// Code (the task table at slot 0 and task bodies), descriptor records,
  /// stride words and shared data. Segments never overlap.
  std::vector<Segment> segments;
  /// Initial active and block bits, bit i for task id i.
  uint64_t active = 0;
  uint64_t blocked = 0;
  std::vector<Symbol> symbols;
  bool operator==(const CodeImage &o) const {
    return routes == o.routes && segments == o.segments &&
           active == o.active && blocked == o.blocked && symbols == o.symbols;
  }
};

/// A per-PE initial GPR value: GPR `gpr` of the PE at (gx, gy) inside its
/// group starts with (cx * gx + cy * gy + c0) mod 2^16.
struct Param {
  uint8_t gpr = 0;
  int32_t cx = 0, cy = 0, c0 = 0;
  uint16_t valueAt(uint32_t gx, uint32_t gy) const {
    return uint16_t(int64_t(cx) * gx + int64_t(cy) * gy + c0);
  }
  bool operator==(const Param &o) const {
    return gpr == o.gpr && cx == o.cx && cy == o.cy && c0 == o.c0;
  }
};

/// A segment with different contents on every PE of a group: the PE at
/// (gx, gy) gets words [(gy * width + gx) * wordsPerPE, +wordsPerPE).
struct PerPeSegment {
  uint32_t address = 0;
  uint32_t wordsPerPE = 0;
  std::vector<uint16_t> words;
  std::string name;
  /// As Segment::type, for the whole value (leading dimensions: the group's
  /// rows and columns).
  std::string type;
  bool operator==(const PerPeSegment &o) const {
    return address == o.address && wordsPerPE == o.wordsPerPE &&
           words == o.words && name == o.name && type == o.type;
  }
};

/// A rectangle of PEs running one code image.
struct Group {
  std::string name;
  uint32_t image = 0;
  uint32_t x = 0, y = 0, width = 1, height = 1;
  /// Index into Program::layers, or -1 when the PEs belong to no layer.
  int32_t layer = -1;
  /// Whether the group was a single `wavelet.pe` (disassembly detail).
  bool single = false;
  std::vector<Param> params;
  std::vector<PerPeSegment> perPe;
  bool contains(uint32_t px, uint32_t py) const {
    return px >= x && py >= y && px < x + width && py < y + height;
  }
  bool operator==(const Group &o) const {
    return name == o.name && image == o.image && x == o.x && y == o.y &&
           width == o.width && height == o.height && layer == o.layer &&
           single == o.single && params == o.params && perPe == o.perPe;
  }
};

/// The order in which an I/O stream carries a tensor's elements before they
/// are cut into row chunks (docs/architecture.md §5.2).
enum class IoOrder : uint8_t {
  /// Row-major element order.
  RowMajor = 0,
  /// Feature map: a tensor [1, C, spatial...] with P pixels (the product of
  /// the dims after dim 1) on R rows (R divides C, Lc = C / R). Chunk r
  /// holds channels [r*Lc, (r+1)*Lc) pixel by pixel: stream position
  /// r*Lc*P + p*Lc + cc carries element (channel r*Lc + cc, pixel p).
  FeatureMap = 1,
};
constexpr unsigned kNumIoOrders = 2;

/// One host I/O stream (docs/architecture.md §5.2): the elements of a model
/// tensor, in `order`, cut into ceil(n / rows) chunks, chunk i on the port
/// of row firstRow + i of `edge` (West or East), as wavelets of `color`.
struct IoStream {
  std::string name;
  bool output = false;
  machine::Dir edge = machine::Dir::West;
  uint32_t firstRow = 0, endRow = 1;
  uint8_t color = 0;
  machine::PayloadFormat format = machine::PayloadFormat::Dense32;
  /// F32, F16, I16 or I32.
  machine::ElemType dtype = machine::ElemType::F32;
  std::vector<int64_t> shape;
  IoOrder order = IoOrder::RowMajor;
  /// A sparse input (architecture §5.2): the host sends only the non-zero
  /// elements of each chunk (sparse16, index = position in the chunk), then
  /// a control wavelet with index `closeout` and data 0 that ends the chunk.
  bool skipZeros = false;
  uint8_t closeout = 0;

  uint64_t numElements() const;
  /// Bytes of one tensor: numElements * element size.
  uint64_t numBytes() const;
  /// The row-major index of the element that the stream carries at position
  /// `pos` (0 <= pos < numElements()) of one sample, before the positions
  /// are cut into row chunks: `pos` itself for RowMajor, the feature-map
  /// permutation of IoOrder::FeatureMap otherwise. The one place that
  /// defines the stream order; the stream must pass verify().
  uint64_t elementAt(uint64_t pos) const;
  /// elementAt for every position: the stream order of one sample.
  std::vector<uint64_t> streamOrder() const;
  bool operator==(const IoStream &o) const {
    return name == o.name && output == o.output && edge == o.edge &&
           firstRow == o.firstRow && endRow == o.endRow && color == o.color &&
           format == o.format && dtype == o.dtype && shape == o.shape &&
           order == o.order && skipZeros == o.skipZeros &&
           closeout == o.closeout;
  }
};

/// A whole binary.
struct Program {
  machine::TargetConfig target;
  /// The wavelet.program symbol name (disassembly detail).
  std::string name;
  std::vector<CodeImage> images;
  std::vector<Group> groups;
  std::vector<IoStream> io;
  /// Model layer names; Group::layer indexes this.
  std::vector<std::string> layers;
  bool operator==(const Program &o) const;
};

/// Checks a program against its target and itself: the target is valid;
/// groups lie inside the grid and do not overlap; image indices exist;
/// segments (shared and per-PE) lie inside memory and do not overlap;
/// per-PE segment sizes match the group; routes name routable colors, only
/// links that exist, and at most one route per color, and positioned routes
/// pass checkPositions (the message names the image, a group that runs it
/// and the color); params name GPRs;
/// I/O streams have rows inside the grid, routable colors, an element type
/// that fits the payload format, static non-negative shapes, and (feature
/// maps) rank >= 2, dims before dim 1 equal to 1 and channels divisible by
/// the rows. Returns an empty string when valid, else a sentence that names
/// the offending item.
std::string verify(const Program &program);

} // namespace weft::binary

#endif // WEFT_BINARY_BINARY_H
