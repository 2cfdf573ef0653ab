//===- ImportWfb.cpp - Disassemble a .wfb binary to a wavelet.program -------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The inverse of EmitWfb.cpp. Names come from the binary's symbols: a Task
// symbol gives a task's kind, id, first slot and length, the Label symbols
// after it its labels, Dsd/Xdsd symbols the descriptor records; named
// segments become wavelet.segment ops whose values are dense_resource blobs
// (typed with the segment's recorded type when it fits the words). Every
// rebuilt instruction and record is re-encoded and compared with the bytes
// it came from, so the result is exactly equivalent or the import fails.
//
//===----------------------------------------------------------------------===//

#include "weft/Translate/Wfb.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace weft;
using namespace weft::wavelet;
namespace wt = weft::machine;
namespace wb = weft::binary;

namespace {

class Raiser {
public:
  Raiser(MLIRContext *ctx, Location loc, const wb::Program &p)
      : ctx(ctx), loc(loc), p(p), b(ctx) {}

  OwningOpRef<ModuleOp> run();

private:
  LogicalResult fail(const Twine &msg) {
    emitError(loc) << msg;
    return failure();
  }
  LogicalResult raiseGroup(const wb::Group &g, Block &body);
  LogicalResult raiseTask(const wb::Symbol &task,
                          ArrayRef<const wb::Symbol *> labels,
                          const std::vector<uint16_t> &mem,
                          const std::map<uint32_t, std::string> &records,
                          const std::map<uint32_t, std::string> &strides,
                          const std::string &where);
  ElementsAttr blob(const std::string &name, const std::string &typeText,
                    const std::vector<uint16_t> &words,
                    ArrayRef<int64_t> leading);

  MLIRContext *ctx;
  Location loc;
  const wb::Program &p;
  OpBuilder b;
};

/// A shaped type for `words` 16-bit words: the recorded type when it parses
/// and matches, else a tensor of i16 (with `leading` dimensions first).
ElementsAttr Raiser::blob(const std::string &name, const std::string &typeText,
                          const std::vector<uint16_t> &words,
                          ArrayRef<int64_t> leading) {
  ShapedType type;
  if (!typeText.empty()) {
    // A bad recorded type is not an error: fall back quietly.
    ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
    auto parsed = dyn_cast_or_null<ShapedType>(parseType(typeText, ctx));
    if (parsed && parsed.hasStaticShape() &&
        parsed.getElementType().isIntOrFloat()) {
      unsigned bits = parsed.getElementType().getIntOrFloatBitWidth();
      bool leadOk = leading.empty() ||
                    (parsed.getRank() >= 2 &&
                     parsed.getDimSize(0) == leading[0] &&
                     parsed.getDimSize(1) == leading[1]);
      if ((bits == 16 || bits == 32) && leadOk &&
          uint64_t(parsed.getNumElements()) * bits / 16 == words.size())
        type = parsed;
    }
  }
  if (!type) {
    SmallVector<int64_t> shape(leading.begin(), leading.end());
    uint64_t rest = words.size();
    for (int64_t d : leading)
      rest = d ? rest / uint64_t(d) : 0;
    shape.push_back(int64_t(rest));
    type = RankedTensorType::get(shape, IntegerType::get(ctx, 16));
  }
  unsigned bytesPerElem = type.getElementType().getIntOrFloatBitWidth() / 8;
  std::vector<char> bytes(words.size() * 2);
  for (size_t i = 0; i < words.size(); ++i) {
    bytes[2 * i] = char(words[i] & 0xff);
    bytes[2 * i + 1] = char(words[i] >> 8);
  }
  return DenseResourceElementsAttr::get(
      type, name,
      HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, bytesPerElem));
}

