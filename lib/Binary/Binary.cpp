//===- Binary.cpp - The .wfb program in memory and its checks ---------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// verify() is the one place that decides whether a Program can be loaded:
// the reader calls it on every file, the emitter on everything it builds, and
// the simulator may call it again on hand-built programs. Every check is
// written so that hostile values (huge counts, wrapping sums) are caught
// without overflow and in O(n log n) time.
//
//===----------------------------------------------------------------------===//

#include "weft/Binary/Binary.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

using namespace weft::binary;
namespace wt = weft::machine;

uint64_t IoStream::numElements() const {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d <= 0)
      return 0;
    // Saturate instead of wrapping; verify() rejects such shapes.
    if (n > UINT64_MAX / uint64_t(d))
      return UINT64_MAX;
    n *= uint64_t(d);
  }
  return n;
}

uint64_t IoStream::numBytes() const {
  uint64_t n = numElements();
  uint64_t size = 2 * uint64_t(wt::elemWords(dtype));
  if (size && n > UINT64_MAX / size)
    return UINT64_MAX;
  return n * size;
}

uint64_t IoStream::elementAt(uint64_t pos) const {
  if (order != IoOrder::FeatureMap || shape.size() < 2)
    return pos;
  // permuted[r*Lc*P + p*Lc + cc] = original[(r*Lc + cc)*P + p].
  uint64_t c = uint64_t(shape[1]);
  uint64_t rows = endRow - firstRow;
  if (c == 0 || rows == 0)
    return pos;
  uint64_t pixels = numElements() / c;
  uint64_t lc = c / rows;
  uint64_t chunk = lc * pixels;
  if (chunk == 0)
    return pos;
  uint64_t r = pos / chunk, q = pos % chunk;
  uint64_t p = q / lc, cc = q % lc;
  return (r * lc + cc) * pixels + p;
}

std::vector<uint64_t> IoStream::streamOrder() const {
  uint64_t n = numElements();
  std::vector<uint64_t> out(size_t(n), 0);
  for (uint64_t i = 0; i < n; ++i)
    out[size_t(i)] = elementAt(i);
  return out;
}

bool Program::operator==(const Program &o) const {
  const wt::TargetConfig &a = target, &b = o.target;
  return a.width == b.width && a.height == b.height &&
         a.memoryBytes == b.memoryBytes &&
         a.routableColors == b.routableColors &&
         a.routerQueueDepth == b.routerQueueDepth &&
         a.ceQueueDepth == b.ceQueueDepth && name == o.name &&
         images == o.images && groups == o.groups && io == o.io &&
         layers == o.layers;
}

namespace {
/// One occupied word range of a PE's memory, for the overlap check.
struct Range {
  uint64_t begin, end;
  std::string what;
};

/// Largest element count of a host tensor: 2^48 elements is far beyond any
/// fabric's I/O and keeps every byte count well inside 64 bits.
constexpr uint64_t kMaxIoElements = uint64_t(1) << 48;
} // namespace

std::string weft::binary::checkPositions(const Route &r) {
  if (r.positions.empty())
    return "";
  std::vector<wt::RoutePositionSpec> specs;
  for (const RoutePosition &p : r.positions)
    specs.push_back({p.inputs, p.outputs, int64_t(p.count)});
  return wt::routePositionsProblem(specs, r.inputs, r.outputs);
}

static std::string segmentName(const std::string &name) {
  return name.empty() ? std::string("(unnamed)") : "@" + name;
}

/// Checks that `ranges` lie inside `memoryWords` and do not overlap.
/// Checks that `ranges` lie inside `memoryWords` and do not overlap. Sorts
/// them by address and drops empty ones, which occupy nothing.
static std::string checkRanges(std::vector<Range> &ranges,
                               uint64_t memoryWords, const std::string &where) {
  std::sort(ranges.begin(), ranges.end(), [](const Range &a, const Range &b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  });
  std::vector<Range> kept;
  kept.reserve(ranges.size());
  for (const Range &r : ranges) {
    std::ostringstream os;
    if (r.end > memoryWords || r.begin > memoryWords) {
      os << where << ": " << r.what << " [" << r.begin << ", " << r.end
         << ") leaves the PE memory of " << memoryWords << " words";
      return os.str();
    }
    if (r.begin == r.end)
      continue;
    if (!kept.empty() && kept.back().end > r.begin) {
      os << where << ": " << r.what << " [" << r.begin << ", " << r.end
         << ") overlaps " << kept.back().what << " [" << kept.back().begin
         << ", " << kept.back().end << ")";
      return os.str();
    }
    kept.push_back(r);
  }
  ranges = std::move(kept);
  return "";
}

