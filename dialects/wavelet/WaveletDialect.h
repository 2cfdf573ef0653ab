//===- WaveletDialect.h - The wavelet dialect -------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_DIALECTS_WAVELET_WAVELETDIALECT_H
#define WEFT_DIALECTS_WAVELET_WAVELETDIALECT_H

#include "common/WeftDialect.h"
#include "mlir/IR/Dialect.h"

#include "wavelet/WaveletDialect.h.inc"

#endif // WEFT_DIALECTS_WAVELET_WAVELETDIALECT_H
