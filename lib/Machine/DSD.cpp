//===- DSD.cpp - Data structure descriptor encodings ----------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Machine/DSD.h"
#include "weft/Machine/Target.h"

#include <sstream>

using namespace weft::machine;

const char *weft::machine::dsdKindName(DsdKind k) {
  switch (k) {
  case DsdKind::FabricIn:
    return "fabin";
  case DsdKind::FabricOut:
    return "fabout";
  case DsdKind::Mem1D:
    return "mem1d";
  case DsdKind::Mem4D:
    return "mem4d";
  case DsdKind::Fifo:
    return "fifo";
  }
  return "?";
}

namespace {
/// Field placement helpers: put/get `width` bits at `lo`.
struct Bits {
  uint64_t v = 0;
  void put(unsigned lo, unsigned width, uint64_t x) {
    uint64_t mask = (width == 64) ? ~0ull : ((1ull << width) - 1);
    v |= (x & mask) << lo;
  }
  uint64_t get(unsigned lo, unsigned width) const {
    uint64_t mask = (width == 64) ? ~0ull : ((1ull << width) - 1);
    return (v >> lo) & mask;
  }
};
} // namespace

// Layouts (bit lo, width); bits [47:45] are the kind in every DSD.
//  fabin : len 0/15, color 15/5, fmt 20/2, acEn 22/1, ac 23/6, term 29/1,
//          ue 30/1, utid 31/3
//  fabout: len 0/15, color 15/5, fmt 20/2, acEn 22/1, ac 23/6, ctrl 29/1,
//          ue 30/1, utid 31/3, index6 34/6, wli 40/1, nz 41/1
//  mem1d : len 0/15, base 15/15, stride 30/9 (signed), ix 39/1, sl 40/1
//  mem4d : base 15/15, xdsr 30/3, ix 39/1
//  fifo  : cap 0/15, base 15/15, pushEn 30/1, pushAc 31/6, popEn 37/1,
//          popAc 38/6
static constexpr unsigned kKindLo = 45;

uint64_t Dsd::encode() const {
  Bits b;
  b.put(kKindLo, 3, unsigned(kind));
  switch (kind) {
  case DsdKind::FabricIn:
  case DsdKind::FabricOut:
    b.put(0, 15, length);
    b.put(15, 5, color);
    b.put(20, 2, unsigned(format));
    b.put(22, 1, onDone.enabled);
    b.put(23, 6, onDone.enabled ? onDone.color : 0);
    b.put(29, 1, kind == DsdKind::FabricIn ? terminateOnControl : control);
    b.put(30, 1, microthread);
    b.put(31, 3, utid);
    if (kind == DsdKind::FabricOut) {
      b.put(34, 6, index6);
      b.put(40, 1, indexFromGpr4);
      b.put(41, 1, skipZeros);
    }
    break;
  case DsdKind::Mem1D:
    b.put(0, 15, length);
    b.put(15, 15, base);
    b.put(30, 9, uint64_t(int64_t(stride)));
    b.put(39, 1, indexed);
    b.put(40, 1, sliced);
    break;
  case DsdKind::Mem4D:
    b.put(15, 15, base);
    b.put(30, 3, xdsr);
    b.put(39, 1, indexed);
    break;
  case DsdKind::Fifo:
    b.put(0, 15, length);
    b.put(15, 15, base);
    b.put(30, 1, onPush.enabled);
    b.put(31, 6, onPush.enabled ? onPush.color : 0);
    b.put(37, 1, onPop.enabled);
    b.put(38, 6, onPop.enabled ? onPop.color : 0);
    break;
  }
  return b.v;
}

