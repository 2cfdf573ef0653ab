//===- File.cpp - The .wfb byte layout: writer and validating reader -------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// docs/binary-format.md is the prose twin of this file: every table there is
// one of the put*/get* sequences below. All integers are little-endian and
// written byte by byte, so the layout does not depend on the host.
//
//===----------------------------------------------------------------------===//

#include "weft/Binary/File.h"

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

using namespace weft::binary;
namespace wt = weft::machine;

namespace {

/// Section identifiers, in the order they must appear.
enum SectionId : uint32_t {
  kStrings = 1,
  kProgram = 2,
  kLayers = 3,
  kImages = 4,
  kGroups = 5,
  kIo = 6,
};
constexpr uint32_t kNumSections = 6;
const char *sectionName(uint32_t id) {
  static const char *names[] = {"?",      "strings", "program", "layers",
                                "images", "groups",  "io"};
  return id <= kNumSections ? names[id] : "?";
}

constexpr size_t kHeaderBytes = 48;
constexpr size_t kSectionHeaderBytes = 16;
constexpr size_t kChecksumBytes = 8;

// Smallest encoded size of each record, used to bound counts before any
// allocation: a count can never exceed remaining bytes / record size.
constexpr size_t kStringMin = 4;
constexpr size_t kRouteBytes = 4;
constexpr size_t kPositionBytes = 8;
constexpr size_t kSegmentMin = 16;
constexpr size_t kSymbolBytes = 16;
constexpr size_t kImageMin = 16 + 3 * 4;
constexpr size_t kGroupMin = 32 + 2 * 4;
constexpr size_t kParamBytes = 16;
constexpr size_t kPerPeMin = 24;
constexpr size_t kIoMin = 24;

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

class Writer {
public:
  std::vector<uint8_t> out;
  void u8(uint8_t v) { out.push_back(v); }
  void u16(uint16_t v) {
    u8(uint8_t(v));
    u8(uint8_t(v >> 8));
  }
  void u32(uint32_t v) {
    u16(uint16_t(v));
    u16(uint16_t(v >> 16));
  }
  void u64(uint64_t v) {
    u32(uint32_t(v));
    u32(uint32_t(v >> 32));
  }
  void words(const std::vector<uint16_t> &w) {
    out.reserve(out.size() + 2 * w.size());
    for (uint16_t x : w)
      u16(x);
  }
  void bytes(const std::vector<uint8_t> &b) {
    out.insert(out.end(), b.begin(), b.end());
  }
  void patch64(size_t at, uint64_t v) {
    for (unsigned i = 0; i < 8; ++i)
      out[at + i] = uint8_t(v >> (8 * i));
  }
};

/// The string table: every distinct string once, in order of first use.
class StringTable {
public:
  uint32_t ref(const std::string &s) {
    auto [it, fresh] = index.try_emplace(s, uint32_t(strings.size()));
    if (fresh)
      strings.push_back(s);
    return it->second;
  }
  std::vector<std::string> strings;

private:
  std::map<std::string, uint32_t> index;
};

void writeImage(Writer &w, StringTable &st, const CodeImage &img) {
  w.u64(img.active);
  w.u64(img.blocked);
  w.u32(uint32_t(img.routes.size()));
  for (const Route &r : img.routes) {
    w.u8(r.color);
    w.u8(r.inputs);
    w.u8(r.outputs);
    // verify() allows at most 4 positions; the byte holds what there is.
    w.u8(uint8_t(r.positions.size()));
    for (const RoutePosition &pos : r.positions) {
      w.u8(pos.inputs);
      w.u8(pos.outputs);
      w.u8(0);
      w.u8(0);
      w.u32(pos.count);
    }
  }
  w.u32(uint32_t(img.segments.size()));
  for (const Segment &s : img.segments) {
    w.u32(s.address);
    w.u32(st.ref(s.name));
    w.u32(st.ref(s.type));
    w.u32(uint32_t(s.words.size()));
    w.words(s.words);
  }
  w.u32(uint32_t(img.symbols.size()));
  for (const Symbol &s : img.symbols) {
    w.u8(uint8_t(s.kind));
    w.u8(s.taskKind);
    w.u8(s.taskId);
    w.u8(0);
    w.u32(st.ref(s.name));
    w.u32(s.address);
    w.u32(s.size);
  }
}

void writeGroup(Writer &w, StringTable &st, const Group &g) {
  w.u32(st.ref(g.name));
  w.u32(g.image);
  w.u32(g.x);
  w.u32(g.y);
  w.u32(g.width);
  w.u32(g.height);
  w.u32(uint32_t(g.layer));
  w.u8(g.single);
  w.u8(0);
  w.u8(0);
  w.u8(0);
  w.u32(uint32_t(g.params.size()));
  for (const Param &p : g.params) {
    w.u8(p.gpr);
    w.u8(0);
    w.u8(0);
    w.u8(0);
    w.u32(uint32_t(p.cx));
    w.u32(uint32_t(p.cy));
    w.u32(uint32_t(p.c0));
  }
  w.u32(uint32_t(g.perPe.size()));
  for (const PerPeSegment &s : g.perPe) {
    w.u32(s.address);
    w.u32(st.ref(s.name));
    w.u32(st.ref(s.type));
    w.u32(s.wordsPerPE);
    w.u64(s.words.size());
    w.words(s.words);
  }
}

void writeIo(Writer &w, StringTable &st, const IoStream &s) {
  w.u32(st.ref(s.name));
  w.u8(s.output);
  w.u8(uint8_t(s.edge));
  w.u8(s.color);
  w.u8(uint8_t(s.format));
  w.u8(uint8_t(s.dtype));
  w.u8(uint8_t(s.order));
  w.u8(s.skipZeros);
  w.u8(s.closeout);
  w.u32(s.firstRow);
  w.u32(s.endRow);
  w.u32(uint32_t(s.shape.size()));
  for (int64_t d : s.shape)
    w.u64(uint64_t(d));
}

void putSection(Writer &w, uint32_t id, const std::vector<uint8_t> &payload) {
  w.u32(id);
  w.u32(0);
  w.u64(payload.size());
  w.bytes(payload);
}

//===----------------------------------------------------------------------===//
// Reader
//===----------------------------------------------------------------------===//

/// A bounded view of the input. Every read checks the remaining length and
/// records the first error with the offset it happened at; later reads after
/// an error return zeros, and callers check `ok()` at record boundaries.
class Reader {
public:
  Reader(const uint8_t *data, size_t begin, size_t end)
      : data(data), pos(begin), end(end) {}

