//===- Heatmap.cpp - Per-PE figures of a program and its run --------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Report/Heatmap.h"

#include <algorithm>
#include <tuple>

using namespace weft;
using namespace weft::report;

const std::vector<HeatmapKind> &weft::report::heatmapKinds() {
  static const std::vector<HeatmapKind> kinds = {
      {"busy",
       "cycles in which the router moved a wavelet or the CE made progress",
       true, false, 0},
      {"ce_busy", "cycles in which the CE made progress", true, false, 0},
      {"instructions", "instructions executed", true, false, 0},
      {"macs", "multiply-accumulates executed", true, false, 0},
      {"flops", "floating-point operations executed", true, false, 0},
      {"hops",
       "wavelets the router sent (north, east, south, west and the ramp to "
       "the CE)",
       true, false, 0},
      {"hops_north", "wavelets the router sent north", true, false, 0},
      {"hops_east", "wavelets the router sent east", true, false, 0},
      {"hops_south", "wavelets the router sent south", true, false, 0},
      {"hops_west", "wavelets the router sent west", true, false, 0},
      {"hops_ramp", "wavelets the router sent up the ramp to its CE", true,
       false, 0},
      {"router_queue", "highest occupancy of a router input queue", true, false,
       0},
      {"ce_queue", "highest occupancy of a CE input queue", true, false, 0},
      {"memory", "bytes of PE memory the binary initialises", false, false, 0},
      {"colors", "colors the PE's router routes", false, false, 0},
      {"layer", "index of the kernel the PE runs (-1: none)", false, true, -1},
  };
  return kinds;
}

const HeatmapKind *weft::report::findHeatmapKind(const std::string &name) {
  for (const HeatmapKind &k : heatmapKinds())
    if (name == k.name)
      return &k;
  return nullptr;
}

std::string weft::report::heatmapKindNames() {
  std::string names;
  for (const HeatmapKind &k : heatmapKinds())
    names += (names.empty() ? "" : ", ") + std::string(k.name);
  return names;
}

int64_t weft::report::memoryBytes(const binary::Program &program,
                                  const binary::Group &group) {
  int64_t words = 0;
  if (group.image < program.images.size())
    for (const binary::Segment &s : program.images[group.image].segments)
      words += int64_t(s.words.size());
  for (const binary::PerPeSegment &s : group.perPe)
    words += s.wordsPerPE;
  return 2 * words;
}

std::vector<uint8_t>
weft::report::routedColors(const binary::CodeImage &image) {
  std::vector<uint8_t> colors;
  for (const binary::Route &r : image.routes)
    colors.push_back(r.color);
  std::sort(colors.begin(), colors.end());
  colors.erase(std::unique(colors.begin(), colors.end()), colors.end());
  return colors;
}

/// "west, ramp": a port set without brackets.
static std::string ports(machine::DirSet set) {
  std::string s;
  for (unsigned d = 0; d < machine::kNumDirs; ++d)
    if (set & (1u << d))
      s += (s.empty() ? "" : ", ") +
           std::string(machine::dirName(machine::Dir(d)));
  return s.empty() ? "none" : s;
}

std::string weft::report::describeRoute(const binary::Route &route) {
  std::string s = std::to_string(route.color) + ": " + ports(route.inputs) +
                  " -> " + ports(route.outputs);
  if (!route.positions.empty())
    s += " (" + std::to_string(route.positions.size()) + " positions)";
  return s;
}

Grid weft::report::groupIndex(const binary::Program &program) {
  uint32_t width = program.target.width, height = program.target.height;
  Grid g(width, height, -1);
  for (size_t i = 0; i < program.groups.size(); ++i) {
    const binary::Group &group = program.groups[i];
    for (uint32_t y = group.y; y < group.y + group.height && y < height; ++y)
      for (uint32_t x = group.x; x < group.x + group.width && x < width; ++x)
        g.at(x, y) = int64_t(i);
  }
  return g;
}

