//===- WaveletOps.cpp - wavelet operations ----------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "wavelet/WaveletOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <map>

using namespace mlir;
using namespace weft::wavelet;
// The shared vocabulary: target, rectangles, ports and the DirSet directive.
using namespace weft::common;
namespace wt = weft::machine;

#include "wavelet/WaveletEnums.cpp.inc"

// (RouteOp positions print and parse with weft::common's RoutePositions
// directive, which fabric.switch shares.)

#define GET_OP_CLASSES
#include "wavelet/WaveletOps.cpp.inc"

//===----------------------------------------------------------------------===//
// ProgramOp
//===----------------------------------------------------------------------===//

RegionKind ProgramOp::getRegionKind(unsigned) { return RegionKind::Graph; }

/// The rectangle of a PE or PE group, null for other ops.
static RectAttr peRect(Operation &op) {
  if (auto g = dyn_cast<PeGroupOp>(op))
    return g.getRect();
  if (auto p = dyn_cast<PeOp>(op))
    return p.getRect();
  return {};
}

LogicalResult ProgramOp::verifyRegions() {
  wt::Target t = getTarget().getModel();
  SmallVector<std::pair<Operation *, RectAttr>> seen;
  // Which PE is taken, so that the check stays linear in the PEs (a
  // program of many copies has hundreds of thousands of groups); the
  // earliest group a new one overlaps is looked up only for the message.
  std::vector<bool> taken;
  for (Operation &op : getBody().front()) {
    RectAttr r = peRect(op);
    if (!r)
      continue;
    StringRef name = mlir::SymbolTable::getSymbolName(&op).getValue();
    if (!r.fits(t))
      return op.emitOpError() << "PEs " << rectString(r) << " of @" << name
                              << " leave the " << t.width() << "x"
                              << t.height() << " fabric";
    if (taken.empty())
      taken.assign(size_t(t.width()) * t.height(), false);
    bool overlaps = false;
    for (int64_t y = r.getY(); y < r.getY() + r.getHeight() && !overlaps; ++y)
      for (int64_t x = r.getX(); x < r.getX() + r.getWidth(); ++x) {
        size_t cell = size_t(y) * t.width() + size_t(x);
        if (taken[cell]) {
          overlaps = true;
          break;
        }
      }
    if (overlaps)
      for (auto &[other, otherRect] : seen)
        if (r.overlaps(otherRect))
          return op.emitOpError()
                 << "PEs " << rectString(r) << " of @" << name
                 << " overlap PEs " << rectString(otherRect) << " of @"
                 << mlir::SymbolTable::getSymbolName(other).getValue();
    for (int64_t y = r.getY(); y < r.getY() + r.getHeight(); ++y)
      for (int64_t x = r.getX(); x < r.getX() + r.getWidth(); ++x)
        taken[size_t(y) * t.width() + size_t(x)] = true;
    seen.push_back({&op, r});
  }
  return success();
}

//===----------------------------------------------------------------------===//
// PE bodies (shared by pe and pe_group)
//===----------------------------------------------------------------------===//

/// Words the code of a PE body occupies: the task table and one slot per
/// instruction, starting at word 0.
static int64_t codeWords(Block &body) {
  int64_t slots = wt::Arch::kTaskTableSlots;
  for (auto task : body.getOps<TaskOp>())
    for (Operation &op : task.getBody().front())
      if (isa<InstOp, DsrOp, JumpOp>(op))
        ++slots;
  return slots * wt::Arch::kWordsPerSlot;
}

namespace {
/// One occupied word range of a PE's memory, for overlap checks.
struct MemRange {
  int64_t begin, end;
  std::string what;
  Operation *op;
};
} // namespace

