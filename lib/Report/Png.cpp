//===- Png.cpp - Heatmaps as PNG images -----------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Report/Png.h"

#include "llvm/Support/CRC.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace weft;
using namespace weft::report;

const std::vector<Rgb> &weft::report::colorMapAnchors() {
  // Viridis at ten evenly spaced points.
  static const std::vector<Rgb> anchors = {
      {68, 1, 84},    {72, 40, 120},  {62, 73, 137},  {49, 104, 142},
      {38, 130, 142}, {31, 158, 137}, {53, 183, 121}, {110, 206, 88},
      {181, 222, 43}, {253, 231, 37}};
  return anchors;
}

Rgb weft::report::colorMap(double t) {
  const std::vector<Rgb> &a = colorMapAnchors();
  if (!(t > 0))
    return a.front();
  if (t >= 1)
    return a.back();
  double pos = t * double(a.size() - 1);
  size_t i = size_t(pos);
  double f = pos - double(i);
  auto mix = [&](uint8_t lo, uint8_t hi) {
    return uint8_t(std::lround(double(lo) + f * (double(hi) - double(lo))));
  };
  return {mix(a[i].r, a[i + 1].r), mix(a[i].g, a[i + 1].g),
          mix(a[i].b, a[i + 1].b)};
}

//===----------------------------------------------------------------------===//
// The PNG file
//===----------------------------------------------------------------------===//

static void put32(std::vector<uint8_t> &out, uint32_t v) {
  out.push_back(uint8_t(v >> 24));
  out.push_back(uint8_t(v >> 16));
  out.push_back(uint8_t(v >> 8));
  out.push_back(uint8_t(v));
}

/// Appends a chunk: length, type, data and the CRC-32 of type and data.
static void putChunk(std::vector<uint8_t> &out, const char type[4],
                     const std::vector<uint8_t> &data) {
  put32(out, uint32_t(data.size()));
  size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  put32(out, llvm::crc32(llvm::ArrayRef<uint8_t>(out.data() + start,
                                                 out.size() - start)));
}

/// A zlib stream (RFC 1950) of stored deflate blocks (RFC 1951, BTYPE 00):
/// what a PNG holds when there is no compressor.
static std::vector<uint8_t> storedZlib(const std::vector<uint8_t> &data) {
  std::vector<uint8_t> out = {0x78, 0x01};
  size_t pos = 0;
  do {
    size_t n = std::min<size_t>(65535, data.size() - pos);
    bool last = pos + n == data.size();
    out.push_back(last ? 1 : 0);
    out.push_back(uint8_t(n));
    out.push_back(uint8_t(n >> 8));
    out.push_back(uint8_t(~n));
    out.push_back(uint8_t(~n >> 8));
    out.insert(out.end(), data.begin() + pos, data.begin() + pos + n);
    pos += n;
  } while (pos < data.size());
  // Adler-32 of the uncompressed data.
  uint32_t a = 1, b = 0;
  for (uint8_t byte : data) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  put32(out, (b << 16) | a);
  return out;
}

std::vector<uint8_t> weft::report::encodePng(const Image &image,
                                             bool compress) {
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<uint8_t> header;
  put32(header, image.width);
  put32(header, image.height);
  // 8 bits per sample, truecolor, deflate, adaptive filtering, no interlace.
  header.insert(header.end(), {8, 2, 0, 0, 0});
  putChunk(png, "IHDR", header);
  // Every scanline with filter type 0 (none) in front.
  size_t row = size_t(image.width) * 3;
  std::vector<uint8_t> raw;
  raw.reserve((row + 1) * image.height);
  for (uint32_t y = 0; y < image.height; ++y) {
    raw.push_back(0);
    raw.insert(raw.end(), image.rgb.begin() + y * row,
               image.rgb.begin() + (y + 1) * row);
  }
  std::vector<uint8_t> idat;
  if (compress && llvm::compression::zlib::isAvailable()) {
    llvm::SmallVector<uint8_t, 0> z;
    llvm::compression::zlib::compress(
        raw, z, llvm::compression::zlib::BestSizeCompression);
    idat.assign(z.begin(), z.end());
  } else {
    idat = storedZlib(raw);
  }
  putChunk(png, "IDAT", idat);
  putChunk(png, "IEND", {});
  return png;
}

//===----------------------------------------------------------------------===//
// Drawing a heatmap
//===----------------------------------------------------------------------===//

