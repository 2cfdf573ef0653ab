//===- Registration.cpp - mlir-translate entries for .wfb -------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Binary/File.h"
#include "weft/InitDialects.h"
#include "weft/Translate/Wfb.h"

#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;
namespace wb = weft::binary;

/// The single wavelet.program of a translated file.
static FailureOr<weft::wavelet::ProgramOp> findProgram(Operation *op) {
  if (auto p = dyn_cast<weft::wavelet::ProgramOp>(op))
    return p;
  SmallVector<weft::wavelet::ProgramOp> found;
  op->walk([&](weft::wavelet::ProgramOp p) { found.push_back(p); });
  if (found.size() != 1)
    return op->emitError() << "expected exactly one wavelet.program, found "
                           << found.size();
  return found.front();
}

void weft::translate::registerWfbTranslations() {
  static TranslateFromMLIRRegistration toWfb(
      "wavelet-to-wfb", "encode a wavelet.program as a .wfb PE task binary",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        FailureOr<wavelet::ProgramOp> prog = findProgram(op);
        if (failed(prog))
          return failure();
        FailureOr<wb::Program> p = lowerToBinary(*prog);
        if (failed(p))
          return failure();
        std::vector<uint8_t> bytes = wb::write(*p);
        os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
        return success();
      },
      [](DialectRegistry &registry) { weft::registerAllDialects(registry); });

  static TranslateToMLIRRegistration fromWfb(
      "wfb-to-wavelet", "disassemble a .wfb PE task binary to wavelet",
      [](llvm::StringRef input, MLIRContext *ctx) -> OwningOpRef<Operation *> {
        ctx->loadDialect<common::WeftDialect, wavelet::WaveletDialect>();
        Location loc = UnknownLoc::get(ctx);
        std::string err;
        std::optional<wb::Program> p =
            wb::read(reinterpret_cast<const uint8_t *>(input.data()),
                     input.size(), &err);
        if (!p) {
          emitError(loc) << "invalid .wfb binary: " << err;
          return nullptr;
        }
        OwningOpRef<ModuleOp> module = raiseFromBinary(*p, ctx, loc);
        if (!module)
          return nullptr;
        return OwningOpRef<Operation *>(module.release());
      },
      [](DialectRegistry &registry) { weft::registerAllDialects(registry); });
}
