//===- Densities.cpp - Expected densities of streams, as passes take them -===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/FabricTransforms/Densities.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

using namespace mlir;

namespace weft::conversion {

FailureOr<SparseMode> parseSparseOptions(Operation *where, StringRef mode,
                                         double density, double inputDensity) {
  std::optional<SparseMode> m = parseSparseMode(mode.str());
  if (!m)
    return where->emitError("sparse-activations must be off, auto or on, "
                            "not '")
           << mode << "'";
  if (!(density >= 0.0 && density <= 1.0))
    return where->emitError("density must be between 0 and 1, not ")
           << density;
  if (!(inputDensity >= 0.0 && inputDensity <= 1.0))
    return where->emitError("input-density must be between 0 and 1, not ")
           << inputDensity;
  return *m;
}

LogicalResult parseDensities(Operation *where, ArrayRef<std::string> entries,
                             StringRef option,
                             llvm::StringMap<ExpectedDensity> &out) {
  auto fraction = [](StringRef text, double &d) {
    return !text.getAsDouble(d) && d >= 0.0 && d <= 1.0;
  };
  for (const std::string &entry : entries) {
    auto [name, value] = StringRef(entry).rsplit('=');
    SmallVector<StringRef> parts;
    value.split(parts, ':');
    ExpectedDensity d(0.0);
    bool ok = !name.empty() && fraction(parts.front(), d.mean);
    for (StringRef p : ArrayRef(parts).drop_front()) {
      double v;
      ok = ok && fraction(p, v);
      d.perElement.push_back(v);
    }
    if (!ok)
      return where->emitError(option)
             << " entry '" << StringRef(entry).take_front(80)
             << (entry.size() > 80 ? "..." : "")
             << "' is not NAME=D or NAME=D:P0:...:Pn-1 with every D and P "
                "between 0 and 1";
    out[name] = std::move(d);
  }
  return success();
}

const ExpectedDensity *
measuredDensity(Operation *kernel,
                const llvm::StringMap<ExpectedDensity> &measured) {
  std::string last;
  kernel->getLoc()->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l))
      last = name.getName().str();
    return WalkResult::advance();
  });
  auto it = measured.find(last);
  if (last.empty() || it == measured.end())
    return nullptr;
  return &it->second;
}

} // namespace weft::conversion
