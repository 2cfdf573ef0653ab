//===- Routes.cpp - Static check of a binary's routes ---------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Binary/Routes.h"

#include <map>
#include <tuple>

using namespace weft::machine;

namespace weft::binary {

namespace {

struct PeRoutes {
  const Route *byColor[32] = {};
  uint64_t active = 0;
};

std::string pe(int64_t x, int64_t y) {
  return "PE (" + std::to_string(x) + ", " + std::to_string(y) + ")";
}

} // namespace

std::vector<std::string> checkRoutes(const Program &p) {
  std::vector<std::string> problems;
  std::map<std::pair<int64_t, int64_t>, PeRoutes> pes;
  for (const Group &g : p.groups) {
    if (g.image >= p.images.size())
      continue;
    const CodeImage &img = p.images[g.image];
    for (uint32_t y = g.y; y < g.y + g.height; ++y)
      for (uint32_t x = g.x; x < g.x + g.width; ++x) {
        PeRoutes &r = pes[{x, y}];
        for (const Route &route : img.routes)
          if (route.color < 32)
            r.byColor[route.color] = &route;
        r.active = img.active;
      }
  }
  // Host ports: (edge, row, color) of the streams.
  std::map<std::tuple<unsigned, int64_t, unsigned>, bool> outputs, inputs;
  for (const IoStream &s : p.io)
    for (uint32_t row = s.firstRow; row < s.endRow; ++row)
      (s.output ? outputs : inputs)[{unsigned(s.edge), row, s.color}] = true;
  int64_t w = p.target.width;
  auto at = [&](int64_t x, int64_t y) -> const PeRoutes * {
    auto it = pes.find({x, y});
    return it == pes.end() ? nullptr : &it->second;
  };
  for (auto &[xy, r] : pes) {
    auto [x, y] = xy;
    for (unsigned c = 0; c < 32; ++c) {
      const Route *route = r.byColor[c];
      // A color that starts tasks must reach the CE.
      if ((r.active >> c) & 1 && (!route || !(route->outputs & dirBit(Dir::Ramp))))
        problems.push_back(pe(x, y) + " starts tasks on color " +
                           std::to_string(c) +
                           " but no route brings that color to its CE");
      if (!route)
        continue;
      // The link checks below use the unions (inputs, outputs); they hold
      // for every position only if the positions are consistent with them.
      // verify() guarantees that, but this check may see any program.
      std::string bad = checkPositions(*route);
      if (!bad.empty())
        problems.push_back(pe(x, y) + " routes color " + std::to_string(c) +
                           " with positions that do not fit its route: " + bad);
      for (unsigned d = 0; d < 4; ++d) {
        if (!(route->outputs & (1u << d)))
          continue;
        Dir dir = Dir(d);
        bool westEdge = dir == Dir::West && x == 0;
        bool eastEdge = dir == Dir::East && x == w - 1;
        if (westEdge || eastEdge) {
          if (!outputs.count({unsigned(dir), y, c}))
            problems.push_back(pe(x, y) + " sends color " + std::to_string(c) +
                               " out of the " + dirName(dir) +
                               " host port of row " + std::to_string(y) +
                               ", where no output stream of that color leaves");
          continue;
        }
        int64_t nx = x + (dir == Dir::East) - (dir == Dir::West);
        int64_t ny = y + (dir == Dir::South) - (dir == Dir::North);
        const PeRoutes *n = at(nx, ny);
        const Route *nr = n ? n->byColor[c] : nullptr;
        if (!nr || !(nr->inputs & dirBit(opposite(dir))))
          problems.push_back(pe(x, y) + " sends color " + std::to_string(c) +
                             " " + dirName(dir) + " to " + pe(nx, ny) +
                             ", whose route does not take that color from the " +
                             dirName(opposite(dir)));
      }
    }
  }
  for (auto &[key, unused] : inputs) {
    auto [edge, row, c] = key;
    int64_t x = Dir(edge) == Dir::West ? 0 : w - 1;
    const PeRoutes *n = at(x, row);
    const Route *nr = n ? n->byColor[c] : nullptr;
    if (!nr || !(nr->inputs & (1u << edge)))
      problems.push_back("the input on the " + std::string(dirName(Dir(edge))) +
                         " host port of row " + std::to_string(row) +
                         " (color " + std::to_string(c) + ") enters " +
                         pe(x, row) + ", whose route does not take it");
  }
  return problems;
}

} // namespace weft::binary