static LogicalResult verifyPeBody(Operation *pe, RectAttr rect, Block &body) {
  std::optional<wt::Target> maybeTarget = getEnclosingTarget(pe);
  if (!maybeTarget)
    return success();
  const wt::Target &t = *maybeTarget;
  std::string peName = SymbolTable::getSymbolName(pe).getValue().str();

  std::map<int64_t, RouteOp> routes;
  std::map<int64_t, ParamOp> params;
  std::map<std::pair<bool, int64_t>, TaskOp> tasks;
  std::vector<MemRange> ranges;
  ranges.push_back({0, codeWords(body), "code", pe});

  for (Operation &op : body) {
    if (auto route = dyn_cast<RouteOp>(op)) {
      int64_t c = int64_t(route.getColor());
      if (!t.isRoutableColor(c))
        return route.emitOpError() << "color " << c
                                   << " is not routable on this target "
                                      "(colors 0.."
                                   << t.routableColors() - 1 << ")";
      auto [it, fresh] = routes.try_emplace(c, route);
      if (!fresh)
        return route.emitOpError()
               << "color " << c << " is routed twice on @" << peName;
      unsigned in = unsigned(route.getInputs()),
               out = unsigned(route.getOutputs());
      if (!in || !out || in > wt::kAllDirs || out > wt::kAllDirs)
        return route.emitOpError() << "needs at least one input and one "
                                      "output port";
      for (unsigned d = 0; d < wt::kNumDirs; ++d) {
        if (!((in | out) & (1u << d)))
          continue;
        // A port exists on every PE of the rectangle iff it exists on the
        // corner PEs (only north and south can be missing).
        for (auto [x, y] : {std::pair(int64_t(rect.getX()), int64_t(rect.getY())),
                            std::pair(int64_t(rect.getX()) + rect.getWidth() - 1,
                                      int64_t(rect.getY()) + rect.getHeight() - 1)})
          if (!t.hasLink(x, y, wt::Dir(d)))
            return route.emitOpError()
                   << "color " << c << " uses the "
                   << wt::dirName(wt::Dir(d)) << " port of PE (" << x << ", "
                   << y << "), which has no " << wt::dirName(wt::Dir(d))
                   << " neighbour";
      }
    } else if (auto param = dyn_cast<ParamOp>(op)) {
      int64_t g = int64_t(param.getGpr());
      if (g < 0 || g >= int64_t(wt::Arch::kNumGPRs))
        return param.emitOpError() << "gpr " << g << " does not exist (0.."
                                   << wt::Arch::kNumGPRs - 1 << ")";
      AffineMap map = param.getMap();
      if (map.getNumDims() != 2 || map.getNumSymbols() != 0 ||
          map.getNumResults() != 1)
        return param.emitOpError()
               << "map must be (x, y) -> (value), got " << param.getMapAttr();
      if (!params.try_emplace(g, param).second)
        return param.emitOpError() << "gpr " << g << " is initialised twice";
    } else if (auto task = dyn_cast<TaskOp>(op)) {
      int64_t id = int64_t(task.getId());
      switch (task.getKind()) {
      case TaskKind::data:
        if (!t.isRoutableColor(id))
          return task.emitOpError()
                 << "data task color " << id
                 << " is not routable on this target (colors 0.."
                 << t.routableColors() - 1 << ")";
        break;
      case TaskKind::local:
        if (id < int64_t(wt::Arch::kFirstLocalColor) ||
            id >= int64_t(wt::Arch::kTaskIds))
          return task.emitOpError()
                 << "local task color " << id << " is not a local color ("
                 << wt::Arch::kFirstLocalColor << ".."
                 << wt::Arch::kTaskIds - 1 << ")";
        break;
      case TaskKind::control:
        if (id < 0 || id >= int64_t(wt::Arch::kControlEntries))
          return task.emitOpError()
                 << "control entry " << id << " is not in 0.."
                 << wt::Arch::kControlEntries - 1;
        break;
      }
      auto key = std::make_pair(task.getKind() == TaskKind::control, id);
      auto [it, fresh] = tasks.try_emplace(key, task);
      if (!fresh)
        return task.emitOpError()
               << "two tasks on " << (key.first ? "control entry " : "color ")
               << id << " of @" << peName << ": @"
               << it->second.getSymName() << " and @" << task.getSymName();
    } else if (auto seg = dyn_cast<SegmentOp>(op)) {
      int64_t words = seg.getWordsPerPE();
      if (words < 0)
        return seg.emitOpError() << "element type of " << seg.getValue().getType()
                                 << " is not 16 or 32 bits wide";
      if (seg.getPerPe()) {
        auto shaped = cast<ShapedType>(seg.getValue().getType());
        if (shaped.getRank() < 2 || shaped.getDimSize(0) != rect.getHeight() ||
            shaped.getDimSize(1) != rect.getWidth())
          return seg.emitOpError()
                 << "per_pe value " << shaped << " must have leading "
                 << "dimensions " << rect.getHeight() << "x"
                 << rect.getWidth() << " (the group's rows x columns)";
      }
      ranges.push_back({int64_t(seg.getAddress()), int64_t(seg.getAddress()) + words,
                        "segment @" + seg.getSymName().str(), seg});
    } else if (auto dsd = dyn_cast<DsdOp>(op)) {
      ranges.push_back({int64_t(dsd.getAddress()),
                        int64_t(dsd.getAddress()) + wt::Arch::kWordsPerDescriptor,
                        "descriptor @" + dsd.getSymName().str(), dsd});
    } else if (auto x = dyn_cast<XdsdOp>(op)) {
      ranges.push_back({int64_t(x.getAddress()),
                        int64_t(x.getAddress()) + wt::Arch::kWordsPerDescriptor,
                        "descriptor @" + x.getSymName().str(), x});
    }
  }

  // Descriptors must be aligned and within reach of DSR loads.
  for (const MemRange &r : ranges) {
    if (!isa<DsdOp, XdsdOp>(r.op))
      continue;
    if (r.begin % wt::Arch::kWordsPerDescriptor != 0 || r.begin < 0 ||
        r.end > int64_t(t.descriptorWords()))
      return r.op->emitOpError()
             << r.what << " at word " << r.begin
             << " must be 4-word aligned and below word "
             << t.descriptorWords() << " (the reach of DSR loads)";
  }
  // Everything inside memory, nothing overlapping.
  llvm::sort(ranges, [](const MemRange &a, const MemRange &b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  });
  for (size_t i = 0; i < ranges.size(); ++i) {
    const MemRange &r = ranges[i];
    if (r.begin < 0 || r.end > int64_t(t.memoryWords()))
      return r.op->emitOpError()
             << r.what << " [" << r.begin << ", " << r.end
             << ") leaves the PE memory of " << t.memoryWords() << " words";
    if (i > 0 && ranges[i - 1].end > r.begin)
      return r.op->emitOpError()
             << r.what << " [" << r.begin << ", " << r.end << ") overlaps "
             << ranges[i - 1].what << " [" << ranges[i - 1].begin << ", "
             << ranges[i - 1].end << ")";
  }
  return success();
}