  bool ok() const { return error.empty(); }
  size_t offset() const { return pos; }
  size_t remaining() const { return end - pos; }

  bool fail(const std::string &msg) {
    if (error.empty()) {
      std::ostringstream os;
      os << "at byte " << pos << ": " << msg;
      error = os.str();
    }
    pos = end;
    return false;
  }
  bool need(size_t n, const char *what) {
    if (!ok())
      return false;
    if (n > remaining()) {
      std::ostringstream os;
      os << what << " needs " << n << " bytes but only " << remaining()
         << " remain";
      return fail(os.str());
    }
    return true;
  }

  uint8_t u8(const char *what) {
    if (!need(1, what))
      return 0;
    return data[pos++];
  }
  uint16_t u16(const char *what) {
    if (!need(2, what))
      return 0;
    uint16_t v = uint16_t(data[pos] | (data[pos + 1] << 8));
    pos += 2;
    return v;
  }
  uint32_t u32(const char *what) {
    if (!need(4, what))
      return 0;
    uint32_t v = 0;
    for (unsigned i = 0; i < 4; ++i)
      v |= uint32_t(data[pos + i]) << (8 * i);
    pos += 4;
    return v;
  }
  uint64_t u64(const char *what) {
    if (!need(8, what))
      return 0;
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; ++i)
      v |= uint64_t(data[pos + i]) << (8 * i);
    pos += 8;
    return v;
  }
  /// A reserved byte, which must be zero.
  void zero(const char *what) {
    size_t at = pos;
    uint8_t v = u8(what);
    if (ok() && v != 0) {
      pos = at;
      fail(std::string(what) + " is reserved and must be 0, got " +
           std::to_string(v));
    }
  }
  bool flag(const char *what) {
    size_t at = pos;
    uint8_t v = u8(what);
    if (ok() && v > 1) {
      pos = at;
      fail(std::string(what) + " must be 0 or 1, got " + std::to_string(v));
    }
    return v == 1;
  }
  /// A record count, checked against the bytes left for records of at least
  /// `minBytes` each, so that reserving `count` elements is always justified
  /// by the input.
  uint64_t count(uint64_t raw, size_t minBytes, const char *what) {
    if (!ok())
      return 0;
    if (raw > remaining() / minBytes) {
      std::ostringstream os;
      os << what << " count " << raw << " needs at least " << raw
         << " x " << minBytes << " bytes but only " << remaining()
         << " remain";
      fail(os.str());
      return 0;
    }
    return raw;
  }
  void words(std::vector<uint16_t> &out, uint64_t n, const char *what) {
    if (n > remaining() / 2) {
      std::ostringstream os;
      os << what << " holds " << n << " words (" << n
         << " x 2 bytes) but only " << remaining() << " bytes remain";
      fail(os.str());
      return;
    }
    out.resize(size_t(n));
    for (uint64_t i = 0; i < n; ++i)
      out[i] = uint16_t(data[pos + 2 * i] | (data[pos + 2 * i + 1] << 8));
    pos += 2 * size_t(n);
  }
  std::string bytes(size_t n) {
    std::string s(reinterpret_cast<const char *>(data + pos), n);
    pos += n;
    return s;
  }

