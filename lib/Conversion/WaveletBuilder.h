//===- WaveletBuilder.h - Building wavelet ops (internal) -------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The vocabulary the per-PE program emitters (dense layers, column kernels)
// share: one wavelet op at the builder's insertion point per call.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_CONVERSION_WAVELETBUILDER_H
#define WEFT_LIB_CONVERSION_WAVELETBUILDER_H

#include "weft/Kernels/Routing.h"

#include "wavelet/WaveletOps.h"

#include "mlir/IR/Builders.h"

namespace weft::conversion {


class WaveletBuilder {
public:
  WaveletBuilder(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  /// `wavelet.route color C from [in] to [out]` (DirSet masks).
  void route(int64_t color, uint8_t in, uint8_t out) {
    mlir::OperationState st(loc, wavelet::RouteOp::getOperationName());
    st.addAttribute("color", b.getI64IntegerAttr(color));
    st.addAttribute("inputs", b.getI32IntegerAttr(in));
    st.addAttribute("outputs", b.getI32IntegerAttr(out));
    b.create(st);
  }
  /// One `wavelet.route` per color `table` gives PE (x, y), by color.
  void routesAt(const RouteTable &table, int64_t x, int64_t y) {
    auto it = table.find({x, y});
    if (it == table.end())
      return;
    for (const auto &[color, sw] : it->second)
      route(color, sw.in, sw.out);
  }
  /// `wavelet.dsd @name at ADDRESS kind {fields}`.
  void dsdAt(llvm::StringRef name, int64_t address, wavelet::DsdKind kind,
             llvm::ArrayRef<mlir::NamedAttribute> fields) {
    mlir::OperationState st(loc, wavelet::DsdOp::getOperationName());
    st.addAttribute(mlir::SymbolTable::getSymbolAttrName(),
                    b.getStringAttr(name));
    st.addAttribute("address", b.getI64IntegerAttr(address));
    st.addAttribute("kind", wavelet::DsdKindAttr::get(b.getContext(), kind));
    st.addAttributes(fields);
    b.create(st);
  }
  /// `wavelet.dsr load FILE REG, @record`.
  void dsrLoad(wavelet::RegFile f, int64_t reg, llvm::StringRef record) {
    mlir::OperationState st(loc, wavelet::DsrOp::getOperationName());
    st.addAttribute("file", wavelet::RegFileAttr::get(b.getContext(), f));
    st.addAttribute("reg", b.getI64IntegerAttr(reg));
    st.addAttribute("record",
                    mlir::FlatSymbolRefAttr::get(b.getContext(), record));
    b.create(st);
  }
  using Opcode = wavelet::Opcode;
  /// `wavelet.inst OPCODE args [term]`.
  void inst(Opcode opcode, llvm::ArrayRef<wavelet::OperandAttr> args,
            bool term = false) {
    wavelet::InstOp::create(b, loc, opcode, args, term);
  }
  /// The operands of `inst`: `dsr n`, `ddsr n`, `s0dsr n`, `s1dsr n`,
  /// `gpr n`, `imm zero`... and a literal (movi's immediate, a task id).
  wavelet::OperandAttr dsr(int64_t n) {
    return operand(wavelet::OperandKind::dsr, n);
  }
  wavelet::OperandAttr ddsr(int64_t n) {
    return operand(wavelet::OperandKind::ddsr, n);
  }
  wavelet::OperandAttr s0(int64_t n) {
    return operand(wavelet::OperandKind::s0dsr, n);
  }
  wavelet::OperandAttr s1(int64_t n) {
    return operand(wavelet::OperandKind::s1dsr, n);
  }
  wavelet::OperandAttr gpr(int64_t n) {
    return operand(wavelet::OperandKind::gpr, n);
  }
  wavelet::OperandAttr imm(target::SmallImm v) {
    return operand(wavelet::OperandKind::imm, int64_t(v));
  }
  wavelet::OperandAttr lit(int64_t v) {
    return operand(wavelet::OperandKind::lit, v);
  }
  wavelet::OperandAttr operand(wavelet::OperandKind kind, int64_t value) {
    return wavelet::OperandAttr::get(b.getContext(), kind, value);
  }
  void label(llvm::StringRef name) {
    mlir::OperationState st(loc, wavelet::LabelOp::getOperationName());
    st.addAttribute("name", b.getStringAttr(name));
    b.create(st);
  }
  void jump(llvm::StringRef name) {
    mlir::OperationState st(loc, wavelet::JumpOp::getOperationName());
    st.addAttribute("label", b.getStringAttr(name));
    b.create(st);
  }
  /// An empty `wavelet.task`; fill it through its body block.
  wavelet::TaskOp task(llvm::StringRef name, wavelet::TaskKind kind, int64_t id,
                       bool active) {
    mlir::OperationState st(loc, wavelet::TaskOp::getOperationName());
    st.addAttribute(mlir::SymbolTable::getSymbolAttrName(),
                    b.getStringAttr(name));
    st.addAttribute("kind", wavelet::TaskKindAttr::get(b.getContext(), kind));
    st.addAttribute("id", b.getI64IntegerAttr(id));
    if (active)
      st.addAttribute("active", b.getUnitAttr());
    st.addRegion()->emplaceBlock();
    return llvm::cast<wavelet::TaskOp>(b.create(st));
  }
  mlir::NamedAttribute i64(llvm::StringRef n, int64_t v) {
    return b.getNamedAttr(n, b.getI64IntegerAttr(v));
  }

protected:
  mlir::OpBuilder &b;
  mlir::Location loc;
};

} // namespace weft::conversion

#endif // WEFT_LIB_CONVERSION_WAVELETBUILDER_H