static std::string groupWhere(const Program &p, size_t i) {
  std::ostringstream os;
  os << "group " << i;
  if (!p.groups[i].name.empty())
    os << " (@" << p.groups[i].name << ")";
  return os.str();
}

/// Groups must not overlap: a sweep over rows keeps the column intervals of
/// the groups that cover the current row, which are disjoint if the program
/// is valid so far, in a map from first column to (end column, group).
static std::string checkGroupOverlaps(const Program &p) {
  struct Event {
    uint64_t y;
    bool start;
    size_t group;
  };
  std::vector<Event> events;
  events.reserve(2 * p.groups.size());
  for (size_t i = 0; i < p.groups.size(); ++i) {
    const Group &g = p.groups[i];
    events.push_back({uint64_t(g.y), true, i});
    events.push_back({uint64_t(g.y) + g.height, false, i});
  }
  // Ends before starts on the same row: [y, y+h) is half open.
  std::sort(events.begin(), events.end(), [](const Event &a, const Event &b) {
    if (a.y != b.y)
      return a.y < b.y;
    if (a.start != b.start)
      return !a.start;
    return a.group < b.group;
  });
  std::map<uint64_t, std::pair<uint64_t, size_t>> active;
  for (const Event &e : events) {
    const Group &g = p.groups[e.group];
    if (!e.start) {
      active.erase(g.x);
      continue;
    }
    uint64_t begin = g.x, end = uint64_t(g.x) + g.width;
    auto next = active.lower_bound(begin);
    std::optional<size_t> clash;
    if (next != active.end() && next->first < end)
      clash = next->second.second;
    else if (next != active.begin() && std::prev(next)->second.first > begin)
      clash = std::prev(next)->second.second;
    if (clash) {
      const Group &o = p.groups[*clash];
      std::ostringstream os;
      os << groupWhere(p, e.group) << " at PEs [" << g.x << ", "
         << uint64_t(g.x) + g.width << ") x [" << g.y << ", "
         << uint64_t(g.y) + g.height << ") overlaps " << groupWhere(p, *clash)
         << " at PEs [" << o.x << ", " << uint64_t(o.x) + o.width << ") x ["
         << o.y << ", " << uint64_t(o.y) + o.height << ")";
      return os.str();
    }
    active[begin] = {end, e.group};
  }
  return "";
}

/// "image 2 (run by group 5 (@merge))": an image and the first group that
/// runs it, for messages about what the PEs of the group do.
static std::string imageWhere(const Program &p, size_t index) {
  std::string where = "image " + std::to_string(index);
  for (size_t gi = 0; gi < p.groups.size(); ++gi)
    if (p.groups[gi].image == index)
      return where + " (run by " + groupWhere(p, gi) + ")";
  return where;
}

/// Checks an image on its own; on success fills `sorted` with its segment
/// ranges in address order for the per-group checks.
static std::string verifyImage(const wt::Target &t, const Program &p,
                               size_t index, std::vector<Range> &sorted) {
  const CodeImage &img = p.images[index];
  std::ostringstream os;
  std::string where = "image " + std::to_string(index);
  std::set<unsigned> colors;
  for (const Route &r : img.routes) {
    if (!t.isRoutableColor(r.color)) {
      os << where << ": route color " << unsigned(r.color)
         << " is not routable on this target (colors 0.."
         << t.routableColors() - 1 << ")";
      return os.str();
    }
    if (!colors.insert(r.color).second) {
      os << where << ": color " << unsigned(r.color) << " is routed twice";
      return os.str();
    }
    if (!r.inputs || !r.outputs || (r.inputs & ~wt::kAllDirs) ||
        (r.outputs & ~wt::kAllDirs)) {
      os << where << ": route of color " << unsigned(r.color)
         << " has port sets (inputs 0x" << std::hex << unsigned(r.inputs)
         << ", outputs 0x" << unsigned(r.outputs) << std::dec
         << "); each needs at least one of the 5 ports and nothing else";
      return os.str();
    }
    std::string bad = checkPositions(r);
    if (!bad.empty())
      return imageWhere(p, index) + ": route of color " +
             std::to_string(r.color) + ": " + bad;
  }
  for (const Symbol &s : img.symbols) {
    if (unsigned(s.kind) > unsigned(SymbolKind::Label) || s.taskKind > 2) {
      os << where << ": symbol '" << s.name << "' has kind "
         << unsigned(s.kind) << " / task kind " << unsigned(s.taskKind)
         << ", which do not exist";
      return os.str();
    }
  }
  sorted.clear();
  sorted.reserve(img.segments.size());
  for (const Segment &s : img.segments)
    sorted.push_back({s.address, uint64_t(s.address) + s.words.size(),
                      "segment " + segmentName(s.name)});
  return checkRanges(sorted, t.memoryWords(), where);
}

