//===- ReportTest.cpp - Heatmaps, their PNG images and the report page ----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Report/Heatmap.h"
#include "weft/Report/Html.h"
#include "weft/Report/Png.h"

#include "llvm/Support/CRC.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

#include <set>

using namespace weft;
using namespace weft::report;
namespace wm = weft::machine;

namespace {

/// A 6x3 fabric: layer "a" on a 2x2 group at (0, 0) and a 1x1 group at
/// (4, 0) (two copies), layer "b" on a 1x3 group at (2, 0) beside the first,
/// a 1x1 group of no layer at (3, 2), and nothing in the rest.
binary::Program sample() {
  binary::Program p;
  p.target.width = 6;
  p.target.height = 3;
  p.name = "sample";
  p.layers = {"a", "b</script>"};
  binary::CodeImage left, right;
  left.routes = {{1, wm::dirBit(wm::Dir::West), wm::dirBit(wm::Dir::East), {}},
                 {3,
                  wm::dirBit(wm::Dir::Ramp),
                  wm::dirBit(wm::Dir::East) | wm::dirBit(wm::Dir::South),
                  {}}};
  left.segments = {{0, {1, 2, 3, 4}, "", ""}};
  right.routes = {
      {5, wm::dirBit(wm::Dir::West), wm::dirBit(wm::Dir::Ramp), {}},
      {5, wm::dirBit(wm::Dir::North), wm::dirBit(wm::Dir::Ramp), {}}};
  right.segments = {{0, {1, 2}, "", ""}};
  p.images = {left, right};
  binary::Group a0{"a0", 0, 0, 0, 2, 2, 0, false, {}, {}};
  a0.perPe = {{64, 3, std::vector<uint16_t>(12, 0), "w", ""}};
  binary::Group b{"b", 1, 2, 0, 1, 3, 1, false, {}, {}};
  binary::Group a1{"a1", 0, 4, 0, 1, 1, 0, false, {}, {}};
  binary::Group relay{"relay", 1, 3, 2, 1, 1, -1, true, {}, {}};
  p.groups = {a0, b, a1, relay};
  return p;
}

/// Statistics for some of the sample's PEs (the others did nothing).
std::vector<sim::PeStats> sampleStats() {
  std::vector<sim::PeStats> pes;
  auto pe = [&](uint32_t x, uint32_t y, uint64_t busy) {
    sim::PeStats s;
    s.x = x;
    s.y = y;
    s.busyCycles = busy;
    s.hops[0] = 1;
    s.hops[1] = 10 * busy;
    s.hops[4] = 2;
    pes.push_back(s);
  };
  pe(0, 0, 5);
  pe(1, 1, 20);
  pe(2, 2, 7);
  // Outside the grid: ignored.
  pe(9, 9, 1000);
  return pes;
}

TEST(Heatmap, KindsAreUniqueAndFound) {
  std::set<std::string> names;
  for (const HeatmapKind &k : heatmapKinds()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_EQ(findHeatmapKind(k.name), &k);
  }
  for (const char *n :
       {"busy", "memory", "hops", "hops_north", "hops_east", "hops_south",
        "hops_west", "hops_ramp", "colors", "layer"})
    EXPECT_TRUE(names.count(n)) << n;
  EXPECT_EQ(findHeatmapKind("heat"), nullptr);
  EXPECT_EQ(heatmapKindNames().substr(0, 14), "busy, ce_busy,");
}

TEST(Heatmap, RunFiguresPerPE) {
  binary::Program p = sample();
  std::vector<sim::PeStats> pes = sampleStats();
  Grid busy = computeHeatmap(*findHeatmapKind("busy"), p, &pes);
  ASSERT_EQ(busy.width, 6u);
  ASSERT_EQ(busy.height, 3u);
  EXPECT_EQ(busy.at(0, 0), 5);
  EXPECT_EQ(busy.at(1, 1), 20);
  EXPECT_EQ(busy.at(2, 2), 7);
  EXPECT_EQ(busy.at(1, 0), 0); // covered, not listed: did nothing
  EXPECT_EQ(busy.at(5, 2), 0); // no group
  Grid east = computeHeatmap(*findHeatmapKind("hops_east"), p, &pes);
  Grid north = computeHeatmap(*findHeatmapKind("hops_north"), p, &pes);
  Grid ramp = computeHeatmap(*findHeatmapKind("hops_ramp"), p, &pes);
  Grid hops = computeHeatmap(*findHeatmapKind("hops"), p, &pes);
  EXPECT_EQ(east.at(1, 1), 200);
  EXPECT_EQ(north.at(1, 1), 1);
  EXPECT_EQ(ramp.at(1, 1), 2);
  EXPECT_EQ(hops.at(1, 1), 203);
  for (size_t i = 0; i < hops.values.size(); ++i)
    EXPECT_EQ(hops.values[i],
              east.values[i] + north.values[i] + ramp.values[i]);
}

TEST(Heatmap, BinaryFiguresPerPE) {
  binary::Program p = sample();
  Grid memory = computeHeatmap(*findHeatmapKind("memory"), p, nullptr);
  EXPECT_EQ(memory.at(1, 1), 2 * (4 + 3)); // image words + per-PE words
  EXPECT_EQ(memory.at(2, 1), 2 * 2);
  EXPECT_EQ(memory.at(4, 0), 2 * 4);
  EXPECT_EQ(memory.at(5, 0), 0);
  Grid colors = computeHeatmap(*findHeatmapKind("colors"), p, nullptr);
  EXPECT_EQ(colors.at(0, 0), 2);
  EXPECT_EQ(colors.at(2, 0), 1); // color 5 twice
  Grid layer = computeHeatmap(*findHeatmapKind("layer"), p, nullptr);
  EXPECT_EQ(layer.at(1, 0), 0);
  EXPECT_EQ(layer.at(2, 2), 1);
  EXPECT_EQ(layer.at(3, 0), -1);
  Grid groups = groupIndex(p);
  EXPECT_EQ(groups.at(1, 1), 0);
  EXPECT_EQ(groups.at(2, 1), 1);
  EXPECT_EQ(groups.at(4, 0), 2);
  EXPECT_EQ(groups.at(0, 2), -1);
  EXPECT_EQ(routedColors(p.images[1]), std::vector<uint8_t>{5});
  EXPECT_EQ(describeRoute(p.images[0].routes[1]), "3: ramp -> east, south");
}

TEST(Heatmap, KernelRectsSplitCopies) {
  std::vector<KernelRect> rects = kernelRects(sample());
  ASSERT_EQ(rects.size(), 3u);
  auto same = [](const KernelRect &r, int32_t l, uint32_t x, uint32_t y,
                 uint32_t w, uint32_t h) {
    return r.layer == l && r.x == x && r.y == y && r.width == w &&
           r.height == h;
  };
  EXPECT_TRUE(same(rects[0], 0, 0, 0, 2, 2));
  EXPECT_TRUE(same(rects[1], 0, 4, 0, 1, 1));
  EXPECT_TRUE(same(rects[2], 1, 2, 0, 1, 3));
}

/// The chunks of a PNG file, each checked against its CRC.
struct Chunk {
  std::string type;
  std::vector<uint8_t> data;
};
uint32_t be32(const uint8_t *p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 |
         p[3];
}
std::vector<Chunk> readChunks(const std::vector<uint8_t> &png) {
  static const uint8_t signature[] = {0x89, 'P',  'N',  'G',
                                      '\r', '\n', 0x1a, '\n'};
  std::vector<Chunk> chunks;
  EXPECT_GE(png.size(), 8u);
  EXPECT_TRUE(std::equal(signature, signature + 8, png.begin()));
  size_t pos = 8;
  while (pos + 12 <= png.size()) {
    uint32_t length = be32(&png[pos]);
    EXPECT_LE(pos + 12 + length, png.size());
    if (pos + 12 + length > png.size())
      break;
    Chunk c;
    c.type.assign(png.begin() + pos + 4, png.begin() + pos + 8);
    c.data.assign(png.begin() + pos + 8, png.begin() + pos + 8 + length);
    uint32_t crc = be32(&png[pos + 8 + length]);
    EXPECT_EQ(crc,
              llvm::crc32(llvm::ArrayRef<uint8_t>(&png[pos + 4], 4 + length)))
        << c.type;
    chunks.push_back(std::move(c));
    pos += 12 + length;
  }
  EXPECT_EQ(pos, png.size());
  return chunks;
}

/// Decodes an 8-bit RGB PNG with filter 0 rows (what encodePng writes).
Image decode(const std::vector<uint8_t> &png) {
  std::vector<Chunk> chunks = readChunks(png);
  Image image;
  EXPECT_GE(chunks.size(), 3u);
  if (chunks.size() < 3)
    return image;
  EXPECT_EQ(chunks.front().type, "IHDR");
  EXPECT_EQ(chunks.back().type, "IEND");
  EXPECT_TRUE(chunks.back().data.empty());
  const std::vector<uint8_t> &h = chunks.front().data;
  EXPECT_EQ(h.size(), 13u);
  image.width = be32(&h[0]);
  image.height = be32(&h[4]);
  EXPECT_EQ(std::vector<uint8_t>(h.begin() + 8, h.end()),
            (std::vector<uint8_t>{8, 2, 0, 0, 0}));
  std::vector<uint8_t> z;
  for (size_t i = 1; i + 1 < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].type, "IDAT");
    z.insert(z.end(), chunks[i].data.begin(), chunks[i].data.end());
  }
  size_t row = size_t(image.width) * 3;
  llvm::SmallVector<uint8_t, 0> raw;
  llvm::Error e =
      llvm::compression::zlib::decompress(z, raw, (row + 1) * image.height);
  EXPECT_FALSE(bool(e)) << llvm::toString(std::move(e));
  EXPECT_EQ(raw.size(), (row + 1) * image.height);
  if (raw.size() != (row + 1) * image.height)
    return image;
  for (uint32_t y = 0; y < image.height; ++y) {
    EXPECT_EQ(raw[y * (row + 1)], 0) << "row " << y << " filter";
    image.rgb.insert(image.rgb.end(), raw.begin() + y * (row + 1) + 1,
                     raw.begin() + (y + 1) * (row + 1));
  }
  return image;
}

