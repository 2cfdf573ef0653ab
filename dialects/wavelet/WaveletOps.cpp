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
namespace wt = weft::target;

#include "wavelet/WaveletEnums.cpp.inc"

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
  for (Operation &op : getBody().front()) {
    RectAttr r = peRect(op);
    if (!r)
      continue;
    StringRef name = mlir::SymbolTable::getSymbolName(&op).getValue();
    if (!r.fits(t))
      return op.emitOpError() << "PEs " << rectString(r) << " of @" << name
                              << " leave the " << t.width() << "x"
                              << t.height() << " fabric";
    for (auto &[other, otherRect] : seen)
      if (r.overlaps(otherRect))
        return op.emitOpError()
               << "PEs " << rectString(r) << " of @" << name
               << " overlap PEs " << rectString(otherRect) << " of @"
               << mlir::SymbolTable::getSymbolName(other).getValue();
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
    break;
  case wt::DsdKind::Mem1D:
    if (getStride()) {
      if (!fits(*getStride(), -256, 255, "stride"))
        return failure();
      d.stride = int32_t(*getStride());
    }
    d.indexed = getIx();
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

static const char *kImmNames[] = {"zero", "one", "minus_one",
                                  "two",  "half", "prng"};

FailureOr<wt::Instruction> InstOp::toInstruction() {
  std::optional<wt::Opcode> op = wt::parseMnemonic(getOpcode().str());
  if (!op) {
    emitOpError() << "unknown opcode '" << getOpcode() << "'";
    return failure();
  }
  const wt::OpcodeInfo &info = wt::info(*op);
  ArrayRef<int32_t> a = getArgs();
  auto arity = [&](size_t n) -> bool {
    if (a.size() == n)
      return true;
    emitOpError() << getOpcode() << " takes " << n << " encoded fields, got "
                  << a.size();
    return false;
  };
  wt::Instruction in;
  in.opcode = *op;
  in.terminate = getTerm();
  auto operand = [&](int32_t kind, int32_t value, wt::Operand &out) -> bool {
    if (kind < 0 || kind > int32_t(wt::OperandKind::Imm) || value < 0 ||
        value > 255) {
      emitOpError() << "operand (" << kind << ", " << value
                    << ") cannot be encoded";
      return false;
    }
    out = wt::Operand{wt::OperandKind(kind), uint8_t(value)};
    return true;
  };
  switch (info.family) {
  case wt::Family::Imm:
    if (*op != wt::Opcode::MOVI && *op != wt::Opcode::MOVH) {
      emitOpError() << getOpcode()
                    << " is written with wavelet.dsr or wavelet.jump";
      return failure();
    }
    if (!arity(2))
      return failure();
    if (a[0] < 0 || a[0] >= int32_t(wt::Arch::kNumGPRs)) {
      emitOpError() << getOpcode() << " names gpr " << a[0]
                    << " but there are " << wt::Arch::kNumGPRs;
      return failure();
    }
    in.reg = uint8_t(a[0]);
    if (*op == wt::Opcode::MOVI) {
      if (a[1] < -1024 || a[1] > 1023) {
        emitOpError() << "movi immediate " << a[1]
                      << " does not fit the signed 11-bit field";
        return failure();
      }
      in.imm = uint16_t(a[1] & 0x7ff);
    } else {
      if (a[1] < 0 || a[1] > 255) {
        emitOpError() << "movh immediate " << a[1]
                      << " does not fit the 8-bit field";
        return failure();
      }
      in.imm = uint16_t(a[1]);
    }
    if (in.terminate) {
      emitOpError() << getOpcode() << " has no terminate bit";
      return failure();
    }
    break;
  case wt::Family::Vec:
  case wt::Family::Un:
  case wt::Family::Cmp:
    if (!arity(4) || !operand(a[0], a[1], in.op0) ||
        !operand(a[2], a[3], in.op1))
      return failure();
    break;
  case wt::Family::Ctl:
    if (*op == wt::Opcode::NOP) {
      if (!arity(0))
        return failure();
      break;
    }
    if (!arity(2))
      return failure();
    if (a[0] < 0 || a[0] > 2 || a[1] < 0 || a[1] > 0xffff) {
      emitOpError() << getOpcode() << " operand cannot be encoded";
      return failure();
    }
    in.ctlMode = wt::CtlMode(a[0]);
    in.imm = uint16_t(a[1]);
    break;
  }
  std::string err = in.validate();
  if (!err.empty()) {
    emitOpError() << err;
    return failure();
  }
  return in;
}

LogicalResult InstOp::verify() { return success(succeeded(toInstruction())); }

static void printInstOperand(OpAsmPrinter &p, int32_t kind, int32_t value) {
  if (kind < 0 || kind > int32_t(wt::OperandKind::Imm)) {
    p << "bad " << value;
    return;
  }
  p << wt::operandKindName(wt::OperandKind(kind)) << " ";
  if (wt::OperandKind(kind) == wt::OperandKind::Imm && value >= 0 &&
      value < int32_t(wt::kNumSmallImms))
    p << kImmNames[value];
  else
    p << value;
}

void InstOp::print(OpAsmPrinter &p) {
  p << " " << getOpcode();
  ArrayRef<int32_t> a = getArgs();
  std::optional<wt::Opcode> op = wt::parseMnemonic(getOpcode().str());
  wt::Family fam = op ? wt::info(*op).family : wt::Family::Vec;
  if (fam == wt::Family::Ctl && a.size() == 2) {
    if (a[0] == int32_t(wt::CtlMode::AllColors))
      p << " all";
    else if (a[0] == int32_t(wt::CtlMode::GprColor))
      p << " gpr " << a[1];
    else
      p << " " << a[1];
  } else if (fam == wt::Family::Imm && a.size() == 2) {
    p << " gpr " << a[0] << ", " << a[1];
  } else if (a.size() == 4) {
    p << " ";
    printInstOperand(p, a[0], a[1]);
    p << ", ";
    printInstOperand(p, a[2], a[3]);
  } else if (!a.empty()) {
    // Not a well-formed instruction; print the raw fields so the verifier's
    // complaint can be read against them.
    p << " raw [";
    llvm::interleaveComma(a, p);
    p << "]";
  }
  if (getTerm())
    p << " term";
  p.printOptionalAttrDict((*this)->getAttrs(), {"opcode", "args", "term"});
}

static ParseResult parseInstOperand(OpAsmParser &parser,
                                    SmallVectorImpl<int32_t> &args) {
  StringRef kindName;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&kindName))
    return failure();
  std::optional<wt::OperandKind> kind = wt::parseOperandKind(kindName.str());
  if (!kind || *kind == wt::OperandKind::None)
    return parser.emitError(loc, "unknown operand kind '")
           << kindName << "' (dsr, ddsr, s0dsr, s1dsr, gpr, imm)";
  args.push_back(int32_t(*kind));
  if (*kind == wt::OperandKind::Imm) {
    StringRef name;
    SMLoc immLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&name))
      return failure();
    for (unsigned i = 0; i < wt::kNumSmallImms; ++i)
      if (name == kImmNames[i]) {
        args.push_back(int32_t(i));
        return success();
      }
    return parser.emitError(immLoc, "unknown immediate '")
           << name << "' (zero, one, minus_one, two, half, prng)";
  }
  int32_t value;
  if (parser.parseInteger(value))
    return failure();
  args.push_back(value);
  return success();
}