LogicalResult PeGroupOp::verifyRegions() {
  return verifyPeBody(*this, getRect(), getBody().front());
}

LogicalResult PeOp::verifyRegions() {
  return verifyPeBody(*this, getRect(), getBody().front());
}

//===----------------------------------------------------------------------===//
// IoOp
//===----------------------------------------------------------------------===//

static std::optional<wt::PayloadFormat> parseFormat(StringRef s) {
  for (unsigned f = 0; f < wt::kNumPayloadFormats; ++f)
    if (s == wt::payloadFormatName(wt::PayloadFormat(f)))
      return wt::PayloadFormat(f);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// RouteOp
//===----------------------------------------------------------------------===//

/// The rules of docs/architecture.md §4.4; binary::checkPositions checks the
/// same on the binary.
LogicalResult RouteOp::verify() {
  std::optional<ArrayRef<int64_t>> flat = getPositions();
  if (!flat)
    return success();
  std::string why = routePositionsProblem(*flat, unsigned(getInputs()),
                                          unsigned(getOutputs()));
  if (why.empty())
    return success();
  // ("color 3 has 1 position", "color 3: position 2 of 2 ...")
  return emitOpError() << "color " << int64_t(getColor())
                       << (why.rfind("has ", 0) ? ": " : " ") << why;
}

LogicalResult IoOp::verify() {
  if (int64_t(getFirstRow()) < 0 || int64_t(getFirstRow()) >= int64_t(getEndRow()))
    return emitOpError() << "row range [" << int64_t(getFirstRow()) << ", "
                         << int64_t(getEndRow()) << ") is empty or negative";
  if (!parseFormat(getFormat()))
    return emitOpError() << "unknown payload format '" << getFormat()
                         << "' (dense32, dense16x2, sparse16)";
  auto type = cast<RankedTensorType>(getType());
  if (!type.hasStaticShape())
    return emitOpError() << "host tensor " << type << " has a dynamic shape";
  if (getFmap()) {
    if (type.getRank() < 2)
      return emitOpError() << "feature map " << type
                           << " needs shape [1, C, spatial...] (rank >= 2)";
    if (type.getDimSize(0) != 1)
      return emitOpError() << "feature map " << type
                           << " has dimension 0 of size " << type.getDimSize(0)
                           << "; the dimensions before the channels "
                              "(dimension 1) must be 1";
    int64_t rows = int64_t(getEndRow()) - int64_t(getFirstRow());
    if (type.getDimSize(1) % rows != 0)
      return emitOpError() << "feature map " << type << " has "
                           << type.getDimSize(1) << " channels on " << rows
                           << " rows; the rows must divide the channels";
  }
  if (std::optional<int64_t> c = getCloseout()) {
    if (getDirection() != common::PortDir::input || getFormat() != "sparse16")
      return emitOpError() << "skips zeros (nz), but only a sparse16 input "
                              "can";
    if (*c < 0 || *c > 63)
      return emitOpError() << "closeout index " << *c
                           << " does not fit a control wavelet's 6 bits";
  }
  std::optional<wt::Target> t = getEnclosingTarget(*this);
  if (!t)
    return success();
  if (int64_t(getEndRow()) > int64_t(t->height()))
    return emitOpError() << "rows [" << int64_t(getFirstRow()) << ", " << int64_t(getEndRow())
                         << ") leave the " << t->height() << "-row fabric";
  if (!t->isRoutableColor(int64_t(getColor())))
    return emitOpError() << "color " << int64_t(getColor())
                         << " is not routable on this target (colors 0.."
                         << t->routableColors() - 1 << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// SegmentOp
//===----------------------------------------------------------------------===//

int64_t SegmentOp::getWordsPerPE() {
  auto type = cast<ShapedType>(getValue().getType());
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  if (bits != 16 && bits != 32)
    return -1;
  int64_t n = type.getNumElements();
  if (getPerPe() && type.getRank() >= 2 && type.getDimSize(0) > 0 &&
      type.getDimSize(1) > 0)
    n /= type.getDimSize(0) * type.getDimSize(1);
  return n * (bits / 16);
}

//===----------------------------------------------------------------------===//
// DsdOp, XdsdOp
//===----------------------------------------------------------------------===//

FailureOr<wt::Dsd> DsdOp::toDsd() {
  wt::Dsd d;
  d.kind = wt::DsdKind(unsigned(getKind()));
  bool fabric = d.kind == wt::DsdKind::FabricIn ||
                d.kind == wt::DsdKind::FabricOut;
  bool memory = !fabric;
  auto need = [&](std::optional<int64_t> v, StringRef field) -> bool {
    if (v)
      return true;
    emitOpError() << stringifyDsdKind(getKind()) << " DSD needs '" << field
                  << "'";
    return false;
  };
  auto forbid = [&](bool present, StringRef field) -> bool {
    if (!present)
      return true;
    emitOpError() << "field '" << field << "' does not apply to a "
                  << stringifyDsdKind(getKind()) << " DSD";
    return false;
  };
  auto fits = [&](int64_t v, int64_t lo, int64_t hi, StringRef field) -> bool {
    if (v >= lo && v <= hi)
      return true;
    emitOpError() << "field '" << field << "' = " << v << " not in [" << lo
                  << ", " << hi << "]";
    return false;
  };

  if (d.kind != wt::DsdKind::Mem4D) {
    if (!need(getLength(), "length") ||
        !fits(*getLength(), 0, wt::Arch::kMaxVectorLength, "length"))
      return failure();
    d.length = uint32_t(*getLength());
  } else if (!forbid(getLength().has_value(), "length")) {
    return failure();
  }
  if (memory) {
    if (!need(getBase(), "base") ||
        !fits(*getBase(), 0, wt::Arch::kMaxAddressableWords - 1, "base"))
      return failure();
    d.base = uint32_t(*getBase());
    if (!forbid(getColor().has_value(), "color") ||
        !forbid(getFormat().has_value(), "format") ||
        !forbid(getAc().has_value(), "ac") || !forbid(getTerm(), "term") ||
        !forbid(getCtrl(), "ctrl") || !forbid(getUtid().has_value(), "utid"))
      return failure();
  } else {
    if (!need(getColor(), "color") ||
        !fits(*getColor(), 0, wt::Arch::kFabricColors - 1, "color"))
      return failure();
    d.color = uint8_t(*getColor());
    if (getFormat()) {
      std::optional<wt::PayloadFormat> f = parseFormat(*getFormat());
      if (!f) {
        emitOpError() << "unknown payload format '" << *getFormat()
                      << "' (dense32, dense16x2, sparse16)";
        return failure();
      }
      d.format = *f;
    }
    if (getAc()) {
      if (!fits(*getAc(), 0, wt::Arch::kTaskIds - 1, "ac"))
        return failure();
      d.onDone = {true, uint8_t(*getAc())};
    }
    if (getUtid()) {
      if (!fits(*getUtid(), 0, wt::Arch::kNumMicrothreads - 1, "utid"))
        return failure();
      d.microthread = true;
      d.utid = uint8_t(*getUtid());
    }
    if (!forbid(getBase().has_value(), "base") ||
        !forbid(getStride().has_value(), "stride") || !forbid(getIx(), "ix"))
      return failure();
  }
  switch (d.kind) {
  case wt::DsdKind::FabricIn:
    d.terminateOnControl = getTerm();
    if (!forbid(getCtrl(), "ctrl") || !forbid(getIndex().has_value(), "index") ||
        !forbid(getWli(), "wli"))
      return failure();
    break;
  case wt::DsdKind::FabricOut:
    d.control = getCtrl();
    if (!forbid(getTerm(), "term"))
      return failure();
    if (getIndex()) {
      if (!fits(*getIndex(), 0, 63, "index"))
        return failure();
      d.index6 = uint8_t(*getIndex());
    }
    d.indexFromGpr4 = getWli();
    d.skipZeros = getNz();
    break;
  case wt::DsdKind::Mem1D:
    if (getStride()) {
      if (!fits(*getStride(), -256, 255, "stride"))
        return failure();
      d.stride = int32_t(*getStride());
    }
    d.indexed = getIx();
    d.sliced = getSl();
    break;
  case wt::DsdKind::Mem4D:
    if (!need(getXdsr(), "xdsr") ||
        !fits(*getXdsr(), 0, wt::Arch::kNumXDSRs - 1, "xdsr"))
      return failure();
    d.xdsr = uint8_t(*getXdsr());
    d.indexed = getIx();
    break;
  case wt::DsdKind::Fifo:
    if (getPushAc()) {
      if (!fits(*getPushAc(), 0, wt::Arch::kTaskIds - 1, "push_ac"))
        return failure();
      d.onPush = {true, uint8_t(*getPushAc())};
    }
    if (getPopAc()) {
      if (!fits(*getPopAc(), 0, wt::Arch::kTaskIds - 1, "pop_ac"))
        return failure();
      d.onPop = {true, uint8_t(*getPopAc())};
    }
    break;
  }
  if (d.kind != wt::DsdKind::Mem4D && !forbid(getXdsr().has_value(), "xdsr"))
    return failure();
  if (d.kind != wt::DsdKind::FabricOut && !forbid(getNz(), "nz"))
    return failure();
  if (d.kind != wt::DsdKind::Mem1D && !forbid(getSl(), "sl"))
    return failure();
  if (d.kind != wt::DsdKind::Fifo &&
      (!forbid(getPushAc().has_value(), "push_ac") ||
       !forbid(getPopAc().has_value(), "pop_ac")))
    return failure();
  if (std::optional<wt::Target> t = getEnclosingTarget(*this)) {
    std::string err = d.validate(*t);
    if (!err.empty()) {
      emitOpError() << err;
      return failure();
    }
  }
  return d;
}

LogicalResult DsdOp::verify() { return success(succeeded(toDsd())); }

LogicalResult XdsdOp::verify() {
  if (getLen().size() != 4 || getStrideSel().size() != 4)
    return emitOpError() << "needs four lengths and four stride selects";
  wt::Xdsd x;
  for (unsigned i = 0; i < 4; ++i) {
    int64_t l = getLen()[i], s = getStrideSel()[i];
    if (l < 0 || l > 0xffff || s < 0 || s > 7)
      return emitOpError() << "dimension " << i << " (length " << l
                           << ", stride select " << s << ") out of range";
    x.len[i] = uint16_t(l);
    x.strideSel[i] = uint8_t(s);
  }
  std::string err = x.validate();
  if (!err.empty())
    return emitOpError() << err;
  return success();
}

//===----------------------------------------------------------------------===//
// TaskOp
//===----------------------------------------------------------------------===//

LogicalResult TaskOp::verifyRegions() {
  if (getActive() && getKind() != TaskKind::local)
    return emitOpError() << "only a local task can be active at load time "
                            "(data tasks are always active, control tasks "
                            "start on control wavelets)";
  Block &body = getBody().front();
  llvm::StringSet<> labels;
  for (auto label : body.getOps<LabelOp>())
    if (!labels.insert(label.getName()).second)
      return label.emitOpError()
             << "label \"" << label.getName() << "\" is defined twice";
  for (auto jump : body.getOps<JumpOp>())
    if (!labels.contains(jump.getLabel()))
      return jump.emitOpError() << "jumps to \"" << jump.getLabel()
                                << "\", which is not a label of task @"
                                << getSymName();
  // The task must not run off its end into whatever code follows it.
  Operation *last = nullptr;
  for (Operation &op : llvm::reverse(body))
    if (!isa<LabelOp>(op)) {
      last = &op;
      break;
    }
  bool ends = false;
  if (auto inst = dyn_cast_or_null<InstOp>(last))
    ends = inst.getTerm();
  else if (auto jump = dyn_cast_or_null<JumpOp>(last))
    ends = jump.getCond() == JumpCond::always;
  if (!ends)
    return emitOpError() << "can run off its end: its last instruction "
                            "neither terminates nor jumps";
  return success();
}

//===----------------------------------------------------------------------===//
// InstOp
//===----------------------------------------------------------------------===//

// The ODS opcode enum is the machine model's table: every row has its case,
// with the same value, and there are no others (the mnemonics are checked by
// the unit tests). Operand kinds dsr..imm share the machine model's values.
#define WEFT_X(E, ...)                                                         \
  static_assert(unsigned(Opcode::E) == unsigned(wt::Opcode::E),                \
                "wavelet opcode " #E " disagrees with the machine model");
WEFT_ISA_OPCODES(WEFT_X)
#undef WEFT_X
#define WEFT_X(...) +1
static_assert(getMaxEnumValForOpcode() + 1 == 0 WEFT_ISA_OPCODES(WEFT_X),
              "the wavelet opcode enum has cases the machine model lacks");
#undef WEFT_X
static_assert(unsigned(OperandKind::dsr) == unsigned(wt::OperandKind::Dsr) &&
              unsigned(OperandKind::ddsr) == unsigned(wt::OperandKind::Ddsr) &&
              unsigned(OperandKind::s0dsr) ==
                  unsigned(wt::OperandKind::S0dsr) &&
              unsigned(OperandKind::s1dsr) ==
                  unsigned(wt::OperandKind::S1dsr) &&
              unsigned(OperandKind::gpr) == unsigned(wt::OperandKind::Gpr) &&
              unsigned(OperandKind::imm) == unsigned(wt::OperandKind::Imm));

void InstOp::build(OpBuilder &b, OperationState &state, Opcode opcode,
                   ArrayRef<OperandAttr> args, bool term) {
  build(b, state, opcode,
        b.getArrayAttr(SmallVector<Attribute>(args.begin(), args.end())), term);
}

void InstOp::build(OpBuilder &b, OperationState &state,
                   const wt::Instruction &in) {
  MLIRContext *ctx = b.getContext();
  auto operand = [&](OperandKind kind, int64_t value) {
    return OperandAttr::get(ctx, kind, value);
  };
  SmallVector<OperandAttr, 2> args;
  switch (wt::info(in.opcode).family) {
  case wt::Family::Imm: {
    // movi and movh; the verifier rejects the DSR moves and jumps.
    int64_t imm = in.imm;
    if (in.opcode == wt::Opcode::MOVI) {
      imm &= 0x7ff;
      if (imm & 0x400)
        imm -= 0x800;
    }
    args = {operand(OperandKind::gpr, in.reg), operand(OperandKind::lit, imm)};
    break;
  }
  case wt::Family::Vec:
  case wt::Family::Un:
  case wt::Family::Cmp:
    for (const wt::Operand &o : {in.op0, in.op1})
      args.push_back(operand(OperandKind(unsigned(o.kind)), o.value));
    break;
  case wt::Family::Ctl:
    if (in.opcode == wt::Opcode::NOP)
      break;
    switch (in.ctlMode) {
    case wt::CtlMode::ImmColor:
      args = {operand(OperandKind::lit, in.imm)};
      break;
    case wt::CtlMode::GprColor:
      args = {operand(OperandKind::gpr, in.imm)};
      break;
    case wt::CtlMode::AllColors:
      args = {operand(OperandKind::all, in.imm)};
      break;
    }
    break;
  }
  build(b, state, toOpcode(in.opcode), args, in.terminate);
}

static const char *kImmNames[] = {"zero", "one", "minus_one",
                                  "two",  "half", "prng"};

FailureOr<wt::Instruction> InstOp::toInstruction() {
  wt::Opcode op = toTarget(getOpcode());
  StringRef mnemonic = stringifyOpcode(getOpcode());
  const wt::OpcodeInfo &info = wt::info(op);
  SmallVector<OperandAttr, 2> a(getOperandAttrs());
  auto arity = [&](size_t n) -> bool {
    if (a.size() == n)
      return true;
    emitOpError() << mnemonic << " takes " << n << " operands, got "
                  << a.size();
    return false;
  };
  auto expect = [&](OperandAttr o, std::initializer_list<OperandKind> kinds,
                    StringRef what) -> bool {
    if (llvm::is_contained(kinds, o.getKind()))
      return true;
    emitOpError() << mnemonic << " takes " << what << ", got "
                  << stringifyOperandKind(o.getKind()) << " " << o.getValue();
    return false;
  };
  wt::Instruction in;
  in.opcode = op;
  in.terminate = getTerm();
  auto operand = [&](OperandAttr o, wt::Operand &out) -> bool {
    if (!expect(o,
                {OperandKind::dsr, OperandKind::ddsr, OperandKind::s0dsr,
                 OperandKind::s1dsr, OperandKind::gpr, OperandKind::imm},
                "register or small-immediate operands"))
      return false;
    if (o.getValue() < 0 || o.getValue() > 255) {
      emitOpError() << "operand " << stringifyOperandKind(o.getKind()) << " "
                    << o.getValue() << " cannot be encoded";
      return false;
    }
    out = wt::Operand{wt::OperandKind(unsigned(o.getKind())),
                      uint8_t(o.getValue())};
    return true;
  };
  switch (info.family) {
  case wt::Family::Imm: {
    if (op != wt::Opcode::MOVI && op != wt::Opcode::MOVH) {
      emitOpError() << mnemonic
                    << " is written with wavelet.dsr or wavelet.jump";
      return failure();
    }
    if (!arity(2) || !expect(a[0], {OperandKind::gpr}, "a gpr first") ||
        !expect(a[1], {OperandKind::lit}, "a literal second"))
      return failure();
    int64_t reg = a[0].getValue(), imm = a[1].getValue();
    if (reg < 0 || reg >= int64_t(wt::Arch::kNumGPRs)) {
      emitOpError() << mnemonic << " names gpr " << reg << " but there are "
                    << wt::Arch::kNumGPRs;
      return failure();
    }
    in.reg = uint8_t(reg);
    if (op == wt::Opcode::MOVI) {
      if (imm < -1024 || imm > 1023) {
        emitOpError() << "movi immediate " << imm
                      << " does not fit the signed 11-bit field";
        return failure();
      }
      in.imm = uint16_t(imm & 0x7ff);
    } else {
      if (imm < 0 || imm > 255) {
        emitOpError() << "movh immediate " << imm
                      << " does not fit the 8-bit field";
        return failure();
      }
      in.imm = uint16_t(imm);
    }
    if (in.terminate) {
      emitOpError() << mnemonic << " has no terminate bit";
      return failure();
    }
    break;
  }
  case wt::Family::Vec:
  case wt::Family::Un:
  case wt::Family::Cmp:
    if (!arity(2) || !operand(a[0], in.op0) || !operand(a[1], in.op1))
      return failure();
    break;
  case wt::Family::Ctl: {
    if (op == wt::Opcode::NOP) {
      if (!arity(0))
        return failure();
      break;
    }
    if (!arity(1) ||
        !expect(a[0], {OperandKind::lit, OperandKind::gpr, OperandKind::all},
                "a color, a gpr or all"))
      return failure();
    int64_t v = a[0].getValue();
    if (v < 0 || v > 0xffff) {
      emitOpError() << mnemonic << " operand " << v << " cannot be encoded";
      return failure();
    }
    in.ctlMode = a[0].getKind() == OperandKind::all   ? wt::CtlMode::AllColors
                 : a[0].getKind() == OperandKind::gpr ? wt::CtlMode::GprColor
                                                      : wt::CtlMode::ImmColor;
    in.imm = uint16_t(v);
    break;
  }
  }
  std::string err = in.validate();
  if (!err.empty()) {
    emitOpError() << err;
    return failure();
  }
  return in;
}

LogicalResult InstOp::verify() { return success(succeeded(toInstruction())); }

void InstOp::print(OpAsmPrinter &p) {
  p << " " << stringifyOpcode(getOpcode());
  bool first = true;
  for (OperandAttr o : getOperandAttrs()) {
    p << (first ? " " : ", ");
    first = false;
    int64_t v = o.getValue();
    switch (o.getKind()) {
    case OperandKind::lit:
      p << v;
      break;
    case OperandKind::all:
      p << "all";
      break;
    case OperandKind::imm:
      p << "imm ";
      if (v >= 0 && v < int64_t(wt::kNumSmallImms))
        p << kImmNames[v];
      else
        p << v;
      break;
    default:
      p << stringifyOperandKind(o.getKind()) << " " << v;
      break;
    }
  }
  if (getTerm())
    p << " term";
  p.printOptionalAttrDict((*this)->getAttrs(), getAttributeNames());
}

/// One operand: `dsr 4`, `imm one`, `-5` (a literal) or `all`.
static ParseResult parseInstOperand(OpAsmParser &parser,
                                    SmallVectorImpl<Attribute> &args) {
  MLIRContext *ctx = parser.getContext();
  int64_t value;
  OptionalParseResult lit = parser.parseOptionalInteger(value);
  if (lit.has_value()) {
    if (failed(*lit))
      return failure();
    args.push_back(OperandAttr::get(ctx, OperandKind::lit, value));
    return success();
  }
  StringRef kindName;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&kindName))
    return failure();
  std::optional<OperandKind> kind = symbolizeOperandKind(kindName);
  if (!kind || *kind == OperandKind::lit)
    return parser.emitError(loc, "unknown operand kind '")
           << kindName << "' (dsr, ddsr, s0dsr, s1dsr, gpr, imm, all)";
  if (*kind == OperandKind::all) {
    args.push_back(OperandAttr::get(ctx, *kind, 0));
    return success();
  }
  if (*kind == OperandKind::imm) {
    StringRef name;
    SMLoc immLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&name))
      return failure();
    for (unsigned i = 0; i < wt::kNumSmallImms; ++i)
      if (name == kImmNames[i]) {
        args.push_back(OperandAttr::get(ctx, *kind, i));
        return success();
      }
    return parser.emitError(immLoc, "unknown immediate '")
           << name << "' (zero, one, minus_one, two, half, prng)";
  }
  if (parser.parseInteger(value))
    return failure();
  args.push_back(OperandAttr::get(ctx, *kind, value));
  return success();
}