  std::string error;

private:
  const uint8_t *data;
  size_t pos, end;
};

/// Resolves string references against the string table.
struct Strings {
  std::vector<std::string> table;
  std::string get(Reader &r, const char *what) {
    size_t at = r.offset();
    uint32_t i = r.u32(what);
    if (!r.ok())
      return "";
    if (i >= table.size()) {
      std::ostringstream os;
      os << what << " names string " << i << " but the string table has "
         << table.size();
      r.fail(os.str() + " (reference at byte " + std::to_string(at) + ")");
      return "";
    }
    return table[i];
  }
};

bool readStrings(Reader &r, Strings &st) {
  uint64_t n = r.count(r.u32("string count"), kStringMin, "string");
  st.table.reserve(size_t(n));
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    uint32_t len = r.u32("string length");
    if (!r.need(len, "string contents"))
      return false;
    st.table.push_back(r.bytes(len));
  }
  return r.ok();
}

bool readImage(Reader &r, Strings &st, CodeImage &img, uint16_t version) {
  img.active = r.u64("active bits");
  img.blocked = r.u64("block bits");
  uint64_t n = r.count(r.u32("route count"), kRouteBytes, "route");
  img.routes.resize(size_t(n));
  for (Route &rt : img.routes) {
    if (!r.ok())
      return false;
    rt.color = r.u8("route color");
    rt.inputs = r.u8("route inputs");
    rt.outputs = r.u8("route outputs");
    // Version 1 has a pad byte where version 2 counts the positions.
    if (version < 2) {
      r.zero("route padding");
      continue;
    }
    uint64_t np = r.count(r.u8("number of route positions"), kPositionBytes,
                          "route position");
    rt.positions.resize(size_t(np));
    for (RoutePosition &pos : rt.positions) {
      pos.inputs = r.u8("route position inputs");
      pos.outputs = r.u8("route position outputs");
      r.zero("route position padding");
      r.zero("route position padding");
      pos.count = r.u32("route position count");
    }
  }
  n = r.count(r.u32("segment count"), kSegmentMin, "segment");
  img.segments.resize(size_t(n));
  for (Segment &s : img.segments) {
    if (!r.ok())
      return false;
    s.address = r.u32("segment address");
    s.name = st.get(r, "segment name");
    s.type = st.get(r, "segment type");
    uint32_t words = r.u32("segment word count");
    if (!r.ok())
      return false;
    r.words(s.words, words, "segment");
  }
  n = r.count(r.u32("symbol count"), kSymbolBytes, "symbol");
  img.symbols.resize(size_t(n));
  for (Symbol &s : img.symbols) {
    if (!r.ok())
      return false;
    size_t at = r.offset();
    uint8_t kind = r.u8("symbol kind");
    if (r.ok() && kind > uint8_t(SymbolKind::Label)) {
      r.fail("symbol kind " + std::to_string(kind) +
             " does not exist (0 task, 1 dsd, 2 xdsd, 3 label) (record at "
             "byte " +
             std::to_string(at) + ")");
      return false;
    }
    s.kind = SymbolKind(kind);
    s.taskKind = r.u8("symbol task kind");
    if (r.ok() && s.taskKind > 2) {
      r.fail("symbol task kind " + std::to_string(s.taskKind) +
             " does not exist (0 data, 1 local, 2 control)");
      return false;
    }
    s.taskId = r.u8("symbol task id");
    r.zero("symbol padding");
    s.name = st.get(r, "symbol name");
    s.address = r.u32("symbol address");
    s.size = r.u32("symbol size");
  }
  return r.ok();
}