std::optional<Dsd> Dsd::decode(uint64_t bits, std::string *error) {
  auto bad = [&](const std::string &m) -> std::optional<Dsd> {
    if (error)
      *error = m;
    return std::nullopt;
  };
  if (bits >> kBits)
    return bad("DSD has bits set above bit 47");
  Bits b{bits};
  unsigned k = unsigned(b.get(kKindLo, 3));
  if (k >= kNumDsdKinds)
    return bad("DSD kind " + std::to_string(k) + " is reserved");
  Dsd d;
  d.kind = DsdKind(k);
  switch (d.kind) {
  case DsdKind::FabricIn:
  case DsdKind::FabricOut: {
    d.length = uint32_t(b.get(0, 15));
    d.color = uint8_t(b.get(15, 5));
    unsigned fmt = unsigned(b.get(20, 2));
    if (fmt >= kNumPayloadFormats)
      return bad("fabric DSD payload format 3 is reserved");
    d.format = PayloadFormat(fmt);
    d.onDone = {bool(b.get(22, 1)), uint8_t(b.get(23, 6))};
    if (d.kind == DsdKind::FabricIn)
      d.terminateOnControl = b.get(29, 1);
    else
      d.control = b.get(29, 1);
    d.microthread = b.get(30, 1);
    d.utid = uint8_t(b.get(31, 3));
    if (d.kind == DsdKind::FabricOut) {
      d.index6 = uint8_t(b.get(34, 6));
      d.indexFromGpr4 = b.get(40, 1);
      d.skipZeros = b.get(41, 1);
    }
    break;
  }
  case DsdKind::Mem1D: {
    d.length = uint32_t(b.get(0, 15));
    d.base = uint32_t(b.get(15, 15));
    int32_t s = int32_t(b.get(30, 9));
    d.stride = (s & 0x100) ? s - 0x200 : s;
    d.indexed = b.get(39, 1);
    d.sliced = b.get(40, 1);
    break;
  }
  case DsdKind::Mem4D:
    d.base = uint32_t(b.get(15, 15));
    d.xdsr = uint8_t(b.get(30, 3));
    d.indexed = b.get(39, 1);
    if (d.xdsr >= Arch::kNumXDSRs)
      return bad("4D DSD names XDSR " + std::to_string(d.xdsr) +
                 " (there are " + std::to_string(Arch::kNumXDSRs) + ")");
    break;
  case DsdKind::Fifo:
    d.length = uint32_t(b.get(0, 15));
    d.base = uint32_t(b.get(15, 15));
    d.onPush = {bool(b.get(30, 1)), uint8_t(b.get(31, 6))};
    d.onPop = {bool(b.get(37, 1)), uint8_t(b.get(38, 6))};
    break;
  }
  return d;
}

std::string Dsd::validate(const Target &t) const {
  std::ostringstream os;
  bool fabric = kind == DsdKind::FabricIn || kind == DsdKind::FabricOut;
  if (kind != DsdKind::Mem4D && length > Arch::kMaxVectorLength) {
    os << dsdKindName(kind) << " DSD length " << length
       << " exceeds the 15-bit field (max " << Arch::kMaxVectorLength << ")";
    return os.str();
  }
  if (fabric) {
    if (!t.isRoutableColor(color)) {
      os << dsdKindName(kind) << " DSD color " << unsigned(color)
         << " is not routable (colors 0.." << t.routableColors() - 1 << ")";
      return os.str();
    }
    if (utid >= Arch::kNumMicrothreads) {
      os << "microthread " << unsigned(utid) << " does not exist (0.."
         << Arch::kNumMicrothreads - 1 << ")";
      return os.str();
    }
    if (onDone.enabled && onDone.color >= Arch::kTaskIds) {
      os << "activation color " << unsigned(onDone.color)
         << " is not a task id (0.." << Arch::kTaskIds - 1 << ")";
      return os.str();
    }
    if (kind == DsdKind::FabricOut && index6 >= 64) {
      os << "fabout index " << unsigned(index6) << " exceeds 6 bits";
      return os.str();
    }
    if (kind == DsdKind::FabricOut && skipZeros &&
        (format != PayloadFormat::Sparse16 || control)) {
      os << "a sparse send (nz) needs the sparse16 format and no ctrl";
      return os.str();
    }
    return "";
  }
  if (base >= t.memoryWords()) {
    os << dsdKindName(kind) << " DSD base word " << base
       << " is outside the PE memory of " << t.memoryWords() << " words";
    return os.str();
  }
  if (kind == DsdKind::Mem1D && (stride < -256 || stride > 255)) {
    os << "mem1d stride " << stride << " does not fit the signed 9-bit field";
    return os.str();
  }
  if (kind == DsdKind::Mem1D && sliced && stride != 1) {
    os << "a sliced mem1d (sl) needs stride 1, not " << stride;
    return os.str();
  }
  if (kind == DsdKind::Mem4D && xdsr >= Arch::kNumXDSRs) {
    os << "mem4d DSD names XDSR " << unsigned(xdsr) << " (0.."
       << Arch::kNumXDSRs - 1 << ")";
    return os.str();
  }
  if (kind == DsdKind::Fifo) {
    if (length == 0) {
      os << "fifo capacity is 0";
      return os.str();
    }
    for (const Activation *a : {&onPush, &onPop})
      if (a->enabled && a->color >= Arch::kTaskIds) {
        os << "fifo activation color " << unsigned(a->color)
           << " is not a task id";
        return os.str();
      }
  }
  return "";
}

