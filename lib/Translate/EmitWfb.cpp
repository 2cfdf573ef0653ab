//===- EmitWfb.cpp - Lower a wavelet.program to a .wfb binary ---------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Code layout (docs/architecture.md §6.4, docs/binary-format.md): the task
// table fills slots [0, 320). A data or local task whose code fits in the 4
// slots of its entry (control: 1 slot) is placed there; otherwise the entry
// holds a JMP to the body, which goes first-fit into free memory from slot
// 320 on, avoiding segments and descriptor records. Bodies are placed in
// canonical task order (data, local, control; by id), so the layout depends
// only on the program, not on the order of its ops. Since the wavelet
// verifier reserves [0, 2 * (320 + instructions)) words for code, the bodies
// always fit in that range.
//
//===----------------------------------------------------------------------===//

#include "weft/Translate/Wfb.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;
using namespace weft;
using namespace weft::wavelet;
namespace wt = weft::machine;
namespace wb = weft::binary;

namespace {

/// Where a task's code goes.
struct TaskPlacement {
  TaskOp op;
  unsigned order = 0;  ///< kindOrder(kind) * 64 + id, the canonical order
  unsigned entry = 0;  ///< table slot
  unsigned start = 0;  ///< first slot of the body
  unsigned slots = 0;  ///< instructions in the body
};

unsigned kindOrder(TaskKind k) {
  return k == TaskKind::data ? 0 : k == TaskKind::local ? 1 : 2;
}

bool isInstruction(Operation &op) { return isa<InstOp, DsrOp, JumpOp>(op); }

/// (cx, cy, c0) of an affine expression linear in (d0, d1).
FailureOr<std::array<int64_t, 3>> linearCoefficients(AffineExpr e) {
  using R = std::array<int64_t, 3>;
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return R{0, 0, c.getValue()};
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return d.getPosition() == 0 ? R{1, 0, 0} : R{0, 1, 0};
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return failure();
  FailureOr<R> l = linearCoefficients(bin.getLHS());
  FailureOr<R> r = linearCoefficients(bin.getRHS());
  if (failed(l) || failed(r))
    return failure();
  R out;
  switch (e.getKind()) {
  case AffineExprKind::Add:
    for (unsigned i = 0; i < 3; ++i)
      if (__builtin_add_overflow((*l)[i], (*r)[i], &out[i]))
        return failure();
    return out;
  case AffineExprKind::Mul: {
    // Linear only when one side is a constant.
    bool lConst = (*l)[0] == 0 && (*l)[1] == 0;
    bool rConst = (*r)[0] == 0 && (*r)[1] == 0;
    if (!lConst && !rConst)
      return failure();
    const R &v = lConst ? *r : *l;
    int64_t k = lConst ? (*l)[2] : (*r)[2];
    for (unsigned i = 0; i < 3; ++i)
      if (__builtin_mul_overflow(v[i], k, &out[i]))
        return failure();
    return out;
  }
  default:
    return failure();
  }
}

/// The 16-bit words of a segment value, little-endian, in row-major order.
FailureOr<std::vector<uint16_t>> segmentWords(SegmentOp seg) {
  ElementsAttr value = seg.getValue();
  auto type = cast<ShapedType>(value.getType());
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  uint64_t n = uint64_t(type.getNumElements());
  uint64_t bytes = n * bits / 8;
  std::vector<char> splat;
  ArrayRef<char> raw;
  if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(value)) {
    raw = dense.getRawData();
    if (dense.isSplat()) {
      splat.reserve(bytes);
      for (uint64_t i = 0; i < n; ++i)
        splat.insert(splat.end(), raw.begin(), raw.begin() + bits / 8);
      raw = splat;
    }
  } else if (auto res = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob)
      return seg.emitOpError() << "resource blob '"
                               << res.getRawHandle().getKey()
                               << "' has no data";
    raw = blob->getData();
  } else {
    return seg.emitOpError() << "value must be dense or dense_resource "
                                "elements to be emitted";
  }
  if (raw.size() != bytes)
    return seg.emitOpError() << "value holds " << raw.size()
                             << " bytes, its type " << type << " needs "
                             << bytes;
  // Host data is little-endian on every platform weft supports.
  std::vector<uint16_t> words(bytes / 2);
  for (size_t i = 0; i < words.size(); ++i)
    words[i] = uint16_t(uint8_t(raw[2 * i]) | (uint8_t(raw[2 * i + 1]) << 8));
  return words;
}

std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