ParseResult InstOp::parse(OpAsmParser &parser, OperationState &result) {
  StringRef mnemonic;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&mnemonic))
    return failure();
  std::optional<wt::Opcode> op = wt::parseMnemonic(mnemonic.str());
  if (!op)
    return parser.emitError(loc, "unknown opcode '") << mnemonic << "'";
  SmallVector<int32_t> args;
  switch (wt::info(*op).family) {
  case wt::Family::Imm: {
    int32_t reg, imm;
    if (parser.parseKeyword("gpr") || parser.parseInteger(reg) ||
        parser.parseComma() || parser.parseInteger(imm))
      return failure();
    args = {reg, imm};
    break;
  }
  case wt::Family::Vec:
  case wt::Family::Un:
  case wt::Family::Cmp:
    if (parseInstOperand(parser, args) || parser.parseComma() ||
        parseInstOperand(parser, args))
      return failure();
    break;
  case wt::Family::Ctl: {
    if (*op == wt::Opcode::NOP)
      break;
    int32_t value;
    if (succeeded(parser.parseOptionalKeyword("all"))) {
      args = {int32_t(wt::CtlMode::AllColors), 0};
    } else if (succeeded(parser.parseOptionalKeyword("gpr"))) {
      if (parser.parseInteger(value))
        return failure();
      args = {int32_t(wt::CtlMode::GprColor), value};
    } else {
      if (parser.parseInteger(value))
        return failure();
      args = {int32_t(wt::CtlMode::ImmColor), value};
    }
    break;
  }
  }
  Builder &b = parser.getBuilder();
  result.addAttribute("opcode", b.getStringAttr(mnemonic));
  result.addAttribute("args", b.getDenseI32ArrayAttr(args));
  if (succeeded(parser.parseOptionalKeyword("term")))
    result.addAttribute("term", b.getUnitAttr());
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