ParseResult InstOp::parse(OpAsmParser &parser, OperationState &result) {
  StringRef mnemonic;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&mnemonic))
    return failure();
  std::optional<Opcode> opcode = symbolizeOpcode(mnemonic);
  if (!opcode)
    return parser.emitError(loc, "unknown opcode '") << mnemonic << "'";
  wt::Opcode op = toTarget(*opcode);
  if (wt::info(op).family == wt::Family::Imm && op != wt::Opcode::MOVI &&
      op != wt::Opcode::MOVH)
    return parser.emitError(loc, "")
           << mnemonic << " is written with wavelet.dsr or wavelet.jump";
  // Every opcode but nop has operands; how many it takes is the verifier's.
  SmallVector<Attribute> args;
  if (op != wt::Opcode::NOP) {
    do {
      if (parseInstOperand(parser, args))
        return failure();
    } while (succeeded(parser.parseOptionalComma()));
  }
  Builder &b = parser.getBuilder();
  result.addAttribute(getOpcodeAttrName(result.name),
                      OpcodeAttr::get(b.getContext(), *opcode));
  result.addAttribute(getArgsAttrName(result.name), b.getArrayAttr(args));
  if (succeeded(parser.parseOptionalKeyword("term")))
    result.addAttribute(getTermAttrName(result.name), b.getUnitAttr());
  return parser.parseOptionalAttrDict(result.attributes);
}