Rgb pixel(const Image &image, uint32_t x, uint32_t y) {
  const uint8_t *p = &image.rgb[(size_t(y) * image.width + x) * 3];
  return {p[0], p[1], p[2]};
}

TEST(Png, RoundTripsCompressedAndStored) {
  ASSERT_TRUE(llvm::compression::zlib::isAvailable());
  Image image;
  image.width = 3;
  image.height = 2;
  for (uint8_t i = 0; i < 18; ++i)
    image.rgb.push_back(uint8_t(i * 13));
  for (bool compress : {true, false}) {
    std::vector<uint8_t> png = encodePng(image, compress);
    Image back = decode(png);
    EXPECT_EQ(back.width, 3u);
    EXPECT_EQ(back.height, 2u);
    EXPECT_EQ(back.rgb, image.rgb) << (compress ? "zlib" : "stored");
    EXPECT_EQ(encodePng(image, compress), png) << "not deterministic";
  }
  // Stored blocks split at 65535 bytes: a row of 30000 pixels is 90001.
  Image wide;
  wide.width = 30000;
  wide.height = 2;
  wide.rgb.resize(size_t(30000) * 2 * 3);
  for (size_t i = 0; i < wide.rgb.size(); ++i)
    wide.rgb[i] = uint8_t(i * 7 + i / 251);
  EXPECT_EQ(decode(encodePng(wide, false)).rgb, wide.rgb);
}

