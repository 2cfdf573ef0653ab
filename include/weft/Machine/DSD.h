//===- DSD.h - Data structure descriptors -----------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A DSD describes a vector operand: where its elements come from or go to.
// DSDs are 48-bit values held in DSRs and stored in memory as 64-bit records;
// XDSDs (51 bits) extend 4D memory DSDs. The bit layouts are the tables in
// docs/architecture.md, "Data structure descriptors"; this file is their code.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_MACHINE_DSD_H
#define WEFT_MACHINE_DSD_H

#include "weft/Machine/Wavelet.h"

#include <cstdint>
#include <optional>
#include <string>

namespace weft::machine {

class Target;

/// DSD kinds, the value of bits [47:45].
enum class DsdKind : uint8_t {
  FabricIn = 0,
  FabricOut = 1,
  Mem1D = 2,
  Mem4D = 3,
  Fifo = 4,
};
constexpr unsigned kNumDsdKinds = 5;
const char *dsdKindName(DsdKind k);

/// Optional "activate color X" fields (enable bit + 6-bit task id).
struct Activation {
  bool enabled = false;
  uint8_t color = 0;
  bool operator==(const Activation &o) const {
    return enabled == o.enabled && (!enabled || color == o.color);
  }
};

/// One DSD. Which fields matter depends on `kind`; the encoder writes only
/// those, so decode(encode(d)) equals d on the fields of its kind.
struct Dsd {
  DsdKind kind = DsdKind::Mem1D;
  /// Element count (FabricIn, FabricOut, Mem1D) or capacity (Fifo).
  uint32_t length = 0;
  /// Word address of element 0 (Mem1D, Mem4D, Fifo).
  uint32_t base = 0;
  /// Signed element stride (Mem1D), 9 bits.
  int32_t stride = 1;
  /// Mem1D/Mem4D: add GPR4 (words) to the base when the instruction starts.
  bool indexed = false;
  /// Mem1D: the elements are stored as sliced words, a lane mask and the
  /// non-zero lanes packed (weft/Machine/Sliced.h; architecture §8.3).
  bool sliced = false;
  /// Mem4D: which XDSR holds the dimensions (0..5).
  uint8_t xdsr = 0;
  /// Fabric vectors: the color of the queue read (FabricIn) or of the
  /// wavelets sent (FabricOut), and how payloads hold elements.
  uint8_t color = 0;
  PayloadFormat format = PayloadFormat::Dense32;
  /// Fabric vectors: activate this task id when the vector completes.
  Activation onDone;
  /// FabricIn: a control wavelet ends the vector early (it is consumed).
  bool terminateOnControl = false;
  /// Fabric vectors: run on microthread `utid` instead of stalling the task.
  bool microthread = false;
  uint8_t utid = 0;
  /// FabricOut: send control wavelets; their index is `index6` or GPR4.
  bool control = false;
  uint8_t index6 = 0;
  bool indexFromGpr4 = false;
  /// FabricOut, sparse16 only: a *sparse send* (architecture §8.6). An
  /// element whose 16 bits are all zero is not sent; an element read from a
  /// sparse16 fabin of the same instruction keeps that wavelet's index.
  bool skipZeros = false;
  /// Fifo: activations on push and on pop.
  Activation onPush, onPop;

  static constexpr unsigned kBits = 48;
  uint64_t encode() const;
  /// Decodes 48 bits; rejects an unknown kind or bits set above bit 47.
  static std::optional<Dsd> decode(uint64_t bits, std::string *error = nullptr);
  /// Checks every field against its width and against `t` (memory size,
  /// colors); returns an empty string when the DSD is valid.
  std::string validate(const Target &t) const;
  bool operator==(const Dsd &o) const;
  std::string str() const;
};

/// Where stride values come from in an XDSD dimension.
enum class StrideSel : uint8_t { Reg0 = 0, Reg5 = 5, One = 6, Zero = 7 };

/// The extended descriptor of a 4D memory DSD: four dimension lengths and,
/// per dimension, a stride register (0..5) or the constants 1 (6) and 0 (7).
/// Element (i0, i1, i2, i3) is at base + sum(i_k * stride_k) elements.
struct Xdsd {
  uint16_t len[4] = {1, 1, 1, 1};
  uint8_t strideSel[4] = {6, 7, 7, 7};

  static constexpr unsigned kBits = 51;
  static constexpr unsigned kLen0Bits = 12, kLenBits = 8;
  uint64_t encode() const;
  static std::optional<Xdsd> decode(uint64_t bits,
                                    std::string *error = nullptr);
  std::string validate() const;
  uint64_t numElements() const {
    return uint64_t(len[0]) * len[1] * len[2] * len[3];
  }
  bool operator==(const Xdsd &o) const;
};

} // namespace weft::machine

#endif // WEFT_MACHINE_DSD_H