//===----------------------------------------------------------------------===//
// DsrOp
//===----------------------------------------------------------------------===//

void DsrOp::print(OpAsmPrinter &p) {
  p << (getStore() ? " store " : " load ") << stringifyRegFile(getFile())
    << " " << int64_t(getReg()) << ", " << getRecordAttr();
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {"store", "file", "reg", "record"});
}

ParseResult DsrOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &b = parser.getBuilder();
  if (succeeded(parser.parseOptionalKeyword("store")))
    result.addAttribute("store", b.getUnitAttr());
  else if (parser.parseKeyword("load"))
    return failure();
  StringRef fileName;
  SMLoc loc = parser.getCurrentLocation();
  int64_t reg;
  FlatSymbolRefAttr record;
  if (parser.parseKeyword(&fileName))
    return failure();
  std::optional<RegFile> file = symbolizeRegFile(fileName);
  if (!file)
    return parser.emitError(loc, "unknown register file '")
           << fileName << "' (s0dsr, s1dsr, ddsr, xdsr, stride)";
  if (parser.parseInteger(reg) || parser.parseComma() ||
      parser.parseAttribute(record))
    return failure();
  result.addAttribute("file", RegFileAttr::get(b.getContext(), *file));
  result.addAttribute("reg", b.getI64IntegerAttr(reg));
  result.addAttribute("record", record);
  return parser.parseOptionalAttrDict(result.attributes);
}

