//===- Load.h - Loading a program's images (internal) -----------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The parts of loading a program that depend on its images and the machine
// alone, not on the engine's state: decoding each image's code once, laying
// out the queues a wavelet can enter, and what the PEs' memories hold.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SIM_LOAD_H
#define WEFT_LIB_SIM_LOAD_H

#include "Step.h"

#include "weft/Binary/Binary.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace weft::sim::detail {

/// Decodes each image's code once; PEs that overwrite their code fall back
/// to decoding from memory.
std::vector<DecodeCache> decodeImages(const binary::Program &prog,
                                      const machine::Target &target);

/// Where a PE running an image keeps its queues: storage only for the
/// queues a wavelet can enter.
struct QueueLayout {
  /// The queue's slot in the PE's block (Pe::rqSlot, Pe::cqSlot).
  uint8_t rqSlot[5 * 32], cqSlot[32];
  /// Words of router queues, and of all queues.
  size_t rqWords = 0, words = 0;
};

/// The queue layout of each image.
std::vector<QueueLayout> planQueues(const binary::Program &prog,
                                    const FabricConfig &cfg);

/// The PEs the program's groups cover.
size_t countPes(const binary::Program &prog);

/// Empty when the fixed state of `count` PEs fits in this machine's memory
/// (an allocation that the OS would overcommit and then fail to back would
/// kill the process); otherwise why not.
std::string checkStateFits(size_t count);

/// Memory words the binary initialises, over all PEs.
uint64_t initialisedWords(const binary::Program &prog);

} // namespace weft::sim::detail

#endif // WEFT_LIB_SIM_LOAD_H