TEST(Png, HeatmapColorsAndScale) {
  binary::Program p = sample();
  std::vector<sim::PeStats> pes = sampleStats();
  Grid busy = computeHeatmap(*findHeatmapKind("busy"), p, &pes);
  Image image = renderHeatmap(busy, groupIndex(p), false);
  Scale s = imageScale(6, 3);
  EXPECT_EQ(s.pixelsPerPE, 32u); // 512 / 6 = 85, at most 32
  EXPECT_EQ(s.pesPerPixel, 1u);
  Image back = decode(encodePng(image));
  ASSERT_EQ(back.width, 6u * 32);
  ASSERT_EQ(back.height, 3u * 32);
  auto at = [&](uint32_t x, uint32_t y) {
    return pixel(back, x * 32 + 31, y * 32 + 5);
  };
  EXPECT_EQ(at(1, 1), colorMap(1.0)); // the largest value
  EXPECT_EQ(at(0, 0), colorMap(0.0)); // the smallest nonzero value
  EXPECT_EQ(at(2, 2), colorMap(2.0 / 15.0));
  EXPECT_EQ(at(1, 0), kZeroColor);
  EXPECT_EQ(at(5, 2), kUnusedColor);
  EXPECT_FALSE(kZeroColor == colorMap(0.0));
  // Categorical: layer 0 is not drawn as zero.
  Grid layer = computeHeatmap(*findHeatmapKind("layer"), p, nullptr);
  Image layers = renderHeatmap(layer, groupIndex(p), true);
  EXPECT_EQ(pixel(layers, 0, 0), colorMap(0.0));
  EXPECT_EQ(pixel(layers, 2 * 32, 0), colorMap(1.0));
  EXPECT_EQ(pixel(layers, 3 * 32, 0), kUnusedColor);
  EXPECT_EQ(pixel(layers, 3 * 32, 2 * 32), kZeroColor); // of no kernel
}

