//===- Png.h - Heatmaps as PNG images ---------------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A small PNG writer (8-bit RGB, no interlace; the image data one zlib
// stream) and the drawing of a heatmap (include/weft/Report/Heatmap.h) as an
// image: every PE a square of a few pixels on small fabrics, one pixel on
// the machine's 750 x 994, and blocks of PEs (their largest value) beyond
// 1024 PEs a side, so that no image exceeds 1024 x 1024 pixels. Values are
// drawn on a perceptual color map (viridis) from the smallest nonzero value
// to the largest; zero and PEs no group covers have colors of their own
// (docs/report.md).
//
// The output bytes depend only on the inputs. Uses LLVM's CRC-32 and zlib.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_REPORT_PNG_H
#define WEFT_REPORT_PNG_H

#include "weft/Report/Heatmap.h"

#include <cstdint>
#include <string>
#include <vector>

namespace weft::report {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb &o) const {
    return r == o.r && g == o.g && b == o.b;
  }
};

/// The color map's anchors, evenly spaced from 0 to 1 (viridis: dark blue
/// through green to yellow, lightness rising steadily).
const std::vector<Rgb> &colorMapAnchors();
/// The color of `t` in [0, 1] (clamped), interpolated between the anchors.
Rgb colorMap(double t);
/// A PE with the value 0 (light grey) and a PE no group covers (white).
constexpr Rgb kZeroColor{200, 200, 200};
constexpr Rgb kUnusedColor{255, 255, 255};

/// An RGB image, row-major, 3 bytes a pixel.
struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;
};

/// The PNG file of `image`. With `compress` false (or when LLVM was built
/// without zlib) the zlib stream holds stored (uncompressed) deflate blocks.
std::vector<uint8_t> encodePng(const Image &image, bool compress = true);

/// How many pixels a PE's square has on a side for a `width` x `height`
/// fabric (at least 1; 0 when PEs are drawn in blocks), and the side of those
/// blocks in PEs (1 unless the fabric exceeds 1024 PEs a side).
struct Scale {
  uint32_t pixelsPerPE = 1, pesPerPixel = 1;
};
Scale imageScale(uint32_t width, uint32_t height);

/// `grid` drawn as an image (see the file comment). `groups` is
/// groupIndex() of the program: PEs it marks -1 are drawn unused. A
/// categorical kind gets a distinct color per value from 0 up, none of them
/// zero's, and zero's color for negative values (a PE of no kernel).
Image renderHeatmap(const Grid &grid, const Grid &groups, bool categorical);

/// Writes DIR/<kind>.png for every kind (only those that need no run when
/// `pes` is null). Creates `dir` when missing. Returns false with `error`
/// set to a sentence naming the file when one cannot be written.
bool writeHeatmapPngs(const std::string &dir, const binary::Program &program,
                      const std::vector<sim::PeStats> *pes, std::string *error);

/// Whether `dir` is (or can be made) a writable directory; `error` says why
/// not. The tools check this before a long run.
bool checkOutputDirectory(const std::string &dir, std::string *error);

} // namespace weft::report

#endif // WEFT_REPORT_PNG_H
