//===- Wavelet.h - The 38-bit wavelet and its encodings ---------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A wavelet is 38 bits on the link, held in the low bits of a uint64_t:
//
//   bits [31:0]   payload
//   bit  32       control bit
//   bits [37:33]  color (5 bits)
//
// The payload has three interpretations, chosen by software per color:
//   dense32   [31:0] one 32-bit element (fp32)
//   dense16x2 [15:0] first 16-bit element, [31:16] second 16-bit element
//   sparse16  [15:0] 16-bit data, [31:16] 16-bit index
// A control wavelet always reads its index from [31:16]; index[5:0] selects
// the control entry point of the receiving PE.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_MACHINE_WAVELET_H
#define WEFT_MACHINE_WAVELET_H

#include <cstdint>
#include <optional>
#include <string>

namespace weft::machine {

/// How a wavelet's 32-bit payload is read.
enum class PayloadFormat : uint8_t { Dense32 = 0, Dense16x2 = 1, Sparse16 = 2 };
constexpr unsigned kNumPayloadFormats = 3;
const char *payloadFormatName(PayloadFormat f);
/// 16-bit or 32-bit elements carried per wavelet: 1, 2 or 1.
unsigned elementsPerWavelet(PayloadFormat f);

struct Wavelet {
  static constexpr unsigned kPayloadBits = 32;
  static constexpr unsigned kControlBit = 32;
  static constexpr unsigned kColorShift = 33;
  static constexpr unsigned kBits = 38;

  uint8_t color = 0;
  bool control = false;
  uint32_t payload = 0;

  uint64_t encode() const {
    return uint64_t(payload) | (uint64_t(control) << kControlBit) |
           (uint64_t(color & 0x1f) << kColorShift);
  }
  /// Rejects bits above bit 37.
  static std::optional<Wavelet> decode(uint64_t bits);

  static Wavelet dense32(unsigned color, uint32_t bits, bool control = false) {
    return Wavelet{uint8_t(color), control, bits};
  }
  static Wavelet dense16x2(unsigned color, uint16_t first, uint16_t second,
                           bool control = false) {
    return Wavelet{uint8_t(color), control,
                   uint32_t(first) | (uint32_t(second) << 16)};
  }
  static Wavelet sparse16(unsigned color, uint16_t data, uint16_t index,
                          bool control = false) {
    return dense16x2(color, data, index, control);
  }
  /// A control wavelet addressing control entry `entry` (index[5:0]).
  static Wavelet controlWavelet(unsigned color, uint16_t index,
                                uint16_t data = 0) {
    return sparse16(color, data, index, /*control=*/true);
  }

  uint16_t low() const { return uint16_t(payload); }
  uint16_t high() const { return uint16_t(payload >> 16); }
  uint16_t index() const { return high(); }
  unsigned controlEntry() const { return index() & 0x3f; }

  bool operator==(const Wavelet &o) const {
    return color == o.color && control == o.control && payload == o.payload;
  }
  std::string str() const;
};

} // namespace weft::machine

#endif // WEFT_MACHINE_WAVELET_H