bool readGroup(Reader &r, Strings &st, Group &g) {
  g.name = st.get(r, "group name");
  g.image = r.u32("group image");
  g.x = r.u32("group x");
  g.y = r.u32("group y");
  g.width = r.u32("group width");
  g.height = r.u32("group height");
  g.layer = int32_t(r.u32("group layer"));
  g.single = r.flag("group single flag");
  r.zero("group padding");
  r.zero("group padding");
  r.zero("group padding");
  uint64_t n = r.count(r.u32("param count"), kParamBytes, "param");
  g.params.resize(size_t(n));
  for (Param &p : g.params) {
    p.gpr = r.u8("param gpr");
    r.zero("param padding");
    r.zero("param padding");
    r.zero("param padding");
    p.cx = int32_t(r.u32("param cx"));
    p.cy = int32_t(r.u32("param cy"));
    p.c0 = int32_t(r.u32("param c0"));
  }
  n = r.count(r.u32("per-PE segment count"), kPerPeMin, "per-PE segment");
  g.perPe.resize(size_t(n));
  for (PerPeSegment &s : g.perPe) {
    if (!r.ok())
      return false;
    s.address = r.u32("per-PE segment address");
    s.name = st.get(r, "per-PE segment name");
    s.type = st.get(r, "per-PE segment type");
    s.wordsPerPE = r.u32("per-PE segment words per PE");
    uint64_t words = r.u64("per-PE segment word count");
    if (!r.ok())
      return false;
    r.words(s.words, words, "per-PE segment");
  }
  return r.ok();
}