class PeLowering {
public:
  PeLowering(Operation *pe, Block &body, const wt::Target &t)
      : pe(pe), body(body), t(t) {}

  LogicalResult run(wb::CodeImage &img, wb::Group &g);

private:
  LogicalResult placeTasks();
  FailureOr<unsigned> allocate(unsigned slots);
  LogicalResult encodeTask(TaskPlacement &tp, wb::CodeImage &img);
  FailureOr<uint16_t> recordUnit(DsrOp op);
  void putSlot(unsigned slot, uint32_t bits) {
    code[slot] = bits;
  }

  Operation *pe;
  Block &body;
  const wt::Target &t;
  /// Occupied word ranges (segments, records, placed bodies).
  std::vector<std::pair<uint64_t, uint64_t>> used;
  std::vector<TaskPlacement> tasks;
  /// slot -> 20-bit instruction.
  std::map<unsigned, uint32_t> code;
  /// Record symbol -> word address.
  std::map<std::string, uint64_t> records;
};

FailureOr<unsigned> PeLowering::allocate(unsigned slots) {
  uint64_t words = uint64_t(slots) * wt::Arch::kWordsPerSlot;
  uint64_t at = uint64_t(wt::Arch::kTaskTableSlots) * wt::Arch::kWordsPerSlot;
  llvm::sort(used);
  for (auto [b, e] : used) {
    if (e <= at)
      continue;
    if (b >= at + words)
      break;
    // Overlap: move past it, keeping slot alignment.
    at = (e + wt::Arch::kWordsPerSlot - 1) / wt::Arch::kWordsPerSlot *
         wt::Arch::kWordsPerSlot;
  }
  if (at + words > t.memoryWords())
    return failure();
  used.push_back({at, at + words});
  return unsigned(at / wt::Arch::kWordsPerSlot);
}

LogicalResult PeLowering::placeTasks() {
  for (auto task : body.getOps<TaskOp>()) {
    TaskPlacement tp;
    tp.op = task;
    unsigned id = unsigned(task.getId());
    tp.order = kindOrder(task.getKind()) * wt::Arch::kTaskIds + id;
    tp.entry = task.getKind() == TaskKind::control
                   ? wt::Arch::kControlTableOffset + id
                   : wt::Arch::kSlotsPerTaskEntry * id;
    for (Operation &op : task.getBody().front())
      tp.slots += isInstruction(op);
    tasks.push_back(tp);
  }
  llvm::stable_sort(tasks, [](const TaskPlacement &a, const TaskPlacement &b) {
    return a.order < b.order;
  });
  for (TaskPlacement &tp : tasks) {
    unsigned room = tp.op.getKind() == TaskKind::control
                        ? 1
                        : wt::Arch::kSlotsPerTaskEntry;
    if (tp.slots <= room) {
      tp.start = tp.entry;
      continue;
    }
    FailureOr<unsigned> at = allocate(tp.slots);
    if (failed(at))
      return tp.op.emitOpError()
             << "body of " << tp.slots << " instructions does not fit in "
             << "the free memory of @"
             << SymbolTable::getSymbolName(pe).getValue();
    tp.start = *at;
    putSlot(tp.entry,
            wt::Instruction::jump(wt::Opcode::JMP, uint16_t(tp.start))
                .encode());
  }
  return success();
}

FailureOr<uint16_t> PeLowering::recordUnit(DsrOp op) {
  auto it = records.find(op.getRecord().str());
  if (it == records.end())
    return op.emitOpError() << "record @" << op.getRecord()
                            << " is not a descriptor or segment of this PE";
  uint64_t addr = it->second;
  uint64_t unit = addr / wt::Arch::kWordsPerDescriptor;
  if (addr % wt::Arch::kWordsPerDescriptor ||
      unit >= (1u << wt::Arch::kDescriptorUnitBits) ||
      addr >= t.descriptorWords())
    return op.emitOpError() << "record @" << op.getRecord() << " at word "
                            << addr << " is not 4-word aligned below word "
                            << t.descriptorWords()
                            << ", the reach of DSR loads and stores";
  return uint16_t(unit);
}