LogicalResult DsrOp::verify() {
  int64_t limit = wt::Arch::kNumDSRs;
  if (getFile() == RegFile::xdsr)
    limit = wt::Arch::kNumXDSRs;
  else if (getFile() == RegFile::stride)
    limit = wt::Arch::kNumStrideRegs;
  if (int64_t(getReg()) < 0 || int64_t(getReg()) >= limit)
    return emitOpError() << stringifyRegFile(getFile()) << " " << int64_t(getReg())
                         << " does not exist (0.." << limit - 1 << ")";
  Operation *rec = SymbolTable::lookupNearestSymbolFrom(*this, getRecordAttr());
  if (!rec)
    return emitOpError() << getRecordAttr() << " is not defined in this PE";
  switch (getFile()) {
  case RegFile::s0dsr:
  case RegFile::s1dsr:
  case RegFile::ddsr: {
    auto dsd = dyn_cast<DsdOp>(rec);
    if (!dsd)
      return emitOpError() << getRecordAttr() << " is not a wavelet.dsd";
    bool dest = getFile() == RegFile::ddsr;
    if (dest && dsd.getKind() == DsdKind::fabin)
      return emitOpError() << "fabin DSD " << getRecordAttr()
                           << " cannot be a destination (ddsr)";
    if (!dest && dsd.getKind() == DsdKind::fabout)
      return emitOpError() << "fabout DSD " << getRecordAttr()
                           << " cannot be a source ("
                           << stringifyRegFile(getFile()) << ")";
    break;
  }
  case RegFile::xdsr:
    if (!isa<XdsdOp>(rec))
      return emitOpError() << getRecordAttr() << " is not a wavelet.xdsd";
    break;
  case RegFile::stride: {
    auto seg = dyn_cast<SegmentOp>(rec);
    if (!seg || seg.getWordsPerPE() != 1 ||
        int64_t(seg.getAddress()) % wt::Arch::kWordsPerDescriptor != 0)
      return emitOpError() << "stride register source " << getRecordAttr()
                           << " must be a one-word segment at a 4-word "
                              "aligned address";
    break;
  }
  }
  return success();
}
