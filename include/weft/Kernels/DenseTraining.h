//===- DenseTraining.h - A trained dense layer's PEs ------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Plain C++ (no MLIR). The memory map of a trained dense layer's PEs
// (docs/training.md, "Memory map additions") and where each weight and bias
// element lives: one definition the emitter writes the weights by and the
// host reads the trained weights back by.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_KERNELS_DENSETRAINING_H
#define WEFT_KERNELS_DENSETRAINING_H

#include "weft/Kernels/DenseMapping.h"

#include <cstdint>
#include <string>

namespace weft::conversion {

/// How a dense layer trains (the program's #fabric.training and the
/// kernel's marks).
struct DenseTraining {
  bool mbgd = false; ///< else SGD (or CPGD, when `lag` > 0)
  float lr = 0.01f;
  int64_t batch = 1;
  /// The layer sends dL/dx back to the kernel before it.
  bool inputGradient = false;
  /// Reverse checkpoints (docs/training.md): the layer keeps its input x
  /// until its chain step (`save`), or lets its input gradient dx overwrite
  /// it and takes x again from the layer before in its backward pass
  /// (`recompute`; only a layer that sends dL/dx).
  bool storesInput = true;
  /// The layer after it recomputes: this one runs its forward again, from
  /// its own x, in its backward pass (after its delta, before its updates)
  /// and sends y again.
  bool recomputesOutput = false;
  /// CPGD (docs/training.md, "CPGD"): the samples the backward pass trails
  /// the forward pass by (0: SGD or MBGD, one sample at a time). The layer
  /// keeps the inputs (and, on its last column, the outputs) of the `lag`
  /// + 1 samples in flight in a ring, and runs `samples` + `lag` rounds.
  /// A pipelined MBGD (`mbgd` and `lag` > 0) runs the rounds once per
  /// mini-batch, draining the pipeline before each update.
  int64_t lag = 0;
  int64_t samples = 0;
  /// The rounds' samples and how many times they run: the run's samples
  /// once (CPGD), or a mini-batch per step (pipelined MBGD).
  int64_t rounds() const { return mbgd ? batch : samples; }
  int64_t steps() const { return mbgd ? samples / batch : 1; }
};

/// Word addresses in one PE of a trained dense layer; -1 for a buffer the
/// PE does not have. Records (DSDs, XDSDs, the stride word) fill
/// [kRecords, kData).
struct TrainedDenseMap {
  static constexpr int64_t kRecords = 1024, kData = 1280;
  int64_t acc = -1, bias = -1, w = -1, y = -1, x = -1, delta = -1, dlr = -1,
          dx = -1, mask = -1, g = -1, gb = -1;
  /// CPGD's ring: `slots` slots of `slotWords` words from x, each holding
  /// a sample's x, (last column) its y, its dL/dz and (a layer sending its
  /// input gradient) its dL/dx, at the offsets y - x, delta - x and dx - x;
  /// x, y, delta and dx are slot 0's. One slot (0 words apart) otherwise.
  int64_t slots = 1, slotWords = 0;
  /// The first word after the data.
  int64_t end = kData;
};

/// The map of PE (c, r): input chunk of `lk` elements, neuron chunk of
/// `lm`; `last` is column S - 1 (output, bias, activation).
TrainedDenseMap trainedDenseMap(int64_t lk, int64_t lm, bool last,
                                bool hasBias, bool relu,
                                const DenseTraining &t);

/// Bytes of memory the busiest PE of a K -> M layer trained under `m`
/// needs (code and records included).
int64_t trainedDenseBytes(int64_t K, int64_t M, bool hasBias, bool relu,
                          const DenseMapping &m, const DenseTraining &t);

/// Bytes the busiest PE adds to hold x until the chain step: the
/// difference between `storesInput` and not (0 for a layer that cannot drop
/// its input, which has no input gradient).
int64_t trainedDenseInputBytes(int64_t K, int64_t M, bool hasBias, bool relu,
                               const DenseMapping &m, const DenseTraining &t);

/// CE cycles per sample, summed over the layer's PEs, of running its forward
/// again for the layer after it (`recomputesOutput`): the instructions the
/// emitter adds (docs/training.md, "Reverse checkpoints"), at
/// `machine::instructionCycles`.
int64_t trainedDenseForwardCycles(int64_t K, int64_t M, bool hasBias,
                                  bool relu, const DenseMapping &m);
/// CE cycles per sample, summed over the layer's PEs, of taking its input
/// again when it does not store it: the diagonals' copies and every PE's
/// receive.
int64_t trainedDenseReceiveCycles(int64_t K, const DenseMapping &m);

/// CE cycles per sample of the busiest PE of a K -> M layer trained under
/// `m` and `t` (EmitTrainedDense.cpp's loop, counted with the ISA's cycle
/// table): the receive of x, the forward, the delta, the input gradient and
/// its reduction, the chain step and update (and under MBGD the step's
/// update, spread over its samples), a record load a cycle. Under CPGD or a
/// pipelined MBGD this is a round, the kernel's period when it is the
/// slowest; the partitioner balances a training pipeline with it.
int64_t predictTrainedDenseCycles(int64_t K, int64_t M, bool hasBias,
                                  bool relu, const DenseMapping &m,
                                  const DenseTraining &t);
/// The same count for PE (c, r) of the rectangle.
int64_t trainedDensePeCycles(int64_t K, int64_t M, bool hasBias, bool relu,
                             const DenseMapping &m, const DenseTraining &t,
                             int64_t c, int64_t r);

/// Bytes of memory a PE of a trained column kernel (Relu, Tanh: `loss`
/// false; the loss: true) with chunks of `L` elements needs
/// (lib/Conversion/FabricToWavelet/EmitTrainedColumn.cpp's map); under
/// CPGD a Relu or Tanh keeps the y and gradient of `lag` + 1 samples, and
/// the loss (`lag` 1) two gradients.
int64_t trainedColumnBytes(int64_t L, bool loss, int64_t lag = 0);
/// Where a trained column kernel's records and data start (words).
constexpr int64_t kTrainedColumnRecords = 1024, kTrainedColumnData = 1152;

/// Where an element lives: PE (x, y) and word address (fp32: two words,
/// low half first).
struct WordPlace {
  int64_t x = 0, y = 0, word = 0;
};

/// W[k, n] (input k, neuron n) of a K -> M layer trained under `m`.
WordPlace trainedWeightPlace(int64_t K, int64_t M, bool hasBias, bool relu,
                             const DenseMapping &m, const DenseTraining &t,
                             int64_t k, int64_t n);
/// b[n], on the last column.
WordPlace trainedBiasPlace(int64_t K, int64_t M, bool relu,
                           const DenseMapping &m, const DenseTraining &t,
                           int64_t n);

/// Why `m` cannot train a K -> M layer (the matrix instructions' lengths
/// of docs/training.md: the larger of the chunks at most 4095, the smaller
/// at most 255; merged lanes and bands are not trained), or "".
std::string trainedDenseLimits(int64_t K, int64_t M, const DenseMapping &m);

} // namespace weft::conversion

#endif // WEFT_KERNELS_DENSETRAINING_H