LogicalResult PeLowering::encodeTask(TaskPlacement &tp, wb::CodeImage &img) {
  TaskOp task = tp.op;
  // Labels first: jumps may go forward.
  std::map<std::string, unsigned> labels;
  std::vector<wb::Symbol> labelSyms;
  unsigned slot = tp.start;
  for (Operation &op : task.getBody().front()) {
    if (auto label = dyn_cast<LabelOp>(op)) {
      labels.try_emplace(label.getName().str(), slot);
      labelSyms.push_back(
          {wb::SymbolKind::Label, label.getName().str(), slot, 0, 0, 0});
    }
    slot += isInstruction(op);
  }
  slot = tp.start;
  for (Operation &op : task.getBody().front()) {
    if (!isInstruction(op))
      continue;
    wt::Instruction in;
    if (auto inst = dyn_cast<InstOp>(op)) {
      FailureOr<wt::Instruction> got = inst.toInstruction();
      if (failed(got))
        return failure();
      in = *got;
    } else if (auto jump = dyn_cast<JumpOp>(op)) {
      wt::Opcode opc = jump.getCond() == JumpCond::always  ? wt::Opcode::JMP
                       : jump.getCond() == JumpCond::if_true ? wt::Opcode::BRT
                                                             : wt::Opcode::BRF;
      in = wt::Instruction::jump(opc, uint16_t(labels.at(jump.getLabel().str())));
    } else {
      auto dsr = cast<DsrOp>(op);
      FailureOr<uint16_t> unit = recordUnit(dsr);
      if (failed(unit))
        return failure();
      static const wt::Opcode loads[] = {wt::Opcode::LDS0, wt::Opcode::LDS1,
                                         wt::Opcode::LDD, wt::Opcode::LDX,
                                         wt::Opcode::LDSR};
      static const wt::Opcode stores[] = {wt::Opcode::STS0, wt::Opcode::STS1,
                                          wt::Opcode::STD, wt::Opcode::STX,
                                          wt::Opcode::STSR};
      unsigned file = unsigned(dsr.getFile());
      in = wt::Instruction::immOp(dsr.getStore() ? stores[file] : loads[file],
                                  uint8_t(dsr.getReg()), *unit);
    }
    std::string err = in.validate();
    if (!err.empty())
      return op.emitOpError() << "cannot be encoded: " << err;
    putSlot(slot++, in.encode());
  }
  img.symbols.push_back({wb::SymbolKind::Task, task.getSymName().str(),
                         tp.start, tp.slots,
                         uint8_t(kindOrder(task.getKind())),
                         uint8_t(task.getId())});
  img.symbols.insert(img.symbols.end(), labelSyms.begin(), labelSyms.end());
  return success();
}