/// The links a route uses must exist on every PE of the group; only north
/// (row 0) and south (last row) can be missing, so the corners decide.
static std::string verifyGroupRoutes(const wt::Target &t, const Program &p,
                                     size_t gi) {
  const Group &g = p.groups[gi];
  const CodeImage &img = p.images[g.image];
  for (const Route &r : img.routes)
    for (unsigned d = 0; d < wt::kNumDirs; ++d) {
      if (!((r.inputs | r.outputs) & (1u << d)))
        continue;
      for (auto [x, y] : {std::pair<int64_t, int64_t>(g.x, g.y),
                          std::pair<int64_t, int64_t>(
                              int64_t(g.x) + g.width - 1,
                              int64_t(g.y) + g.height - 1)})
        if (!t.hasLink(x, y, wt::Dir(d))) {
          std::ostringstream os;
          os << groupWhere(p, gi) << ": color " << unsigned(r.color)
             << " uses the " << wt::dirName(wt::Dir(d)) << " port of PE ("
             << x << ", " << y << "), which has no "
             << wt::dirName(wt::Dir(d)) << " neighbour";
          return os.str();
        }
    }
  return "";
}

static std::string verifyGroup(const wt::Target &t, const Program &p,
                               size_t gi,
                               const std::vector<std::vector<Range>> &images) {
  const Group &g = p.groups[gi];
  std::string where = groupWhere(p, gi);
  std::ostringstream os;
  if (g.width == 0 || g.height == 0 ||
      uint64_t(g.x) + g.width > t.width() ||
      uint64_t(g.y) + g.height > t.height()) {
    os << where << " at PEs [" << g.x << ", " << uint64_t(g.x) + g.width
       << ") x [" << g.y << ", " << uint64_t(g.y) + g.height
       << ") is empty or leaves the " << t.width() << "x" << t.height()
       << " fabric";
    return os.str();
  }
  if (g.image >= p.images.size()) {
    os << where << " runs image " << g.image << " but the program has "
       << p.images.size() << " images";
    return os.str();
  }
  if (g.layer < -1 || (g.layer >= 0 && size_t(g.layer) >= p.layers.size())) {
    os << where << " belongs to layer " << g.layer << " but the program has "
       << p.layers.size() << " layers";
    return os.str();
  }
  std::set<unsigned> gprs;
  for (const Param &prm : g.params) {
    if (prm.gpr >= wt::Arch::kNumGPRs) {
      os << where << ": param names gpr " << unsigned(prm.gpr)
         << " but there are " << wt::Arch::kNumGPRs;
      return os.str();
    }
    if (!gprs.insert(prm.gpr).second) {
      os << where << ": gpr " << unsigned(prm.gpr) << " is initialised twice";
      return os.str();
    }
  }
  uint64_t pes = uint64_t(g.width) * g.height;
  std::vector<Range> ranges;
  ranges.reserve(g.perPe.size());
  for (const PerPeSegment &s : g.perPe) {
    // wordsPerPE * pes cannot overflow: both are below 2^32.
    if (uint64_t(s.wordsPerPE) * pes != s.words.size()) {
      os << where << ": per-PE segment " << segmentName(s.name) << " holds "
         << s.words.size() << " words, not " << s.wordsPerPE << " for each of "
         << pes << " PEs";
      return os.str();
    }
    ranges.push_back({s.address, uint64_t(s.address) + s.wordsPerPE,
                      "per-PE segment " + segmentName(s.name)});
  }
  std::string err = checkRanges(ranges, t.memoryWords(), where);
  if (!err.empty())
    return err;
  // Per-PE segments against the image's (sorted, disjoint) segments: only
  // the image range starting last before the end of r can reach into r.
  const std::vector<Range> &shared = images[g.image];
  for (const Range &r : ranges) {
    auto it = std::lower_bound(
        shared.begin(), shared.end(), r.end,
        [](const Range &a, uint64_t end) { return a.begin < end; });
    if (it == shared.begin())
      continue;
    const Range &o = *std::prev(it);
    if (o.end > r.begin) {
      os << where << ": " << r.what << " [" << r.begin << ", " << r.end
         << ") overlaps " << o.what << " [" << o.begin << ", " << o.end
         << ") of image " << g.image;
      return os.str();
    }
  }
  return verifyGroupRoutes(t, p, gi);
}

