//===- weft-translate.cpp - translations in and out of weft's IR ----------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Registered translations:
//   --wavelet-to-listing   every task's instructions encoded with the machine
//                          model, as "slot: word  assembly" lines, so the
//                          encoding can be read and checked as text.
//   --wavelet-to-wfb       a wavelet.program as a .wfb PE task binary
//   --wfb-to-wavelet       a .wfb binary disassembled to wavelet
//                          (lib/Translate, shared with weftc).
//   --import-onnx          an ONNX model as func/tensor/linalg on static
//                          shapes (lib/Import; --batch-size N).
//
//===----------------------------------------------------------------------===//

#include "weft/Import/ImportTranslation.h"
#include "weft/InitDialects.h"
#include "wavelet/WaveletOps.h"
#include "weft/Translate/Wfb.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace wt = weft::machine;

/// Prints the encoding of every task of one PE or PE group.
static LogicalResult printListing(Operation *pe, Block &body,
                                  llvm::raw_ostream &os) {
  os << "pe " << SymbolTable::getSymbolName(pe).getValue() << "\n";
  for (auto task : body.getOps<weft::wavelet::TaskOp>()) {
    os << "  task " << task.getSymName() << " "
       << weft::wavelet::stringifyTaskKind(task.getKind()) << " "
       << task.getId() << "\n";
    unsigned index = 0;
    for (Operation &op : task.getBody().front()) {
      auto inst = dyn_cast<weft::wavelet::InstOp>(op);
      if (!inst) {
        if (auto label = dyn_cast<weft::wavelet::LabelOp>(op))
          os << "   " << label.getName() << ":\n";
        else if (!isa<weft::wavelet::DsrOp, weft::wavelet::JumpOp>(op))
          continue;
        else
          os << "    " << index++ << ": (address resolved at emission) "
             << op.getName() << "\n";
        continue;
      }
      FailureOr<wt::Instruction> in = inst.toInstruction();
      if (failed(in))
        return failure();
      uint32_t word = in->encode();
      // Decoding must give the instruction back; a listing that does not
      // round-trip is a bug in the machine model.
      std::optional<wt::Instruction> back = wt::Instruction::decode(word);
      if (!back || !(*back == *in))
        return inst.emitOpError("does not survive encode/decode");
      os << "    " << index++ << ": " << llvm::format_hex_no_prefix(word, 5)
         << "  " << in->str() << "\n";
    }
  }
  return success();
}

int main(int argc, char **argv) {
  weft::translate::registerWfbTranslations();
  weft::import::registerOnnxImportTranslation();
  TranslateFromMLIRRegistration listing(
      "wavelet-to-listing", "encode wavelet instructions into a listing",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        LogicalResult result = success();
        op->walk([&](Operation *child) {
          if (auto g = dyn_cast<weft::wavelet::PeGroupOp>(child))
            result = succeeded(result)
                         ? printListing(g, g.getBody().front(), os)
                         : result;
          else if (auto p = dyn_cast<weft::wavelet::PeOp>(child))
            result = succeeded(result)
                         ? printListing(p, p.getBody().front(), os)
                         : result;
        });
        return result;
      },
      [](DialectRegistry &registry) { weft::registerAllDialects(registry); });
  return failed(mlirTranslateMain(argc, argv, "weft translation driver"));
}