LogicalResult
Raiser::raiseTask(const wb::Symbol &task, ArrayRef<const wb::Symbol *> labels,
                  const std::vector<uint16_t> &mem,
                  const std::map<uint32_t, std::string> &records,
                  const std::map<uint32_t, std::string> &strides,
                  const std::string &where) {
  std::string what = where + ", task @" + task.name;
  TaskKind kind = TaskKind(task.taskKind);
  uint64_t end = uint64_t(task.address) + task.size;
  if (end * wt::Arch::kWordsPerSlot > mem.size())
    return fail(what + ": code [" + Twine(task.address) + ", " + Twine(end) +
                ") leaves memory");
  unsigned entry = kind == TaskKind::control
                       ? wt::Arch::kControlTableOffset + task.taskId
                       : wt::Arch::kSlotsPerTaskEntry * task.taskId;
  auto fetch = [&](uint64_t slot) {
    return uint32_t(mem[2 * slot]) | (uint32_t(mem[2 * slot + 1]) << 16);
  };
  if (task.address != entry &&
      fetch(entry) !=
          wt::Instruction::jump(wt::Opcode::JMP, uint16_t(task.address))
              .encode())
    return fail(what + ": entry slot " + Twine(entry) +
                " does not jump to the body at slot " + Twine(task.address));

  auto op = TaskOp::create(b, loc, task.name, kind, task.taskId,
                           /*active=*/false, /*blocked=*/false);
  Block *block = new Block();
  op.getBody().push_back(block);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(block);
  size_t nextLabel = 0;
  auto emitLabels = [&](uint64_t slot) {
    while (nextLabel < labels.size() && labels[nextLabel]->address == slot)
      LabelOp::create(b, loc, labels[nextLabel++]->name);
  };
  for (uint64_t slot = task.address; slot < end; ++slot) {
    emitLabels(slot);
    uint32_t bits = fetch(slot);
    std::string err;
    std::optional<wt::Instruction> in = wt::Instruction::decode(bits, &err);
    if (!in)
      return fail(what + ": slot " + Twine(slot) + " does not decode: " + err);
    const wt::OpcodeInfo &info = wt::info(in->opcode);
    std::string mnemonic = info.mnemonic;
    Operation *built = nullptr;
    using O = wt::Opcode;
    switch (in->opcode) {
    case O::JMP:
    case O::BRT:
    case O::BRF: {
      const wb::Symbol *target = nullptr;
      for (const wb::Symbol *l : labels)
        if (l->address == in->target) {
          target = l;
          break;
        }
      if (!target)
        return fail(what + ": " + mnemonic + " at slot " + Twine(slot) +
                    " targets slot " + Twine(in->target) +
                    ", which has no label of this task");
      JumpCond cond = in->opcode == O::JMP   ? JumpCond::always
                      : in->opcode == O::BRT ? JumpCond::if_true
                                             : JumpCond::if_false;
      JumpOp::create(b, loc, target->name, cond);
      continue;
    }
    case O::MOVI:
    case O::MOVH:
      built = InstOp::create(b, loc, *in);
      break;
    default:
      if (info.family == wt::Family::Imm) {
        // DSR, XDSR and stride register loads and stores.
        // Codes 0-3 load S0/S1/D/X, 4-7 store them, 8 LDSR, 9 STSR.
        unsigned code = info.code;
        bool store = (code >= 4 && code <= 7) || code == 9;
        RegFile file;
        switch (in->opcode) {
        case O::LDS0:
        case O::STS0:
          file = RegFile::s0dsr;
          break;
        case O::LDS1:
        case O::STS1:
          file = RegFile::s1dsr;
          break;
        case O::LDD:
        case O::STD:
          file = RegFile::ddsr;
          break;
        case O::LDX:
        case O::STX:
          file = RegFile::xdsr;
          break;
        default:
          file = RegFile::stride;
          break;
        }
        uint32_t addr = uint32_t(in->imm) * wt::Arch::kWordsPerDescriptor;
        const auto &names = file == RegFile::stride ? strides : records;
        auto it = names.find(addr);
        if (it == names.end())
          return fail(what + ": " + mnemonic + " at slot " + Twine(slot) +
                      " addresses word " + Twine(addr) + ", where no " +
                      (file == RegFile::stride ? "named segment"
                                               : "descriptor symbol") +
                      " is");
        built = DsrOp::create(b, loc, store, file, in->reg, it->second);
        break;
      }
      built = InstOp::create(b, loc, *in);
      break;
    }
    // The rebuilt op must encode to the same word.
    if (auto inst = dyn_cast<InstOp>(built)) {
      FailureOr<wt::Instruction> again = inst.toInstruction();
      if (failed(again) || again->encode() != bits)
        return fail(what + ": slot " + Twine(slot) + " (" + in->str() +
                    ") cannot be written as a wavelet.inst");
    }
  }
  emitLabels(end);
  if (nextLabel != labels.size())
    return fail(what + ": label '" + labels[nextLabel]->name + "' at slot " +
                Twine(labels[nextLabel]->address) +
                " is outside the task's code");
  return success();
}

