//===- PlacedRoutes.cpp - The routes and colors of a fabric.program -------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "PlacedRoutes.h"

#include "wavelet/WaveletOps.h"

using namespace mlir;
namespace fab = weft::fabric;
namespace common = weft::common;
namespace wv = weft::wavelet;

namespace weft::conversion {

namespace {

/// A router setting from its port masks and flat (inputs, outputs, count)
/// positions (fabric.switch and wavelet.route spell them alike).
Switch switchOf(uint32_t in, uint32_t out,
                std::optional<ArrayRef<int64_t>> positions) {
  Switch sw{DirSet(in), DirSet(out), {}};
  if (positions)
    for (size_t i = 0; i + 2 < positions->size(); i += 3)
      sw.positions.push_back(SwitchPosition{DirSet((*positions)[i]),
                                            DirSet((*positions)[i + 1]),
                                            (*positions)[i + 2]});
  return sw;
}

} // namespace

FailureOr<PlacedRoutes> PlacedRoutes::read(fab::ProgramOp program) {
  PlacedRoutes r;
  Block &body = program.getBody().front();
  for (auto route : body.getOps<fab::RouteOp>()) {
    fab::ColorAttr c = route.getColorAttr();
    if (!c)
      return route.emitOpError("has no color: run --weft-allocate-colors "
                               "first");
    r.colorOf[{route.getStream().str(),
               route.getChannel().value_or("").str()}] = c.getValue();
    for (auto sw : route.getBody().front().getOps<fab::SwitchOp>()) {
      int64_t px = sw.getX(), py = sw.getY();
      r.table[{px, py}][c.getValue()] =
          switchOf(sw.getInputs(), sw.getOutputs(), sw.getPositions());
      r.owner[{px, py, int64_t(c.getValue())}] = route.getRouteName();
    }
  }
  for (auto s : body.getOps<fab::StreamOp>())
    if (!r.colorOf.count({s.getSymName().str(), ""}))
      return s.emitOpError("has no route: run --weft-route-streams and "
                           "--weft-allocate-colors first");
  return r;
}

DenseColors PlacedRoutes::dense(const Graph &g, const Stage &s) const {
  DenseColors dc;
  dc.in = stream(g.streams[size_t(s.inputs[0])].op);
  dc.column = stream(s.turnStream);
  dc.out = stream(g.streams[size_t(s.output)].op);
  StringRef k = fab::KernelOp(s.kernel).getSymName();
  for (int j = 0; j < 2; ++j)
    dc.psum[j] = channel(k, kPartialSumChannels[j]);
  return dc;
}

std::array<int64_t, 3> PlacedRoutes::columnReduce(StringRef kernel) const {
  std::array<int64_t, 3> colors;
  for (int j = 0; j < 3; ++j)
    colors[j] = channel(kernel, kColumnReduceChannels[j]);
  return colors;
}

LogicalResult PlacedRoutes::check(Operation *wprog,
                                  fab::ProgramOp program) const {
  RouteTable emitted;
  for (Operation &op : wprog->getRegion(0).front()) {
    common::RectAttr rect;
    if (auto g = dyn_cast<wv::PeGroupOp>(op))
      rect = g.getRect();
    else if (auto pe = dyn_cast<wv::PeOp>(op))
      rect = common::RectAttr::get(op.getContext(), pe.getX(), pe.getY(), 1, 1);
    else
      continue;
    for (auto r : op.getRegion(0).getOps<wv::RouteOp>())
      for (int64_t dx = 0; dx < int64_t(rect.getWidth()); ++dx)
        for (int64_t dy = 0; dy < int64_t(rect.getHeight()); ++dy)
          emitted[{rect.getX() + dx, rect.getY() + dy}][r.getColor()] =
              switchOf(r.getInputs(), r.getOutputs(), r.getPositions());
  }
  auto describe = [&](std::pair<int64_t, int64_t> pe, int64_t c) {
    auto it = owner.find({pe.first, pe.second, c});
    return it == owner.end() ? std::string("no route")
                             : "the route of " + it->second;
  };
  for (const auto &[pe, colors] : table)
    for (const auto &[c, sw] : colors) {
      auto at = emitted.find(pe);
      const Switch *e = nullptr;
      if (at != emitted.end())
        if (auto it = at->second.find(c); it != at->second.end())
          e = &it->second;
      if (!e || !(*e == sw))
        return program.emitOpError("lowering error: PE (")
               << pe.first << ", " << pe.second << ") was not given "
               << describe(pe, c) << " on color " << c;
    }
  for (const auto &[pe, colors] : emitted)
    for (const auto &[c, sw] : colors) {
      auto at = table.find(pe);
      if (at == table.end() || !at->second.count(c))
        return program.emitOpError("lowering error: PE (")
               << pe.first << ", " << pe.second << ") routes color " << c
               << ", which no fabric.route gives it";
    }
  return success();
}

} // namespace weft::conversion