Scale weft::report::imageScale(uint32_t width, uint32_t height) {
  constexpr uint32_t kTarget = 512, kMaxPixels = 32, kMaxSide = 1024;
  uint32_t side = std::max(width, height);
  Scale s;
  if (side > kMaxSide) {
    s.pesPerPixel = (side + kMaxSide - 1) / kMaxSide;
    return s;
  }
  s.pixelsPerPE =
      std::clamp<uint32_t>(kTarget / std::max(side, 1u), 1, kMaxPixels);
  return s;
}

Image weft::report::renderHeatmap(const Grid &grid, const Grid &groups,
                                  bool categorical) {
  Scale scale = imageScale(grid.width, grid.height);
  uint32_t step = scale.pesPerPixel;
  // The blocks of PEs one pixel (or square) shows, and their values: the
  // largest of the used PEs', or none.
  uint32_t bw = (grid.width + step - 1) / step;
  uint32_t bh = (grid.height + step - 1) / step;
  std::vector<int64_t> block(size_t(bw) * bh, 0);
  std::vector<uint8_t> used(size_t(bw) * bh, 0);
  for (uint32_t y = 0; y < grid.height; ++y)
    for (uint32_t x = 0; x < grid.width; ++x) {
      if (groups.at(x, y) < 0)
        continue;
      size_t b = size_t(y / step) * bw + x / step;
      block[b] = used[b] ? std::max(block[b], grid.at(x, y)) : grid.at(x, y);
      used[b] = 1;
    }
  // The range the color map spans: categorical kinds from 0, others from
  // the smallest nonzero value.
  int64_t lo = 0, hi = 0;
  bool any = false;
  for (size_t b = 0; b < block.size(); ++b) {
    if (!used[b] || (categorical ? block[b] < 0 : block[b] == 0))
      continue;
    lo = any ? std::min(lo, block[b]) : block[b];
    hi = any ? std::max(hi, block[b]) : block[b];
    any = true;
  }
  if (categorical)
    lo = 0;
  uint32_t px = scale.pixelsPerPE;
  Image image;
  image.width = bw * px;
  image.height = bh * px;
  image.rgb.assign(size_t(image.width) * image.height * 3, 0);
  for (uint32_t by = 0; by < bh; ++by)
    for (uint32_t bx = 0; bx < bw; ++bx) {
      size_t b = size_t(by) * bw + bx;
      Rgb c = kUnusedColor;
      if (used[b] && (categorical ? block[b] >= 0 : block[b] != 0))
        c = colorMap(hi > lo ? double(block[b] - lo) / double(hi - lo) : 1.0);
      else if (used[b])
        c = kZeroColor;
      for (uint32_t y = by * px; y < (by + 1) * px; ++y)
        for (uint32_t x = bx * px; x < (bx + 1) * px; ++x) {
          uint8_t *p = &image.rgb[(size_t(y) * image.width + x) * 3];
          p[0] = c.r;
          p[1] = c.g;
          p[2] = c.b;
        }
    }
  return image;
}

bool weft::report::checkOutputDirectory(const std::string &dir,
                                        std::string *error) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    *error = "cannot create the directory '" + dir + "': " + ec.message();
    return false;
  }
  if (!llvm::sys::fs::is_directory(dir)) {
    *error = "'" + dir + "' is not a directory";
    return false;
  }
  if (llvm::sys::fs::access(dir, llvm::sys::fs::AccessMode::Write)) {
    *error = "the directory '" + dir + "' is not writable";
    return false;
  }
  return true;
}

bool weft::report::writeHeatmapPngs(const std::string &dir,
                                    const binary::Program &program,
                                    const std::vector<sim::PeStats> *pes,
                                    std::string *error) {
  if (!checkOutputDirectory(dir, error))
    return false;
  Grid groups = groupIndex(program);
  for (const HeatmapKind &kind : heatmapKinds()) {
    if (kind.needsRun && !pes)
      continue;
    Grid grid = computeHeatmap(kind, program, pes);
    std::vector<uint8_t> png =
        encodePng(renderHeatmap(grid, groups, kind.categorical));
    std::string path = dir + "/" + kind.name + ".png";
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (!ec) {
      os.write(reinterpret_cast<const char *>(png.data()), png.size());
      os.close();
      if (os.has_error()) {
        ec = os.error();
        os.clear_error();
      }
    }
    if (ec) {
      *error = "cannot write '" + path + "': " + ec.message();
      return false;
    }
  }
  return true;
}
