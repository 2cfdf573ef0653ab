//===- Target.cpp - The weft machine model --------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Machine/Target.h"

#include <cstdlib>
#include <sstream>

using namespace weft::machine;

const char *weft::machine::dirName(Dir d) {
  switch (d) {
  case Dir::North:
    return "north";
  case Dir::East:
    return "east";
  case Dir::South:
    return "south";
  case Dir::West:
    return "west";
  case Dir::Ramp:
    return "ramp";
  }
  return "?";
}

Dir weft::machine::opposite(Dir d) {
  switch (d) {
  case Dir::North:
    return Dir::South;
  case Dir::South:
    return Dir::North;
  case Dir::East:
    return Dir::West;
  case Dir::West:
    return Dir::East;
  case Dir::Ramp:
    return Dir::Ramp;
  }
  return d;
}

std::optional<Dir> weft::machine::parseDir(const std::string &name) {
  for (unsigned i = 0; i < kNumDirs; ++i)
    if (name == dirName(Dir(i)))
      return Dir(i);
  return std::nullopt;
}

std::string TargetConfig::str() const {
  std::ostringstream os;
  os << width << "x" << height << ",mem=" << memoryBytes
     << ",colors=" << routableColors << ",rq=" << routerQueueDepth
     << ",cq=" << ceQueueDepth;
  return os.str();
}

static bool fail(std::string *error, const std::string &msg) {
  if (error)
    *error = msg;
  return false;
}

/// Largest grid side: PE coordinates are kept in 16-bit fields everywhere
/// (binary format, statistics), so a side may not exceed 65535 PEs.
static constexpr unsigned kMaxSide = 65535;

std::optional<Target> Target::create(const TargetConfig &c,
                                     std::string *error) {
  std::ostringstream os;
  if (c.width == 0 || c.height == 0 || c.width > kMaxSide ||
      c.height > kMaxSide) {
    os << "grid " << c.width << "x" << c.height
       << " is not between 1x1 and " << kMaxSide << "x" << kMaxSide;
    fail(error, os.str());
    return std::nullopt;
  }
  unsigned maxBytes = Arch::kMaxAddressableWords * 2;
  if (c.memoryBytes < 2048 || c.memoryBytes > maxBytes ||
      c.memoryBytes % 8 != 0) {
    os << "memory per PE of " << c.memoryBytes
       << " bytes is not a multiple of 8 between 2048 and " << maxBytes
       << " (15-bit word addresses)";
    fail(error, os.str());
    return std::nullopt;
  }
  if (c.routableColors == 0 || c.routableColors > Arch::kFabricColors) {
    os << "routable colors " << c.routableColors << " not in [1, "
       << Arch::kFabricColors << "] (5-bit color field)";
    fail(error, os.str());
    return std::nullopt;
  }
  if (c.routerQueueDepth == 0 || c.routerQueueDepth > 64) {
    os << "router queue depth " << c.routerQueueDepth << " not in [1, 64]";
    fail(error, os.str());
    return std::nullopt;
  }
  if (c.ceQueueDepth == 0 || c.ceQueueDepth > 64) {
    os << "CE queue depth " << c.ceQueueDepth << " not in [1, 64]";
    fail(error, os.str());
    return std::nullopt;
  }
  return Target(c);
}

std::optional<Target> Target::parse(const std::string &text,
                                    std::string *error) {
  TargetConfig c;
  std::istringstream in(text);
  std::string item;
  bool first = true;
  while (std::getline(in, item, ',')) {
    if (first) {
      first = false;
      auto x = item.find('x');
      char *end = nullptr;
      if (x == std::string::npos) {
        fail(error, "target '" + text + "' does not start with WxH");
        return std::nullopt;
      }
      unsigned long w = std::strtoul(item.c_str(), &end, 10);
      if (end != item.c_str() + x) {
        fail(error, "bad grid width in '" + item + "'");
        return std::nullopt;
      }
      unsigned long h = std::strtoul(item.c_str() + x + 1, &end, 10);
      if (*end != '\0' || x + 1 == item.size()) {
        fail(error, "bad grid height in '" + item + "'");
        return std::nullopt;
      }
      c.width = unsigned(std::min(w, 1ul << 20));
      c.height = unsigned(std::min(h, 1ul << 20));
      continue;
    }
    auto eq = item.find('=');
    if (eq == std::string::npos) {
      fail(error, "target option '" + item + "' is not key=value");
      return std::nullopt;
    }
    std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    char *end = nullptr;
    unsigned long v = std::strtoul(val.c_str(), &end, 10);
    if (val.empty() || *end != '\0') {
      fail(error, "target option '" + key + "' has non-numeric value '" +
                      val + "'");
      return std::nullopt;
    }
    unsigned uv = unsigned(std::min(v, 1ul << 30));
    if (key == "mem")
      c.memoryBytes = uv;
    else if (key == "colors")
      c.routableColors = uv;
    else if (key == "rq")
      c.routerQueueDepth = uv;
    else if (key == "cq")
      c.ceQueueDepth = uv;
    else {
      fail(error, "unknown target option '" + key +
                      "' (known: mem, colors, rq, cq)");
      return std::nullopt;
    }
  }
  if (first) {
    fail(error, "empty target description");
    return std::nullopt;
  }
  return create(c, error);
}