TEST(Png, BoundedForLargeFabrics) {
  EXPECT_EQ(imageScale(750, 994).pixelsPerPE, 1u);
  EXPECT_EQ(imageScale(750, 994).pesPerPixel, 1u);
  EXPECT_EQ(imageScale(16, 16).pixelsPerPE, 32u);
  EXPECT_EQ(imageScale(100, 40).pixelsPerPE, 5u);
  // Beyond 1024 PEs a side, blocks of PEs share a pixel: the largest value.
  Grid g(3000, 2, 0), groups(3000, 2, 0);
  g.at(2999, 1) = 9;
  g.at(2, 0) = 4;
  EXPECT_EQ(imageScale(3000, 2).pesPerPixel, 3u);
  Image image = renderHeatmap(g, groups, false);
  EXPECT_EQ(image.width, 1000u);
  EXPECT_EQ(image.height, 1u);
  EXPECT_EQ(pixel(image, 999, 0), colorMap(1.0));
  EXPECT_EQ(pixel(image, 0, 0), colorMap(0.0));
  EXPECT_EQ(pixel(image, 500, 0), kZeroColor);
}

TEST(Png, ColorMapRisesInLightness) {
  double last = -1;
  for (int i = 0; i <= 20; ++i) {
    Rgb c = colorMap(i / 20.0);
    double l = 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
    EXPECT_GT(l, last) << i;
    last = l;
  }
}

TEST(Html, PageIsDeterministicAndEscaped) {
  binary::Program p = sample();
  std::vector<sim::PeStats> pes = sampleStats();
  ReportInput in;
  in.program = &p;
  in.pes = &pes;
  in.summary.samples = 4;
  in.summary.cycles = 400;
  in.summary.cyclesPerSample = 80;
  in.summary.steadyCycles = 80;
  in.summary.utilization = 0.125;
  in.kernels = {{"a", "dense 4 -> 4", 5, 75, 80, 70},
                {"b</script>", "", 3, -1, 60, 60}};
  in.traceLink = "t.json";
  std::string page = renderReport(in);
  EXPECT_EQ(renderReport(in), page);
  // The one </script> of a name is escaped; the page's own close scripts.
  EXPECT_EQ(page.find("b</script>"), std::string::npos);
  EXPECT_NE(page.find("b\\u003c/script>"), std::string::npos);
  EXPECT_NE(page.find("[\"samples per million cycles\",\"12500.0\"]"),
            std::string::npos);
  EXPECT_NE(page.find("[\"utilization\",\"12.50%"), std::string::npos);
  EXPECT_NE(page.find("[\"a\",\"dense 4 -> 4\",5,\"75.0\",\"80.0\",\"6.2%\","
                      "\"70.0\"]"),
            std::string::npos);
  // Per-PE figures in group order, run-length encoded: busy of a0's four
  // PEs (5, 0, 0, 20), b's three (0, 0, 7), a1's and relay's (0, 0).
  EXPECT_NE(page.find("\"name\":\"busy\""), std::string::npos);
  EXPECT_NE(page.find("\"runs\":[5,1,0,2,20,1,0,2,7,1,0,2]"),
            std::string::npos);
  EXPECT_NE(page.find("\"rects\":[[0,0,0,2,2],[0,4,0,1,1],[1,2,0,1,3]]"),
            std::string::npos);
  EXPECT_NE(page.find("\"trace\":\"t.json\""), std::string::npos);
  // Without a run: only the kinds the binary gives.
  in.pes = nullptr;
  std::string layout = renderReport(in);
  EXPECT_EQ(layout.find("\"name\":\"busy\""), std::string::npos);
  EXPECT_NE(layout.find("\"name\":\"memory\""), std::string::npos);
}

TEST(Html, LinksAreRelativeToThePage) {
  EXPECT_EQ(linkFrom("/a/b/r.html", "/a/b/t.json"), "t.json");
  EXPECT_EQ(linkFrom("/a/b/r.html", "/a/c/t 1.json"), "../c/t%201.json");
  EXPECT_EQ(linkFrom("/a/r.html", "/a/b/./t.json"), "b/t.json");
}

} // namespace
