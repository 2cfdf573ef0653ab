//===- Wavelet.cpp - Wavelet encodings ------------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Machine/Wavelet.h"

#include <cstdio>

using namespace weft::machine;

const char *weft::machine::payloadFormatName(PayloadFormat f) {
  switch (f) {
  case PayloadFormat::Dense32:
    return "dense32";
  case PayloadFormat::Dense16x2:
    return "dense16x2";
  case PayloadFormat::Sparse16:
    return "sparse16";
  }
  return "?";
}

unsigned weft::machine::elementsPerWavelet(PayloadFormat f) {
  return f == PayloadFormat::Dense16x2 ? 2 : 1;
}

std::optional<Wavelet> Wavelet::decode(uint64_t bits) {
  if (bits >> kBits)
    return std::nullopt;
  Wavelet w;
  w.payload = uint32_t(bits);
  w.control = (bits >> kControlBit) & 1;
  w.color = uint8_t((bits >> kColorShift) & 0x1f);
  return w;
}

std::string Wavelet::str() const {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s c%u 0x%08x", control ? "ctrl" : "data",
                unsigned(color), unsigned(payload));
  return buf;
}