bool readIo(Reader &r, Strings &st, IoStream &s) {
  s.name = st.get(r, "I/O stream name");
  s.output = r.flag("I/O stream direction");
  size_t at = r.offset();
  uint8_t edge = r.u8("I/O stream edge");
  if (r.ok() && edge != uint8_t(wt::Dir::West) &&
      edge != uint8_t(wt::Dir::East)) {
    r.fail("I/O stream edge " + std::to_string(edge) +
           " is neither west (3) nor east (1) (byte " + std::to_string(at) +
           ")");
    return false;
  }
  s.edge = wt::Dir(edge);
  s.color = r.u8("I/O stream color");
  uint8_t fmt = r.u8("I/O stream format");
  if (r.ok() && fmt >= wt::kNumPayloadFormats) {
    r.fail("I/O stream payload format " + std::to_string(fmt) +
           " does not exist (0 dense32, 1 dense16x2, 2 sparse16)");
    return false;
  }
  s.format = wt::PayloadFormat(fmt);
  uint8_t dtype = r.u8("I/O stream element type");
  if (r.ok() && (dtype == 0 || dtype > uint8_t(wt::ElemType::I32))) {
    r.fail("I/O stream element type " + std::to_string(dtype) +
           " does not exist (1 f32, 2 f16, 3 i16, 4 i32)");
    return false;
  }
  s.dtype = wt::ElemType(dtype);
  at = r.offset();
  uint8_t order = r.u8("I/O stream element order");
  if (r.ok() && order >= kNumIoOrders) {
    r.fail("I/O stream element order " + std::to_string(order) +
           " does not exist (0 row-major, 1 feature map) (byte " +
           std::to_string(at) + ")");
    return false;
  }
  s.order = IoOrder(order);
  at = r.offset();
  uint8_t skip = r.u8("I/O stream zero skipping");
  if (r.ok() && skip > 1) {
    r.fail("I/O stream zero skipping " + std::to_string(skip) +
           " is neither 0 nor 1 (byte " + std::to_string(at) + ")");
    return false;
  }
  s.skipZeros = skip;
  s.closeout = r.u8("I/O stream closeout index");
  s.firstRow = r.u32("I/O stream first row");
  s.endRow = r.u32("I/O stream end row");
  uint64_t rank = r.count(r.u32("I/O stream rank"), 8, "I/O stream dimension");
  s.shape.resize(size_t(rank));
  for (int64_t &d : s.shape)
    d = int64_t(r.u64("I/O stream dimension"));
  return r.ok();
}