LogicalResult Raiser::raiseGroup(const wb::Group &g, Block &body) {
  const wb::CodeImage &img = p.images[g.image];
  std::string where = "group @" + g.name;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&body);
  for (const wb::Param &prm : g.params) {
    AffineExpr e = getAffineDimExpr(0, ctx) * prm.cx +
                   getAffineDimExpr(1, ctx) * prm.cy +
                   getAffineConstantExpr(prm.c0, ctx);
    ParamOp::create(b, loc, prm.gpr, AffineMap::get(2, 0, e));
  }
  for (const wb::Route &r : img.routes) {
    DenseI64ArrayAttr positions;
    if (!r.positions.empty()) {
      SmallVector<int64_t> flat;
      for (const wb::RoutePosition &pos : r.positions)
        flat.append(
            {int64_t(pos.inputs), int64_t(pos.outputs), int64_t(pos.count)});
      positions = b.getDenseI64ArrayAttr(flat);
    }
    RouteOp::create(b, loc, r.color, r.inputs, r.outputs, positions);
  }

  // The PE's memory as the loader would see it.
  std::vector<uint16_t> mem(p.target.memoryBytes / 2, 0);
  std::map<uint32_t, std::string> strides;
  for (const wb::Segment &s : img.segments) {
    std::copy(s.words.begin(), s.words.end(), mem.begin() + s.address);
    if (s.name.empty())
      continue;
    if (s.address % wt::Arch::kWordsPerDescriptor == 0 && s.words.size() == 1)
      strides[s.address] = s.name;
    SegmentOp::create(b, loc, s.name, s.address, /*per_pe=*/false,
                      blob(s.name, s.type, s.words, {}));
  }
  for (const wb::PerPeSegment &s : g.perPe)
    SegmentOp::create(
        b, loc, s.name, s.address, /*per_pe=*/true,
        blob(s.name, s.type, s.words,
             {int64_t(g.height), int64_t(g.width)}));

  std::map<uint32_t, std::string> records;
  for (const wb::Symbol &s : img.symbols) {
    if (s.kind != wb::SymbolKind::Dsd && s.kind != wb::SymbolKind::Xdsd)
      continue;
    if (uint64_t(s.address) + 4 > mem.size())
      return fail(where + ": record @" + s.name + " leaves memory");
    uint64_t bits = 0;
    for (unsigned i = 0; i < 4; ++i)
      bits |= uint64_t(mem[s.address + i]) << (16 * i);
    records[s.address] = s.name;
    std::string err;
    auto bad = [&]() {
      return fail(where + ": record @" + s.name + " at word " +
                  Twine(s.address) + " (0x" + llvm::utohexstr(bits) +
                  ") cannot be written as a wavelet." +
                  (s.kind == wb::SymbolKind::Dsd ? "dsd" : "xdsd") +
                  (err.empty() ? "" : ": " + err));
    };
    if (s.kind == wb::SymbolKind::Xdsd) {
      std::optional<wt::Xdsd> x = wt::Xdsd::decode(bits, &err);
      if (!x || x->encode() != bits)
        return bad();
      XdsdOp::create(b, loc, s.name, s.address,
                     ArrayRef<int64_t>{x->len[0], x->len[1], x->len[2],
                                       x->len[3]},
                     ArrayRef<int64_t>{x->strideSel[0], x->strideSel[1],
                                       x->strideSel[2], x->strideSel[3]});
      continue;
    }
    std::optional<wt::Dsd> d = wt::Dsd::decode(bits, &err);
    if (!d)
      return bad();
    auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
    IntegerAttr length, base, stride, color, ac, index, utid, xdsr, pushAc,
        popAc;
    StringAttr format;
    bool term = false, ctrl = false, wli = false, ix = false, nz = false,
         sl = false;
    switch (d->kind) {
    case wt::DsdKind::FabricIn:
    case wt::DsdKind::FabricOut:
      length = i64(d->length);
      color = i64(d->color);
      if (d->format != wt::PayloadFormat::Dense32)
        format = b.getStringAttr(wt::payloadFormatName(d->format));
      if (d->onDone.enabled)
        ac = i64(d->onDone.color);
      if (d->microthread)
        utid = i64(d->utid);
      term = d->kind == wt::DsdKind::FabricIn && d->terminateOnControl;
      ctrl = d->kind == wt::DsdKind::FabricOut && d->control;
      if (d->kind == wt::DsdKind::FabricOut) {
        if (d->index6)
          index = i64(d->index6);
        wli = d->indexFromGpr4;
        nz = d->skipZeros;
      }
      break;
    case wt::DsdKind::Mem1D:
      length = i64(d->length);
      base = i64(d->base);
      if (d->stride != 1)
        stride = i64(d->stride);
      ix = d->indexed;
      sl = d->sliced;
      break;
    case wt::DsdKind::Mem4D:
      base = i64(d->base);
      xdsr = i64(d->xdsr);
      ix = d->indexed;
      break;
    case wt::DsdKind::Fifo:
      length = i64(d->length);
      base = i64(d->base);
      if (d->onPush.enabled)
        pushAc = i64(d->onPush.color);
      if (d->onPop.enabled)
        popAc = i64(d->onPop.color);
      break;
    }
    auto op = DsdOp::create(b, loc, s.name, s.address,
                            DsdKind(unsigned(d->kind)), length, base, stride,
                            color, format, ac, term, ctrl, index, wli, ix,
                            utid, xdsr, pushAc, popAc, nz, sl);
    FailureOr<wt::Dsd> again = op.toDsd();
    if (failed(again) || again->encode() != bits)
      return bad();
  }

  // Tasks, each followed by its labels in the symbol table.
  uint64_t explainedActive = 0, explainedBlocked = 0;
  const auto &syms = img.symbols;
  for (size_t i = 0; i < syms.size(); ++i) {
    const wb::Symbol &s = syms[i];
    if (s.kind == wb::SymbolKind::Label)
      continue;
    if (s.kind != wb::SymbolKind::Task)
      continue;
    SmallVector<const wb::Symbol *> labels;
    for (size_t j = i + 1; j < syms.size() && syms[j].kind ==
                                                   wb::SymbolKind::Label;
         ++j)
      labels.push_back(&syms[j]);
    if (s.taskId >= wt::Arch::kTaskIds)
      return fail(where + ": task @" + s.name + " has id " +
                  Twine(unsigned(s.taskId)));
    if (failed(raiseTask(s, labels, mem, records, strides, where)))
      return failure();
    auto task = cast<TaskOp>(body.back());
    uint64_t bit = uint64_t(1) << s.taskId;
    TaskKind kind = TaskKind(s.taskKind);
    if (kind == TaskKind::data) {
      if (!(img.active & bit))
        return fail(where + ": data task @" + s.name + " on color " +
                    Twine(unsigned(s.taskId)) +
                    " has its active bit clear, which the dialect cannot "
                    "express");
      explainedActive |= bit;
    } else if (kind == TaskKind::local && (img.active & bit)) {
      task.setActive(true);
      explainedActive |= bit;
    }
    if (kind != TaskKind::control && (img.blocked & bit)) {
      task.setBlocked(true);
      explainedBlocked |= bit;
    }
  }
  if (img.active & ~explainedActive)
    return fail(where + ": active bits 0x" +
                llvm::utohexstr(img.active & ~explainedActive) +
                " belong to no data or local task");
  if (img.blocked & ~explainedBlocked)
    return fail(where + ": block bits 0x" +
                llvm::utohexstr(img.blocked & ~explainedBlocked) +
                " belong to no data or local task");
  return success();
}