bool Target::hasLink(int64_t x, int64_t y, Dir d) const {
  if (!contains(x, y))
    return false;
  switch (d) {
  case Dir::North:
    return y > 0;
  case Dir::South:
    return y + 1 < int64_t(cfg.height);
  case Dir::East:
  case Dir::West:
  case Dir::Ramp:
    // East and west edges end in host ports.
    return true;
  }
  return false;
}

bool Target::isHostPort(int64_t x, int64_t y, Dir d) const {
  if (!contains(x, y))
    return false;
  return (d == Dir::West && x == 0) ||
         (d == Dir::East && x + 1 == int64_t(cfg.width));
}

unsigned Target::descriptorWords() const {
  unsigned reach = (1u << Arch::kDescriptorUnitBits) * Arch::kWordsPerDescriptor;
  return std::min(reach, memoryWords());
}

std::string weft::machine::dirSetName(unsigned set) {
  std::string s = "[";
  for (unsigned d = 0; d < kNumDirs; ++d)
    if (set & (1u << d))
      s += std::string(s.size() > 1 ? ", " : "") + dirName(Dir(d));
  return s + "]";
}

std::string weft::machine::routePositionsProblem(
    const std::vector<RoutePositionSpec> &positions, unsigned inputs,
    unsigned outputs) {
  size_t n = positions.size();
  if (n < Arch::kMinRoutePositions || n > Arch::kMaxRoutePositions)
    return "has " + std::to_string(n) + " position" + (n == 1 ? "" : "s") +
           "; a positioned route has " +
           std::to_string(Arch::kMinRoutePositions) + " to " +
           std::to_string(Arch::kMaxRoutePositions);
  unsigned allIn = 0, allOut = 0;
  for (size_t k = 0; k < n; ++k) {
    const RoutePositionSpec &p = positions[k];
    std::string which =
        "position " + std::to_string(k + 1) + " of " + std::to_string(n);
    if (p.inputs < 0 || p.inputs > kAllDirs || p.outputs < 0 ||
        p.outputs > kAllDirs)
      return which + " has port masks (inputs " + std::to_string(p.inputs) +
             ", outputs " + std::to_string(p.outputs) + ") beyond the 5 ports";
    if (!p.inputs || !p.outputs)
      return which + " needs at least one input and one output port";
    if (p.count < 1 || p.count > int64_t(Arch::kMaxPositionCount))
      return which + " has count " + std::to_string(p.count) +
             "; counts are 1 to " + std::to_string(Arch::kMaxPositionCount);
    if (unsigned(p.inputs) & ~inputs)
      return which + " takes from " + dirSetName(unsigned(p.inputs)) +
             ", which the route's inputs " + dirSetName(inputs) +
             " do not include";
    if (unsigned(p.outputs) & ~outputs)
      return which + " sends to " + dirSetName(unsigned(p.outputs)) +
             ", which the route's outputs " + dirSetName(outputs) +
             " do not include";
    allIn |= unsigned(p.inputs);
    allOut |= unsigned(p.outputs);
  }
  if (allIn != inputs)
    return "the positions take from " + dirSetName(allIn) +
           " but the route's inputs are " + dirSetName(inputs) +
           "; they must be the positions' union";
  if (allOut != outputs)
    return "the positions send to " + dirSetName(allOut) +
           " but the route's outputs are " + dirSetName(outputs) +
           "; they must be the positions' union";
  return "";
}