std::optional<Program> fail(std::string *error, const std::string &msg) {
  if (error)
    *error = msg;
  return std::nullopt;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

uint64_t weft::binary::fnv1a64(const uint8_t *data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

void weft::binary::mergeIdenticalImages(Program &p) {
  // Key each image by its own serialization (strings inline), so that
  // equality of keys is exactly CodeImage::operator==.
  std::map<std::vector<uint8_t>, uint32_t> seen;
  std::vector<uint32_t> remap(p.images.size());
  std::vector<CodeImage> kept;
  for (size_t i = 0; i < p.images.size(); ++i) {
    Writer w;
    StringTable st;
    writeImage(w, st, p.images[i]);
    for (const std::string &s : st.strings) {
      w.u64(s.size());
      w.out.insert(w.out.end(), s.begin(), s.end());
    }
    auto [it, fresh] = seen.try_emplace(std::move(w.out), uint32_t(kept.size()));
    if (fresh)
      kept.push_back(std::move(p.images[i]));
    remap[i] = it->second;
  }
  p.images = std::move(kept);
  for (Group &g : p.groups)
    if (g.image < remap.size())
      g.image = remap[g.image];
}

std::vector<uint8_t> weft::binary::write(const Program &input) {
  Program p = input;
  mergeIdenticalImages(p);

  StringTable st;
  Writer prog, layers, images, groups, io;
  prog.u32(st.ref(p.name));
  layers.u32(uint32_t(p.layers.size()));
  for (const std::string &l : p.layers)
    layers.u32(st.ref(l));
  images.u32(uint32_t(p.images.size()));
  for (const CodeImage &img : p.images)
    writeImage(images, st, img);
  groups.u32(uint32_t(p.groups.size()));
  for (const Group &g : p.groups)
    writeGroup(groups, st, g);
  io.u32(uint32_t(p.io.size()));
  for (const IoStream &s : p.io)
    writeIo(io, st, s);
  Writer strings;
  strings.u32(uint32_t(st.strings.size()));
  for (const std::string &s : st.strings) {
    strings.u32(uint32_t(s.size()));
    strings.out.insert(strings.out.end(), s.begin(), s.end());
  }

  Writer w;
  for (uint8_t b : kMagic)
    w.u8(b);
  w.u16(kFormatVersion);
  w.u16(0); // flags
  const wt::TargetConfig &t = p.target;
  w.u32(t.width);
  w.u32(t.height);
  w.u32(t.memoryBytes);
  w.u32(t.routableColors);
  w.u32(t.routerQueueDepth);
  w.u32(t.ceQueueDepth);
  w.u32(kNumSections);
  w.u32(0); // reserved
  size_t sizeAt = w.out.size();
  w.u64(0); // total size, patched below
  putSection(w, kStrings, strings.out);
  putSection(w, kProgram, prog.out);
  putSection(w, kLayers, layers.out);
  putSection(w, kImages, images.out);
  putSection(w, kGroups, groups.out);
  putSection(w, kIo, io.out);
  w.patch64(sizeAt, w.out.size() + kChecksumBytes);
  w.u64(fnv1a64(w.out.data(), w.out.size()));
  return std::move(w.out);
}

std::optional<Program> weft::binary::read(const uint8_t *data, size_t size,
                                          std::string *error) {
  if (!data && size)
    return fail(error, "no data");
  if (size < kHeaderBytes + kChecksumBytes)
    return fail(error, "file of " + std::to_string(size) +
                           " bytes is shorter than the " +
                           std::to_string(kHeaderBytes + kChecksumBytes) +
                           "-byte header and checksum of a .wfb file");
  if (std::memcmp(data, kMagic, 4) != 0)
    return fail(error, "not a .wfb file: the first four bytes are not "
                       "\"WFB\\0\"");
  Reader h(data, 4, kHeaderBytes);
  uint16_t version = h.u16("version");
  if (version < kOldestFormatVersion || version > kFormatVersion)
    return fail(error, "format version " + std::to_string(version) +
                           " is not supported (this reader knows versions " +
                           std::to_string(kOldestFormatVersion) + " to " +
                           std::to_string(kFormatVersion) + ")");
  uint16_t flags = h.u16("flags");
  if (flags != 0)
    return fail(error, "at byte 6: flags 0x" + [&] {
      std::ostringstream os;
      os << std::hex << flags;
      return os.str();
    }() + " are reserved and must be 0");
  Program p;
  p.target.width = h.u32("width");
  p.target.height = h.u32("height");
  p.target.memoryBytes = h.u32("memory bytes");
  p.target.routableColors = h.u32("routable colors");
  p.target.routerQueueDepth = h.u32("router queue depth");
  p.target.ceQueueDepth = h.u32("CE queue depth");
  uint32_t sections = h.u32("section count");
  uint32_t reserved = h.u32("reserved");
  uint64_t total = h.u64("total size");
  if (sections != kNumSections)
    return fail(error, "at byte 32: section count " + std::to_string(sections) +
                           " is not " + std::to_string(kNumSections) +
                           " (versions 1 and 2)");
  if (reserved != 0)
    return fail(error, "at byte 36: reserved header word is " +
                           std::to_string(reserved) + ", must be 0");
  if (total != size)
    return fail(error, "at byte 40: header gives a total size of " +
                           std::to_string(total) + " bytes but the file has " +
                           std::to_string(size) +
                           (total > size ? " (truncated?)" : ""));
  uint64_t stored = 0;
  for (unsigned i = 0; i < 8; ++i)
    stored |= uint64_t(data[size - 8 + i]) << (8 * i);
  uint64_t actual = fnv1a64(data, size - kChecksumBytes);
  if (stored != actual) {
    std::ostringstream os;
    os << "at byte " << size - 8 << ": checksum 0x" << std::hex << stored
       << " does not match the contents (0x" << actual << "); the file is "
       << "corrupt";
    return fail(error, os.str());
  }

  Reader r(data, kHeaderBytes, size - kChecksumBytes);
  Strings st;
  for (uint32_t id = 1; id <= kNumSections; ++id) {
    uint32_t got = r.u32("section id");
    uint32_t pad = r.u32("section reserved word");
    uint64_t len = r.u64("section length");
    if (!r.ok())
      break;
    if (got != id) {
      r.fail("expected section " + std::to_string(id) + " (" +
             sectionName(id) + "), found section id " + std::to_string(got));
      break;
    }
    if (pad != 0) {
      r.fail(std::string("reserved word of section ") + sectionName(id) +
             " is " + std::to_string(pad) + ", must be 0");
      break;
    }
    if (len > r.remaining()) {
      r.fail(std::string("section ") + sectionName(id) + " claims " +
             std::to_string(len) + " bytes but only " +
             std::to_string(r.remaining()) + " remain");
      break;
    }
    // Each section is parsed in a reader of exactly its length, so a record
    // can never run into the next section.
    Reader s(data, r.offset(), r.offset() + size_t(len));
    switch (id) {
    case kStrings:
      readStrings(s, st);
      break;
    case kProgram:
      p.name = st.get(s, "program name");
      break;
    case kLayers: {
      uint64_t n = s.count(s.u32("layer count"), 4, "layer");
      p.layers.reserve(size_t(n));
      for (uint64_t i = 0; i < n && s.ok(); ++i)
        p.layers.push_back(st.get(s, "layer name"));
      break;
    }
    case kImages: {
      uint64_t n = s.count(s.u32("image count"), kImageMin, "image");
      p.images.resize(size_t(n));
      for (CodeImage &img : p.images)
        if (!readImage(s, st, img, version))
          break;
      break;
    }
    case kGroups: {
      uint64_t n = s.count(s.u32("group count"), kGroupMin, "group");
      p.groups.resize(size_t(n));
      for (Group &g : p.groups)
        if (!readGroup(s, st, g))
          break;
      break;
    }
    case kIo: {
      uint64_t n = s.count(s.u32("I/O stream count"), kIoMin, "I/O stream");
      p.io.resize(size_t(n));
      for (IoStream &io : p.io)
        if (!readIo(s, st, io))
          break;
      break;
    }
    }
    if (s.ok() && s.remaining() != 0)
      s.fail(std::to_string(s.remaining()) + " unused bytes at the end of "
             "section " + sectionName(id));
    if (!s.ok()) {
      r.error = "section " + std::string(sectionName(id)) + ", " + s.error;
      break;
    }
    r.need(size_t(len), "section"); // cannot fail: checked above
    r.bytes(size_t(len));
  }
  if (r.ok() && r.remaining() != 0)
    r.fail(std::to_string(r.remaining()) +
           " bytes between the last section and the checksum");
  if (!r.ok())
    return fail(error, r.error);
  std::string err = verify(p);
  if (!err.empty())
    return fail(error, "invalid program: " + err);
  return p;
}

std::optional<Program> weft::binary::readFile(const std::string &path,
                                              std::string *error) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(error, "cannot open '" + path + "'");
  in.seekg(0, std::ios::end);
  std::streamoff len = in.tellg();
  if (len < 0)
    return fail(error, "cannot read '" + path + "'");
  in.seekg(0, std::ios::beg);
  std::vector<uint8_t> bytes(static_cast<size_t>(len));
  if (len && !in.read(reinterpret_cast<char *>(bytes.data()), len))
    return fail(error, "cannot read '" + path + "'");
  std::string err;
  std::optional<Program> p = read(bytes.data(), bytes.size(), &err);
  if (!p && error)
    *error = path + ": " + err;
  return p;
}

bool weft::binary::writeFile(const std::string &path, const Program &p,
                             std::string *error) {
  std::vector<uint8_t> bytes = write(p);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out)
    out.write(reinterpret_cast<const char *>(bytes.data()),
              std::streamsize(bytes.size()));
  if (!out) {
    if (error)
      *error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}