LogicalResult PeLowering::run(wb::CodeImage &img, wb::Group &g) {
  std::vector<wb::Segment> segments;
  std::vector<std::pair<uint64_t, wb::Symbol>> recordSyms;
  // A DSD or XDSD record: its four words, its range and its symbol.
  auto addRecord = [&](StringRef name, wb::SymbolKind kind, uint64_t addr,
                       uint64_t bits) {
    segments.push_back({uint32_t(addr),
                        {uint16_t(bits), uint16_t(bits >> 16),
                         uint16_t(bits >> 32), uint16_t(bits >> 48)},
                        "",
                        ""});
    used.push_back({addr, addr + wt::Arch::kWordsPerDescriptor});
    records[name.str()] = addr;
    recordSyms.push_back({addr,
                          {kind, name.str(), uint32_t(addr),
                           wt::Arch::kWordsPerDescriptor, 0, 0}});
  };
  for (Operation &op : body) {
    if (auto route = dyn_cast<RouteOp>(op)) {
      wb::Route r;
      r.color = uint8_t(route.getColor());
      r.inputs = wt::DirSet(route.getInputs());
      r.outputs = wt::DirSet(route.getOutputs());
      // Flat (inputs, outputs, count) triples; the op's verifier checked
      // their ranges.
      if (std::optional<ArrayRef<int64_t>> flat = route.getPositions())
        for (size_t k = 0; k + 2 < flat->size(); k += 3)
          r.positions.push_back({wt::DirSet((*flat)[k]),
                                 wt::DirSet((*flat)[k + 1]),
                                 uint32_t((*flat)[k + 2])});
      img.routes.push_back(std::move(r));
    } else if (auto param = dyn_cast<ParamOp>(op)) {
      FailureOr<std::array<int64_t, 3>> c =
          linearCoefficients(param.getMap().getResult(0));
      if (failed(c))
        return param.emitOpError()
               << "map " << param.getMapAttr()
               << " is not linear in (x, y); the binary holds "
                  "cx * x + cy * y + c0";
      for (int64_t v : *c)
        if (v < INT32_MIN || v > INT32_MAX)
          return param.emitOpError() << "coefficient " << v << " of "
                                     << param.getMapAttr()
                                     << " does not fit 32 bits";
      g.params.push_back({uint8_t(param.getGpr()), int32_t((*c)[0]),
                          int32_t((*c)[1]), int32_t((*c)[2])});
    } else if (auto seg = dyn_cast<SegmentOp>(op)) {
      if (seg.getSymName().empty())
        return seg.emitOpError() << "needs a non-empty name";
      FailureOr<std::vector<uint16_t>> words = segmentWords(seg);
      if (failed(words))
        return failure();
      uint64_t addr = seg.getAddress();
      std::string type = typeText(seg.getValue().getType());
      if (seg.getPerPe()) {
        uint32_t perPE = uint32_t(seg.getWordsPerPE());
        g.perPe.push_back({uint32_t(addr), perPE, std::move(*words),
                           seg.getSymName().str(), type});
        used.push_back({addr, addr + perPE});
      } else {
        used.push_back({addr, addr + words->size()});
        segments.push_back({uint32_t(addr), std::move(*words),
                            seg.getSymName().str(), type});
        records[seg.getSymName().str()] = addr;
      }
    } else if (auto dsd = dyn_cast<DsdOp>(op)) {
      FailureOr<wt::Dsd> d = dsd.toDsd();
      if (failed(d))
        return failure();
      addRecord(dsd.getSymName(), wb::SymbolKind::Dsd, dsd.getAddress(),
                d->encode());
    } else if (auto x = dyn_cast<XdsdOp>(op)) {
      wt::Xdsd xd;
      for (unsigned i = 0; i < 4; ++i) {
        xd.len[i] = uint16_t(x.getLen()[i]);
        xd.strideSel[i] = uint8_t(x.getStrideSel()[i]);
      }
      addRecord(x.getSymName(), wb::SymbolKind::Xdsd, x.getAddress(),
                xd.encode());
    } else if (auto task = dyn_cast<TaskOp>(op)) {
      unsigned id = unsigned(task.getId());
      if (task.getKind() == TaskKind::data)
        img.active |= uint64_t(1) << id;
      if (task.getActive())
        img.active |= uint64_t(1) << id;
      if (task.getBlocked()) {
        if (task.getKind() == TaskKind::control)
          return task.emitOpError()
                 << "a control task cannot be blocked: block bits belong to "
                    "task ids (colors), not control entries";
        img.blocked |= uint64_t(1) << id;
      }
    } else {
      return op.emitOpError() << "cannot be emitted into a PE binary";
    }
  }
  llvm::stable_sort(recordSyms, [](auto &a, auto &b) { return a.first < b.first; });
  for (auto &[addr, sym] : recordSyms)
    img.symbols.push_back(sym);

  if (failed(placeTasks()))
    return failure();
  for (TaskPlacement &tp : tasks)
    if (failed(encodeTask(tp, img)))
      return failure();

  // Code segments: the whole task table (when there is code), then each
  // run of consecutive body slots.
  if (!tasks.empty()) {
    std::vector<std::pair<unsigned, unsigned>> runs = {
        {0, wt::Arch::kTaskTableSlots}};
    std::vector<std::pair<unsigned, unsigned>> bodies;
    for (TaskPlacement &tp : tasks)
      if (tp.start != tp.entry)
        bodies.push_back({tp.start, tp.start + tp.slots});
    llvm::sort(bodies);
    for (auto [b, e] : bodies) {
      if (runs.back().second == b)
        runs.back().second = e;
      else
        runs.push_back({b, e});
    }
    for (auto [b, e] : runs) {
      wb::Segment s;
      s.address = b * wt::Arch::kWordsPerSlot;
      for (unsigned slot = b; slot < e; ++slot) {
        auto it = code.find(slot);
        uint32_t bits = it == code.end() ? 0 : it->second;
        s.words.push_back(uint16_t(bits));
        s.words.push_back(uint16_t(bits >> 16));
      }
      segments.push_back(std::move(s));
    }
  }
  llvm::stable_sort(segments, [](const wb::Segment &a, const wb::Segment &b) {
    return a.address < b.address;
  });
  img.segments = std::move(segments);
  llvm::stable_sort(img.routes, [](const wb::Route &a, const wb::Route &b) {
    return a.color < b.color;
  });
  llvm::stable_sort(g.params, [](const wb::Param &a, const wb::Param &b) {
    return a.gpr < b.gpr;
  });
  llvm::stable_sort(g.perPe,
                    [](const wb::PerPeSegment &a, const wb::PerPeSegment &b) {
                      return a.address < b.address;
                    });
  return success();
}