bool Dsd::operator==(const Dsd &o) const { return encode() == o.encode(); }

std::string Dsd::str() const {
  std::ostringstream os;
  os << dsdKindName(kind);
  switch (kind) {
  case DsdKind::FabricIn:
  case DsdKind::FabricOut:
    os << " len=" << length << " color=" << unsigned(color)
       << " fmt=" << payloadFormatName(format);
    if (onDone.enabled)
      os << " ac=" << unsigned(onDone.color);
    if (kind == DsdKind::FabricIn && terminateOnControl)
      os << " term";
    if (kind == DsdKind::FabricOut && control)
      os << " ctrl index=" << unsigned(index6);
    if (kind == DsdKind::FabricOut && skipZeros)
      os << " nz";
    if (microthread)
      os << " ut=" << unsigned(utid);
    break;
  case DsdKind::Mem1D:
    os << " len=" << length << " base=" << base << " stride=" << stride;
    if (indexed)
      os << " ix";
    if (sliced)
      os << " sl";
    break;
  case DsdKind::Mem4D:
    os << " base=" << base << " xdsr=" << unsigned(xdsr);
    if (indexed)
      os << " ix";
    break;
  case DsdKind::Fifo:
    os << " cap=" << length << " base=" << base;
    if (onPush.enabled)
      os << " push_ac=" << unsigned(onPush.color);
    if (onPop.enabled)
      os << " pop_ac=" << unsigned(onPop.color);
    break;
  }
  return os.str();
}

// XDSD layout: len0 0/12, len1 12/8, len2 20/8, len3 28/8, sel0..3 36/3 each.
uint64_t Xdsd::encode() const {
  Bits b;
  b.put(0, 12, len[0]);
  b.put(12, 8, len[1]);
  b.put(20, 8, len[2]);
  b.put(28, 8, len[3]);
  for (unsigned i = 0; i < 4; ++i)
    b.put(36 + 3 * i, 3, strideSel[i]);
  return b.v;
}

std::optional<Xdsd> Xdsd::decode(uint64_t bits, std::string *error) {
  if (bits >> kBits) {
    if (error)
      *error = "XDSD has bits set above bit 50";
    return std::nullopt;
  }
  if (bits >> 48) {
    if (error)
      *error = "XDSD has reserved bits [50:48] set";
    return std::nullopt;
  }
  Bits b{bits};
  Xdsd x;
  x.len[0] = uint16_t(b.get(0, 12));
  x.len[1] = uint16_t(b.get(12, 8));
  x.len[2] = uint16_t(b.get(20, 8));
  x.len[3] = uint16_t(b.get(28, 8));
  for (unsigned i = 0; i < 4; ++i)
    x.strideSel[i] = uint8_t(b.get(36 + 3 * i, 3));
  std::string err = x.validate();
  if (!err.empty()) {
    if (error)
      *error = err;
    return std::nullopt;
  }
  return x;
}

std::string Xdsd::validate() const {
  std::ostringstream os;
  for (unsigned i = 0; i < 4; ++i) {
    unsigned limit = (i == 0 ? (1u << kLen0Bits) : (1u << kLenBits)) - 1;
    if (len[i] == 0 || len[i] > limit) {
      os << "XDSD dimension " << i << " length " << len[i]
         << " not in [1, " << limit << "]";
      return os.str();
    }
    // Selects 0..5 name stride registers, 6 and 7 the constants 1 and 0.
    if (strideSel[i] > 7) {
      os << "XDSD dimension " << i << " stride select "
         << unsigned(strideSel[i]) << " does not fit 3 bits";
      return os.str();
    }
  }
  return "";
}

bool Xdsd::operator==(const Xdsd &o) const { return encode() == o.encode(); }
