//===- weftc.cpp - The weft compiler driver ---------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// `weftc <command> ...`: one executable, one subcommand per job. Each command
// lives in its own file with its own options (declared inside the command's
// entry function, so `weftc <command> --help` lists only those).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace {
struct Command {
  const char *name;
  const char *summary;
  int (*main)(int argc, char **argv);
};
} // namespace

static const Command commands[] = {
    {"compile", "compile an ONNX model to a fabric binary (.wfb)",
     weftc::compileMain},
    {"run", "compile an ONNX model and run it on the simulated fabric",
     weftc::runMain},
    {"train", "train an ONNX model's initializers on the simulated fabric",
     weftc::trainMain},
    {"reference", "run an ONNX model on the host reference",
     weftc::referenceMain},
    {"conformance", "run ONNX backend tests and compare with their outputs",
     weftc::conformanceMain},
};

static void printUsage(llvm::raw_ostream &os) {
  os << "OVERVIEW: weft compiler driver\n\n"
        "USAGE: weftc <command> [options]\n\nCOMMANDS:\n";
  for (const Command &c : commands)
    os << "  " << llvm::left_justify(c.name, 14) << c.summary << "\n";
  os << "\nRun `weftc <command> --help` for the options of a command.\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc < 2) {
    printUsage(llvm::errs());
    return 1;
  }
  llvm::StringRef name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    printUsage(llvm::outs());
    return 0;
  }
  for (const Command &c : commands) {
    if (name != c.name)
      continue;
    // The command parses the rest; argv[0] becomes "weftc <command>" so its
    // --help and error messages name it.
    std::string program = std::string(argv[0]) + " " + c.name;
    argv[1] = program.data();
    return c.main(argc - 1, argv + 1);
  }
  llvm::errs() << "weftc: unknown command '" << name << "'\n\n";
  printUsage(llvm::errs());
  return 1;
}