/// The figure of `kind` in one PE's statistics.
static int64_t statOf(const std::string &kind, const sim::PeStats &p) {
  static const char *const dirs[] = {"hops_north", "hops_east", "hops_south",
                                     "hops_west", "hops_ramp"};
  for (unsigned d = 0; d < 5; ++d)
    if (kind == dirs[d])
      return int64_t(p.hops[d]);
  if (kind == "busy")
    return int64_t(p.busyCycles);
  if (kind == "ce_busy")
    return int64_t(p.ceBusyCycles);
  if (kind == "instructions")
    return int64_t(p.instructions);
  if (kind == "macs")
    return int64_t(p.macs);
  if (kind == "flops")
    return int64_t(p.flops);
  if (kind == "router_queue")
    return int64_t(p.routerQueueHigh);
  if (kind == "ce_queue")
    return int64_t(p.ceQueueHigh);
  int64_t total = 0;
  for (uint64_t h : p.hops)
    total += int64_t(h);
  return total; // "hops"
}

Grid weft::report::computeHeatmap(const HeatmapKind &kind,
                                  const binary::Program &program,
                                  const std::vector<sim::PeStats> *pes) {
  uint32_t width = program.target.width, height = program.target.height;
  Grid grid(width, height, kind.unused);
  std::string name = kind.name;
  if (kind.needsRun) {
    // A PE a group covers but the statistics do not list did nothing.
    Grid groups = groupIndex(program);
    for (size_t i = 0; i < grid.values.size(); ++i)
      if (groups.values[i] >= 0)
        grid.values[i] = 0;
    if (pes)
      for (const sim::PeStats &p : *pes)
        if (p.x < width && p.y < height)
          grid.at(p.x, p.y) = statOf(name, p);
    return grid;
  }
  for (const binary::Group &g : program.groups) {
    int64_t v = 0;
    if (name == "memory")
      v = memoryBytes(program, g);
    else if (name == "colors")
      v = g.image < program.images.size()
              ? int64_t(routedColors(program.images[g.image]).size())
              : 0;
    else
      v = g.layer; // "layer"
    for (uint32_t y = g.y; y < g.y + g.height && y < height; ++y)
      for (uint32_t x = g.x; x < g.x + g.width && x < width; ++x)
        grid.at(x, y) = v;
  }
  return grid;
}

std::vector<KernelRect>
weft::report::kernelRects(const binary::Program &program) {
  uint32_t width = program.target.width, height = program.target.height;
  Grid layer(width, height, -1);
  for (const binary::Group &g : program.groups)
    for (uint32_t y = g.y; y < g.y + g.height && y < height; ++y)
      for (uint32_t x = g.x; x < g.x + g.width && x < width; ++x)
        layer.at(x, y) = g.layer;
  // Flood fill each region of one layer (4-neighbours), with an explicit
  // stack: a region may hold the whole fabric.
  std::vector<uint8_t> seen(layer.values.size(), 0);
  std::vector<KernelRect> rects;
  std::vector<std::pair<uint32_t, uint32_t>> stack;
  for (uint32_t y0 = 0; y0 < height; ++y0)
    for (uint32_t x0 = 0; x0 < width; ++x0) {
      size_t i0 = size_t(y0) * width + x0;
      int64_t l = layer.values[i0];
      if (l < 0 || seen[i0])
        continue;
      uint32_t minX = x0, maxX = x0, minY = y0, maxY = y0;
      seen[i0] = 1;
      stack.assign(1, {x0, y0});
      while (!stack.empty()) {
        auto [x, y] = stack.back();
        stack.pop_back();
        minX = std::min(minX, x);
        maxX = std::max(maxX, x);
        minY = std::min(minY, y);
        maxY = std::max(maxY, y);
        auto visit = [&](int64_t nx, int64_t ny) {
          if (nx < 0 || ny < 0 || nx >= int64_t(width) || ny >= int64_t(height))
            return;
          size_t j = size_t(ny) * width + size_t(nx);
          if (seen[j] || layer.values[j] != l)
            return;
          seen[j] = 1;
          stack.push_back({uint32_t(nx), uint32_t(ny)});
        };
        visit(int64_t(x) - 1, y);
        visit(int64_t(x) + 1, y);
        visit(x, int64_t(y) - 1);
        visit(x, int64_t(y) + 1);
      }
      rects.push_back(
          {int32_t(l), minX, minY, maxX - minX + 1, maxY - minY + 1});
    }
  std::stable_sort(
      rects.begin(), rects.end(), [](const KernelRect &a, const KernelRect &b) {
        return std::tie(a.layer, a.y, a.x) < std::tie(b.layer, b.y, b.x);
      });
  return rects;
}
