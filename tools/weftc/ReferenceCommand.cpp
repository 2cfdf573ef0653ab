//===- ReferenceCommand.cpp - weftc reference -----------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// weftc reference model.onnx --input NAME=FILE ... --output-dir DIR
//
// Imports the model, runs it on the host reference and writes every graph
// output to DIR/<output name>.npy (or .pb with --format=pb).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "weft/Reference/Reference.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace weft;
using namespace weftc;

/// A file name for a graph output: the ONNX name with every character that
/// is not safe in a path replaced by '_'.
static std::string outputFileStem(StringRef name, size_t index) {
  if (name.empty())
    return "output_" + std::to_string(index);
  std::string stem;
  for (char c : name)
    stem += isAlnum(c) || c == '_' || c == '-' || c == '.' ? c : '_';
  if (stem == "." || stem == "..")
    stem = "output_" + std::to_string(index);
  return stem;
}

static std::string describe(const tensorio::HostTensor &t) {
  std::string s = tensorio::dtypeName(t.dtype);
  s += "[";
  for (size_t i = 0; i < t.shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

int weftc::referenceMain(int argc, char **argv) {
  cl::OptionCategory category("weftc reference options");
  cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                                 cl::desc("<model.onnx or imported .mlir>"), cl::cat(category));
  cl::list<std::string> inputSpecs(
      "input",
      cl::desc("A graph input: NAME=FILE, or FILE for the next input in "
               "graph order (.npy or ONNX TensorProto .pb)"),
      cl::value_desc("NAME=FILE"), cl::cat(category));
  cl::opt<std::string> outputDir("output-dir", cl::Required,
                                 cl::desc("Where to write the outputs"),
                                 cl::value_desc("DIR"), cl::cat(category));
  cl::opt<std::string> format(
      "format", cl::init("npy"),
      cl::desc("Output file format: npy or pb (ONNX TensorProto)"),
      cl::cat(category));
  cl::opt<int64_t> batchSize(
      "batch-size", cl::init(1),
      cl::desc("Size bound to a symbolic batch dimension"), cl::cat(category));
  cl::opt<unsigned> optLevel("opt-level", cl::init(1),
                             cl::desc("LLVM optimisation level of the JIT"),
                             cl::cat(category));
  cl::opt<bool> printLowered(
      "print-lowered-ir",
      cl::desc("Print the module in the LLVM dialect before running it"),
      cl::cat(category));
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "run an ONNX model on the host reference\n");

  auto error = [&](const Twine &message) {
    errs() << argv[0] << ": error: " << message << "\n";
    return 1;
  };
  if (format != "npy" && format != "pb")
    return error("--format must be npy or pb, not '" + format + "'");

  // Read the inputs first: a bad input file should not cost a compile.
  std::vector<reference::NamedTensor> inputs;
  for (const std::string &spec : inputSpecs) {
    auto [name, file] = StringRef(spec).split('=');
    if (file.empty() && !StringRef(spec).contains('=')) {
      file = name;
      name = "";
    }
    if (file.empty())
      return error("--input " + spec + " names no file");
    std::string why;
    std::optional<tensorio::HostTensor> tensor =
        tensorio::readTensorFile(file.str(), &why);
    if (!tensor)
      return error("cannot read input '" + file + "': " + why);
    inputs.push_back({name.str(), std::move(*tensor)});
  }

  std::unique_ptr<mlir::MLIRContext> ctx = createContext();
  std::string why;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      loadModel(*ctx, modelPath, batchSize, why);
  if (!module)
    return error("cannot import '" + modelPath + "':\n" + why);

  reference::ReferenceOptions options;
  options.optLevel = optLevel;
  auto exe = reference::ReferenceExecutable::compile(*module, options);
  if (!exe)
    return error(toString(exe.takeError()));
  if (printLowered)
    (*exe)->getLoweredModule().print(outs());
  auto outputs = (*exe)->run(inputs);
  if (!outputs)
    return error(toString(outputs.takeError()));

  if (std::error_code ec = sys::fs::create_directories(outputDir))
    return error("cannot create '" + outputDir + "': " + ec.message());
  auto signatures = (*exe)->outputs();
  StringSet<> stems;
  for (size_t i = 0; i < outputs->size(); ++i) {
    // Two names that escape alike ("a/b", "a:b") must not share a file.
    std::string stem = outputFileStem(signatures[i].name, i);
    if (!stems.insert(stem).second)
      stem += "_" + std::to_string(i);
    SmallString<128> path(outputDir);
    sys::path::append(path, stem + "." + format.getValue());
    if (!tensorio::writeTensorFile(path.str().str(), (*outputs)[i], &why))
      return error("cannot write '" + path + "': " + why);
    outs() << "wrote " << path << " (" << describe((*outputs)[i]) << ")\n";
  }
  return 0;
}