static std::string verifyIo(const wt::Target &t, const IoStream &s,
                            size_t index) {
  std::ostringstream os;
  os << "I/O stream " << index << " (@" << s.name << ")";
  std::string where = os.str();
  os.str("");
  if (s.edge != wt::Dir::West && s.edge != wt::Dir::East) {
    os << where << " is on edge " << unsigned(s.edge)
       << "; host ports are on the west (3) and east (1) edges";
    return os.str();
  }
  if (s.firstRow >= s.endRow || s.endRow > t.height()) {
    os << where << " uses rows [" << s.firstRow << ", " << s.endRow
       << "), which are empty or leave the " << t.height() << "-row fabric";
    return os.str();
  }
  if (!t.isRoutableColor(s.color)) {
    os << where << " uses color " << unsigned(s.color)
       << ", which is not routable on this target (colors 0.."
       << t.routableColors() - 1 << ")";
    return os.str();
  }
  if (unsigned(s.format) >= wt::kNumPayloadFormats) {
    os << where << " has payload format " << unsigned(s.format)
       << ", which does not exist";
    return os.str();
  }
  unsigned words = wt::elemWords(s.dtype);
  if (words == 0 || unsigned(s.dtype) > unsigned(wt::ElemType::I32)) {
    os << where << " has element type " << unsigned(s.dtype)
       << "; streams carry f32, f16, i16 or i32";
    return os.str();
  }
  bool fits = words == 2 ? s.format == wt::PayloadFormat::Dense32
                         : s.format != wt::PayloadFormat::Dense32;
  if (!fits) {
    os << where << " carries " << wt::elemTypeName(s.dtype)
       << " elements in the " << wt::payloadFormatName(s.format)
       << " format; 32-bit types need dense32, 16-bit types dense16x2 or "
          "sparse16";
    return os.str();
  }
  uint64_t n = 1;
  for (size_t i = 0; i < s.shape.size(); ++i) {
    int64_t d = s.shape[i];
    if (d < 0) {
      os << where << " has dimension " << i << " of size " << d
         << "; shapes are static and non-negative";
      return os.str();
    }
    if (d > 0 && n > kMaxIoElements / uint64_t(d)) {
      os << where << " has more than " << kMaxIoElements << " elements";
      return os.str();
    }
    n = d == 0 ? 0 : n * uint64_t(d);
  }
  if (s.skipZeros && (s.output || s.format != wt::PayloadFormat::Sparse16))
    return where + " skips zeros, but only a sparse16 input can";
  if (s.closeout >= 64 || (!s.skipZeros && s.closeout)) {
    os << where << " has closeout index " << unsigned(s.closeout)
       << "; a sparse input's is 0 .. 63, other streams have none";
    return os.str();
  }
  if (unsigned(s.order) >= kNumIoOrders) {
    os << where << " has element order " << unsigned(s.order)
       << ", which does not exist (0 row-major, 1 feature map)";
    return os.str();
  }
  if (s.order == IoOrder::FeatureMap) {
    uint64_t rows = s.endRow - s.firstRow;
    if (s.shape.size() < 2) {
      os << where << " is a feature map of rank " << s.shape.size()
         << "; a feature map has shape [1, C, spatial...] (rank >= 2)";
      return os.str();
    }
    if (s.shape[0] != 1) {
      os << where << " is a feature map with dimension 0 of size "
         << s.shape[0]
         << "; the dimensions before the channels (dimension 1) must be 1";
      return os.str();
    }
    if (uint64_t(s.shape[1]) % rows != 0) {
      os << where << " is a feature map of " << s.shape[1]
         << " channels on " << rows
         << " rows; the rows must divide the channels";
      return os.str();
    }
  }
  return "";
}

std::string weft::binary::verify(const Program &p) {
  std::string err;
  std::optional<wt::Target> t = wt::Target::create(p.target, &err);
  if (!t)
    return "target " + p.target.str() + ": " + err;
  std::vector<std::vector<Range>> images(p.images.size());
  for (size_t i = 0; i < p.images.size(); ++i) {
    err = verifyImage(*t, p, i, images[i]);
    if (!err.empty())
      return err;
  }
  for (size_t i = 0; i < p.groups.size(); ++i) {
    err = verifyGroup(*t, p, i, images);
    if (!err.empty())
      return err;
  }
  err = checkGroupOverlaps(p);
  if (!err.empty())
    return err;
  for (size_t i = 0; i < p.io.size(); ++i) {
    err = verifyIo(*t, p.io[i], i);
    if (!err.empty())
      return err;
  }
  // A host binds inputs and names outputs by name.
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < p.io.size(); ++i) {
    auto [it, fresh] = names.emplace(p.io[i].name, i);
    if (!fresh)
      return "I/O streams " + std::to_string(it->second) + " and " +
             std::to_string(i) + " are both named @" + p.io[i].name +
             "; a stream's name must be unique";
  }
  return "";
}