OwningOpRef<ModuleOp> Raiser::run() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto prog =
      ProgramOp::create(b, loc, p.name, common::TargetAttr::get(ctx, p.target));
  if (!p.layers.empty()) {
    SmallVector<Attribute> layers;
    for (const std::string &l : p.layers)
      layers.push_back(b.getStringAttr(l));
    prog->setAttr("layers", b.getArrayAttr(layers));
  }
  prog.getBody().push_back(new Block());
  b.setInsertionPointToEnd(&prog.getBody().front());
  for (const wb::IoStream &s : p.io) {
    Type elem;
    switch (s.dtype) {
    case wt::ElemType::F16:
      elem = b.getF16Type();
      break;
    case wt::ElemType::I16:
      elem = b.getIntegerType(16);
      break;
    case wt::ElemType::I32:
      elem = b.getIntegerType(32);
      break;
    default:
      elem = b.getF32Type();
      break;
    }
    IoOp::create(b, loc, s.name,
                 s.output ? common::PortDir::output : common::PortDir::input,
                 common::Edge(unsigned(s.edge)), s.firstRow, s.endRow, s.color,
                 wt::payloadFormatName(s.format),
                 RankedTensorType::get(s.shape, elem),
                 /*fmap=*/s.order == wb::IoOrder::FeatureMap,
                 s.skipZeros ? b.getI64IntegerAttr(s.closeout) : IntegerAttr());
  }
  for (const wb::Group &g : p.groups) {
    Operation *pe;
    if (g.single && g.width == 1 && g.height == 1)
      pe = PeOp::create(b, loc, g.name, g.x, g.y);
    else
      pe = PeGroupOp::create(
          b, loc, g.name,
          common::RectAttr::get(ctx, g.x, g.y, g.width, g.height));
    if (g.layer >= 0)
      pe->setAttr("layer", b.getStringAttr(p.layers[g.layer]));
    Region &region = pe->getRegion(0);
    region.push_back(new Block());
    if (failed(raiseGroup(g, region.front())))
      return nullptr;
  }
  if (failed(mlir::verify(*module)))
    return nullptr;
  return module;
}

} // namespace

OwningOpRef<ModuleOp> weft::translate::raiseFromBinary(const wb::Program &p,
                                                       MLIRContext *ctx,
                                                       Location loc) {
  return Raiser(ctx, loc, p).run();
}