FailureOr<machine::ElemType> ioElemType(IoOp io) {
  Type e = cast<RankedTensorType>(io.getType()).getElementType();
  if (e.isF32())
    return machine::ElemType::F32;
  if (e.isF16())
    return machine::ElemType::F16;
  if (e.isInteger(16))
    return machine::ElemType::I16;
  if (e.isInteger(32))
    return machine::ElemType::I32;
  return io.emitOpError() << "element type " << e
                          << " cannot be streamed (f32, f16, i16, i32)";
}

} // namespace

FailureOr<wb::Program>
weft::translate::lowerToBinary(wavelet::ProgramOp program) {
  wb::Program p;
  wt::Target t = program.getTarget().getModel();
  p.target = t.config();
  p.name = program.getSymName().str();
  std::map<std::string, int32_t> layerIndex;
  if (Attribute a = program->getAttr("layers")) {
    auto arr = dyn_cast<ArrayAttr>(a);
    if (!arr)
      return program.emitOpError() << "'layers' must be an array of strings";
    for (Attribute l : arr) {
      auto s = dyn_cast<StringAttr>(l);
      if (!s)
        return program.emitOpError() << "'layers' must be an array of strings";
      layerIndex.try_emplace(s.str(), int32_t(p.layers.size()));
      p.layers.push_back(s.str());
    }
  }
  for (Operation &op : program.getBody().front()) {
    if (auto io = dyn_cast<IoOp>(op)) {
      wb::IoStream s;
      s.name = io.getSymName().str();
      s.output = io.getDirection() == common::PortDir::output;
      s.edge = wt::Dir(unsigned(io.getEdge()));
      s.firstRow = uint32_t(io.getFirstRow());
      s.endRow = uint32_t(io.getEndRow());
      s.color = uint8_t(io.getColor());
      for (unsigned f = 0; f < wt::kNumPayloadFormats; ++f)
        if (io.getFormat() == wt::payloadFormatName(wt::PayloadFormat(f)))
          s.format = wt::PayloadFormat(f);
      FailureOr<wt::ElemType> dt = ioElemType(io);
      if (failed(dt))
        return failure();
      s.dtype = *dt;
      auto shape = cast<RankedTensorType>(io.getType()).getShape();
      s.shape.assign(shape.begin(), shape.end());
      s.order = io.getFmap() ? wb::IoOrder::FeatureMap : wb::IoOrder::RowMajor;
      if (std::optional<int64_t> c = io.getCloseout()) {
        s.skipZeros = true;
        s.closeout = uint8_t(*c);
      }
      p.io.push_back(std::move(s));
      continue;
    }
    common::RectAttr rect;
    Block *body = nullptr;
    bool single = false;
    if (auto g = dyn_cast<PeGroupOp>(op)) {
      rect = g.getRect();
      body = &g.getBody().front();
    } else if (auto pe = dyn_cast<PeOp>(op)) {
      rect = pe.getRect();
      body = &pe.getBody().front();
      single = true;
    } else {
      return op.emitOpError() << "cannot be emitted into a binary";
    }
    wb::Group g;
    g.name = SymbolTable::getSymbolName(&op).str();
    g.x = uint32_t(rect.getX());
    g.y = uint32_t(rect.getY());
    g.width = uint32_t(rect.getWidth());
    g.height = uint32_t(rect.getHeight());
    g.single = single;
    if (Attribute a = op.getAttr("layer")) {
      auto s = dyn_cast<StringAttr>(a);
      if (!s)
        return op.emitOpError() << "'layer' must be a string";
      auto [it, fresh] =
          layerIndex.try_emplace(s.str(), int32_t(p.layers.size()));
      if (fresh) {
        if (program->getAttr("layers"))
          return op.emitOpError() << "layer \"" << s.str()
                                  << "\" is not in the program's 'layers'";
        p.layers.push_back(s.str());
      }
      g.layer = it->second;
    }
    wb::CodeImage img;
    PeLowering lowering(&op, *body, t);
    if (failed(lowering.run(img, g)))
      return failure();
    g.image = uint32_t(p.images.size());
    p.images.push_back(std::move(img));
    p.groups.push_back(std::move(g));
  }
  std::string err = wb::verify(p);
  if (!err.empty())
    return program.emitOpError() << "emitted binary does not verify: " << err;
  return p;
}
