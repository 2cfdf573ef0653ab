//===- EmitEpilogue.h - A convolution's fused activation ---------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Emits an activation fused into a convolution or depthwise convolution
// (weft/Kernels/Epilogue.h; docs/execution-model.md, "Fused activations"):
// its constants (GPR pairs, a table in memory), the DSD records of its
// vectors, and per output row its steps over the output buffer, each loading
// the DSRs it needs (epilogueLoads) into one scratch DSR the kernel leaves
// free. The same steps a
// column kernel runs (EmitColumnKernel.cpp), so its accuracy is theirs.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_CONVERSION_EMITEPILOGUE_H
#define WEFT_LIB_CONVERSION_EMITEPILOGUE_H

#include "WaveletBuilder.h"

#include "wavelet/WaveletOps.h"

#include "weft/Kernels/Epilogue.h"
#include "weft/Machine/ISA.h"

#include "llvm/ADT/STLExtras.h"

#include <cstring>
#include <string>

namespace weft::conversion {

class EpilogueEmitter : WaveletBuilder {
public:
  /// `e` applied to rows of `rowLen` elements; its data from word `base`.
  EpilogueEmitter(mlir::OpBuilder &b, mlir::Location loc, const EpilogueCode &e,
                  int64_t rowLen, int64_t base)
      : WaveletBuilder(b, loc), e(e), rowLen(rowLen), base(base) {}

  /// Inside the PE, before its tasks: the constants.
  void emitData() {
    const std::vector<float> &consts = e.code.consts;
    for (size_t i = 0; i < consts.size() && i < size_t(column::kNumGprConsts);
         ++i) {
      uint32_t bits;
      std::memcpy(&bits, &consts[i], 4);
      for (int half = 0; half < 2; ++half)
        constParam(column::kGprConst[i] + half,
                   int64_t((bits >> (16 * half)) & 0xffff));
    }
    if (e.memoryConstants() == 0)
      return;
    std::vector<float> table(consts.begin() + column::kNumGprConsts,
                             consts.end());
    auto type =
        mlir::RankedTensorType::get({int64_t(table.size())}, b.getF32Type());
    wavelet::SegmentOp::create(
        b, loc, "epilogue_consts", constBase(), /*per_pe=*/false,
        mlir::DenseElementsAttr::get(type, llvm::ArrayRef<float>(table)));
  }

  /// The records of its vectors, one at each `address()`.
  void emitRecords(llvm::function_ref<int64_t()> address) {
    using namespace column;
    for (int32_t v : e.vectors) {
      DsdFields f = DsdFields::mem1d(rowLen, base);
      if (v >= kVecMem0) {
        f = DsdFields::mem1d(rowLen, constBase() + 2 * (v - kVecMem0))
                .withStride(0);
      } else if (v >= kVecLo0) {
        // 16-bit halves of a buffer's elements (low word first).
        int64_t slot = (v - kVecLo0) % 10, half = v >= kVecHi0 ? 1 : 0;
        f = DsdFields::mem1d(rowLen, base + 2 * rowLen * slot + half)
                .withStride(2);
      } else {
        f = DsdFields::mem1d(rowLen, base + 2 * rowLen * slotOf(v));
      }
      dsdAt(name(v), address(), f);
    }
  }

  /// The steps on the output buffer whose record is `buf`, through DSR `n`.
  void emitRow(llvm::StringRef buf, int64_t n) {
    using RF = wavelet::RegFile;
    using namespace column;
    auto rec = [&](int32_t v) {
      return v == kVecIn || v == kVecOut ? buf.str() : name(v);
    };
    std::vector<EpilogueLoads> loads = epilogueLoads(e);
    for (auto [s, l] : llvm::zip(e.code.steps, loads)) {
      if (l.d)
        dsrLoad(RF::ddsr, n, rec(s.dst));
      if (l.s0)
        dsrLoad(RF::s0dsr, n, rec(s.src0));
      Opcode opcode = wavelet::toOpcode(s.op);
      if (machine::info(s.op).family == machine::Family::Un) {
        inst(opcode, {ddsr(n), s0(n)});
        continue;
      }
      wavelet::OperandAttr src;
      switch (s.src1->kind) {
      case Opnd::Vec:
        if (l.s1)
          dsrLoad(RF::s1dsr, n, rec(s.src1->value));
        src = s1(n);
        break;
      case Opnd::Gpr:
        src = gpr(s.src1->value);
        break;
      case Opnd::Imm:
        src = operand(wavelet::OperandKind::imm, s.src1->value);
        break;
      }
      inst(opcode, {dsr(n), src});
    }
  }

private:
  int64_t constBase() const { return base + 2 * rowLen * e.code.buffers; }
  static std::string name(int32_t v) { return "epi_v" + std::to_string(v); }

  const EpilogueCode &e;
  const int64_t rowLen, base;
};

} // namespace weft::conversion

#endif // WEFT_LIB_CONVERSION_EMITEPILOGUE_H
