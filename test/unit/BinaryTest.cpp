//===- BinaryTest.cpp - .wfb verifier, writer and reader --------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Binary/File.h"
#include "weft/Binary/Routes.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <unistd.h>

using namespace weft::binary;
namespace wt = weft::machine;

namespace {

/// A small program that uses every record kind: two groups sharing one
/// image, a single PE with its own image, params, per-PE data, layers and
/// I/O streams.
Program sample() {
  Program p;
  p.target.width = 5;
  p.target.height = 2;
  p.name = "sample";
  p.layers = {"conv", "fc"};

  CodeImage row;
  row.routes = {{1, wt::dirBit(wt::Dir::West),
                 wt::dirBit(wt::Dir::East) | wt::dirBit(wt::Dir::Ramp), {}},
                {2, wt::dirBit(wt::Dir::Ramp), wt::dirBit(wt::Dir::East), {}}};
  row.segments = {{0, {0x1234, 0x0005, 0, 0}, "", ""},
                  {1024, {1, 2, 3, 4}, "", ""},
                  {2048, {7}, "stride", "tensor<1xi16>"}};
  row.active = uint64_t(1) << 1 | uint64_t(1) << 32;
  row.blocked = uint64_t(1) << 33;
  row.symbols = {{SymbolKind::Dsd, "xin", 1024, 4, 0, 0},
                 {SymbolKind::Task, "main", 128, 2, 1, 32},
                 {SymbolKind::Label, "loop", 129, 0, 0, 0}};
  p.images = {row, row};
  p.images[1].active = 2;

  Group a;
  a.name = "a";
  a.image = 0;
  a.x = 0;
  a.y = 0;
  a.width = 4;
  a.height = 1;
  a.layer = 0;
  a.params = {{5, 64, 0, 3}, {6, -1, 2, 100}};
  a.perPe = {{4096, 2, std::vector<uint16_t>(8, 0xabcd), "w",
              "tensor<1x4x1xf32>"}};
  Group b = a;
  b.name = "b";
  b.y = 1;
  b.image = 1;
  b.layer = 1;
  b.perPe[0].words[3] = 9;
  Group c;
  c.name = "pe_4_0";
  c.image = 0;
  c.x = 4;
  c.width = 1;
  c.height = 1;
  c.single = true;
  p.groups = {a, b, c};

  IoStream in;
  in.name = "x";
  in.edge = wt::Dir::West;
  in.firstRow = 0;
  in.endRow = 2;
  in.color = 1;
  in.shape = {2, 64};
  IoStream out = in;
  out.name = "y";
  out.output = true;
  out.edge = wt::Dir::East;
  out.color = 2;
  out.format = wt::PayloadFormat::Dense16x2;
  out.dtype = wt::ElemType::F16;
  out.shape = {3};
  p.io = {in, out};
  return p;
}

std::optional<Program> roundTrip(const Program &p, std::string *err) {
  std::vector<uint8_t> bytes = write(p);
  return read(bytes.data(), bytes.size(), err);
}

/// Rewrites the checksum so a deliberate edit reaches the structural checks.
void reseal(std::vector<uint8_t> &b) {
  uint64_t h = fnv1a64(b.data(), b.size() - 8);
  for (unsigned i = 0; i < 8; ++i)
    b[b.size() - 8 + i] = uint8_t(h >> (8 * i));
}

void put32(std::vector<uint8_t> &b, size_t at, uint32_t v) {
  for (unsigned i = 0; i < 4; ++i)
    b[at + i] = uint8_t(v >> (8 * i));
}

} // namespace

TEST(BinaryTest, SampleVerifies) { EXPECT_EQ(verify(sample()), ""); }

TEST(BinaryTest, IoStreamSizes) {
  IoStream s;
  s.shape = {2, 3, 4};
  EXPECT_EQ(s.numElements(), 24u);
  EXPECT_EQ(s.numBytes(), 96u);
  s.dtype = wt::ElemType::F16;
  EXPECT_EQ(s.numBytes(), 48u);
  s.shape = {};
  EXPECT_EQ(s.numElements(), 1u);
  s.shape = {5, 0};
  EXPECT_EQ(s.numBytes(), 0u);
}

TEST(BinaryTest, FeatureMapStreamOrder) {
  // [1, C = 4, 2 x 3] on 2 rows: Lc = 2, P = 6; chunk r holds channels
  // 2r, 2r + 1 pixel by pixel.
  IoStream s;
  s.firstRow = 1;
  s.endRow = 3;
  s.shape = {1, 4, 2, 3};
  for (uint64_t i = 0; i < 24; ++i)
    EXPECT_EQ(s.elementAt(i), i) << "row-major is the identity";
  s.order = IoOrder::FeatureMap;
  std::vector<uint64_t> order = s.streamOrder();
  std::vector<uint64_t> want = {0,  6,  1,  7,  2,  8,  3,  9,
                                4,  10, 5,  11, 12, 18, 13, 19,
                                14, 20, 15, 21, 16, 22, 17, 23};
  EXPECT_EQ(order, want);
  // permuted[r*Lc*P + p*Lc + cc] = original[(r*Lc + cc)*P + p].
  for (uint64_t r = 0; r < 2; ++r)
    for (uint64_t p = 0; p < 6; ++p)
      for (uint64_t cc = 0; cc < 2; ++cc)
        EXPECT_EQ(s.elementAt(r * 12 + p * 2 + cc), (r * 2 + cc) * 6 + p);
  // [1, C] has one pixel: every chunk is its channels in order.
  s.shape = {1, 6};
  s.endRow = 4;
  for (uint64_t i = 0; i < 6; ++i)
    EXPECT_EQ(s.elementAt(i), i);
  // One row: a plain transpose [C, P] -> [P, C].
  s.shape = {1, 3, 2};
  s.firstRow = 0;
  s.endRow = 1;
  EXPECT_EQ(s.streamOrder(), (std::vector<uint64_t>{0, 2, 4, 1, 3, 5}));
}

TEST(BinaryTest, FeatureMapOrderRoundTripsInByte9) {
  Program p = sample();
  p.io[0].shape = {1, 4, 16};
  std::vector<uint8_t> plain = write(p);
  p.io[0].order = IoOrder::FeatureMap;
  ASSERT_EQ(verify(p), "");
  std::vector<uint8_t> fmap = write(p);
  std::string err;
  std::optional<Program> q = read(fmap.data(), fmap.size(), &err);
  ASSERT_TRUE(q) << err;
  EXPECT_EQ(q->io[0].order, IoOrder::FeatureMap);
  EXPECT_EQ(q->io[1].order, IoOrder::RowMajor);
  EXPECT_EQ(*q, p);
  Program rowMajor = p;
  rowMajor.io[0].order = IoOrder::RowMajor;
  EXPECT_FALSE(*q == rowMajor);
  // Same layout and version: exactly the order byte (and the checksum)
  // differ.
  ASSERT_EQ(plain.size(), fmap.size());
  std::vector<size_t> diff;
  for (size_t i = 0; i + 8 < plain.size(); ++i)
    if (plain[i] != fmap[i])
      diff.push_back(i);
  ASSERT_EQ(diff.size(), 1u);
  size_t at = diff[0];
  EXPECT_EQ(plain[at], 0);
  EXPECT_EQ(fmap[at], 1);
  // An order that does not exist, and the remaining pad bytes.
  std::vector<uint8_t> b = fmap;
  b[at] = 2;
  reseal(b);
  EXPECT_FALSE(read(b.data(), b.size(), &err));
  EXPECT_NE(err.find("I/O stream element order 2 does not exist"),
            std::string::npos)
      << err;
  // Bytes 10 and 11 (once padding): zero skipping, only on a sparse16
  // input, and its closeout index, only with it.
  for (size_t pad : {at + 1, at + 2}) {
    b = fmap;
    b[pad] = 1;
    reseal(b);
    EXPECT_FALSE(read(b.data(), b.size(), &err));
    EXPECT_NE(err.find(pad == at + 1
                           ? "skips zeros, but only a sparse16 input can"
                           : "has closeout index 1; a sparse input's is 0 .. "
                             "63, other streams have none"),
              std::string::npos)
        << err;
  }
  b = fmap;
  b[at + 1] = 2;
  reseal(b);
  EXPECT_FALSE(read(b.data(), b.size(), &err));
  EXPECT_NE(err.find("I/O stream zero skipping 2 is neither 0 nor 1"),
            std::string::npos)
      << err;
}

TEST(BinaryTest, RoundTripAndDedup) {
  Program p = sample();
  std::string err;
  std::optional<Program> back = roundTrip(p, &err);
  ASSERT_TRUE(back) << err;
  // Images 0 and 1 differ (active bits), so nothing merges.
  EXPECT_EQ(*back, p);

  // Make them identical: the writer keeps one and renumbers group b.
  p.images[1] = p.images[0];
  back = roundTrip(p, &err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(back->images.size(), 1u);
  EXPECT_EQ(back->groups[1].image, 0u);
  Program merged = p;
  mergeIdenticalImages(merged);
  EXPECT_EQ(*back, merged);
  EXPECT_EQ(write(p), write(merged));
}

TEST(BinaryTest, MergeKeepsFirstOccurrenceOrder) {
  Program p = sample();
  CodeImage other;
  other.active = 7;
  p.images = {p.images[1], other, p.images[1], other};
  p.groups[0].image = 3;
  p.groups[1].image = 2;
  p.groups[2].image = 1;
  mergeIdenticalImages(p);
  ASSERT_EQ(p.images.size(), 2u);
  EXPECT_EQ(p.images[1].active, 7u);
  EXPECT_EQ(p.groups[0].image, 1u);
  EXPECT_EQ(p.groups[1].image, 0u);
  EXPECT_EQ(p.groups[2].image, 1u);
}

TEST(BinaryTest, WriterIsDeterministic) {
  EXPECT_EQ(write(sample()), write(sample()));
  Program p = sample();
  p.groups[0].params[0].c0 = 4;
  EXPECT_NE(write(p), write(sample()));
}

TEST(BinaryTest, EmptyProgramRoundTrips) {
  Program p;
  std::string err;
  std::optional<Program> back = roundTrip(p, &err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(*back, p);
}

TEST(BinaryTest, FileRoundTrip) {
  char path[] = "/tmp/weft-binary-test-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::string err;
  ASSERT_TRUE(writeFile(path, sample(), &err)) << err;
  std::optional<Program> back = readFile(path, &err);
  std::remove(path);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(*back, sample());
  EXPECT_FALSE(readFile("/nonexistent/x.wfb", &err));
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
}

TEST(BinaryTest, EveryTruncationIsRejected) {
  std::vector<uint8_t> bytes = write(sample());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string err;
    EXPECT_FALSE(read(bytes.data(), n, &err)) << "prefix of " << n;
    EXPECT_FALSE(err.empty()) << "prefix of " << n;
  }
  // A truncated file whose header still claims the full size.
  std::string err;
  EXPECT_FALSE(read(bytes.data(), bytes.size() - 1, &err));
  EXPECT_NE(err.find("total size"), std::string::npos) << err;
}

TEST(BinaryTest, EveryByteFlipIsRejected) {
  std::vector<uint8_t> bytes = write(sample());
  for (size_t i = 0; i < bytes.size(); ++i)
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> bad = bytes;
      bad[i] ^= mask;
      std::string err;
      EXPECT_FALSE(read(bad.data(), bad.size(), &err))
          << "byte " << i << " ^ " << unsigned(mask);
      EXPECT_FALSE(err.empty());
    }
}

TEST(BinaryTest, ResealedCorruptionIsRejectedStructurally) {
  // With a valid checksum, every single-byte change must still either be
  // rejected with a message or decode to a program that verifies; it must
  // never crash. Most hit a structural check.
  std::vector<uint8_t> bytes = write(sample());
  size_t rejected = 0;
  for (size_t i = 0; i + 8 < bytes.size(); ++i) {
    std::vector<uint8_t> bad = bytes;
    bad[i] ^= 0xff;
    reseal(bad);
    std::string err;
    std::optional<Program> p = read(bad.data(), bad.size(), &err);
    if (!p) {
      ++rejected;
      EXPECT_FALSE(err.empty());
    } else {
      EXPECT_EQ(verify(*p), "");
    }
  }
  EXPECT_GT(rejected, bytes.size() / 2);
}

TEST(BinaryTest, HeaderErrors) {
  std::vector<uint8_t> good = write(sample());
  std::string err;
  auto expectError = [&](std::vector<uint8_t> b, const std::string &what) {
    err.clear();
    EXPECT_FALSE(read(b.data(), b.size(), &err)) << what;
    EXPECT_NE(err.find(what), std::string::npos) << err;
  };
  std::vector<uint8_t> b = good;
  b[0] = 'X';
  expectError(b, "not a .wfb file");
  b = good;
  b[4] = 3;
  expectError(b, "format version 3 is not supported (this reader knows "
                 "versions 1 to 2)");
  b = good;
  b[4] = 0;
  expectError(b, "format version 0 is not supported");
  b = good;
  b[6] = 1;
  reseal(b);
  expectError(b, "flags");
  b = good;
  put32(b, 32, 7);
  reseal(b);
  expectError(b, "section count 7");
  b = good;
  b.back() ^= 1;
  expectError(b, "checksum");
  b = good;
  b.push_back(0);
  expectError(b, "total size");
  expectError({}, "shorter than");
}

TEST(BinaryTest, OversizedCountsAreRejectedBeforeAllocating) {
  // The string count is the first word of the first section (at byte 64).
  std::vector<uint8_t> b = write(sample());
  put32(b, 48 + 16, 0xffffffffu);
  reseal(b);
  std::string err;
  EXPECT_FALSE(read(b.data(), b.size(), &err));
  EXPECT_NE(err.find("string count 4294967295"), std::string::npos) << err;

  // A section length beyond the file.
  b = write(sample());
  put32(b, 48 + 8, 0x7fffffffu);
  reseal(b);
  EXPECT_FALSE(read(b.data(), b.size(), &err));
  EXPECT_NE(err.find("claims 2147483647 bytes"), std::string::npos) << err;

  // A huge segment word count in an otherwise valid file: find the segment
  // of the 1-word "stride" record by its address (2048) and patch the count.
  b = write(sample());
  bool patched = false;
  for (size_t i = 0; i + 16 < b.size(); ++i)
    if (b[i] == 0x00 && b[i + 1] == 0x08 && b[i + 2] == 0 && b[i + 3] == 0 &&
        b[i + 12] == 1 && b[i + 13] == 0 && b[i + 14] == 0 && b[i + 15] == 0) {
      put32(b, i + 12, 0x40000000u);
      patched = true;
      break;
    }
  ASSERT_TRUE(patched);
  reseal(b);
  EXPECT_FALSE(read(b.data(), b.size(), &err));
  EXPECT_NE(err.find("1073741824 words"), std::string::npos) << err;
}

TEST(BinaryTest, InvalidProgramsAreRejectedByRead) {
  Program p = sample();
  p.groups[0].image = 9;
  std::vector<uint8_t> b = write(p);
  std::string err;
  EXPECT_FALSE(read(b.data(), b.size(), &err));
  EXPECT_NE(err.find("invalid program: group 0 (@a) runs image 9"),
            std::string::npos)
      << err;
}

//===----------------------------------------------------------------------===//
// verify() negatives: each names the item and the values.
//===----------------------------------------------------------------------===//

namespace {
void expectInvalid(const Program &p, const std::string &what) {
  std::string err = verify(p);
  EXPECT_NE(err.find(what), std::string::npos)
      << "expected '" << what << "', got '" << err << "'";
}
} // namespace

TEST(BinaryVerifyTest, Target) {
  Program p = sample();
  p.target.memoryBytes = 3;
  expectInvalid(p, "target 5x2,mem=3");
}

TEST(BinaryVerifyTest, Groups) {
  Program p = sample();
  p.groups[0].width = 6;
  expectInvalid(p, "group 0 (@a) at PEs [0, 6) x [0, 1) is empty or leaves "
                   "the 5x2 fabric");
  p = sample();
  p.groups[2].x = 3;
  expectInvalid(p, "group 2 (@pe_4_0) at PEs [3, 4) x [0, 1) overlaps group "
                   "0 (@a) at PEs [0, 4) x [0, 1)");
  p = sample();
  p.groups[1].y = 0;
  p.groups[1].x = 1;
  p.groups[1].width = 1;
  p.groups[1].perPe[0].words.resize(2);
  expectInvalid(p, "overlaps");
  p = sample();
  p.groups[0].height = 0;
  expectInvalid(p, "is empty");
  p = sample();
  p.groups[0].layer = 2;
  expectInvalid(p, "belongs to layer 2 but the program has 2 layers");
}

TEST(BinaryVerifyTest, Memory) {
  Program p = sample();
  p.images[0].segments[1].address = 2;
  expectInvalid(p, "image 0: segment (unnamed) [2, 6) overlaps segment "
                   "(unnamed) [0, 4)");
  p = sample();
  p.images[0].segments[2].address = 24575;
  p.images[0].segments[2].words = {1, 2};
  expectInvalid(p, "segment @stride [24575, 24577) leaves the PE memory of "
                   "24576 words");
  p = sample();
  p.groups[0].perPe[0].address = 1025;
  expectInvalid(p, "group 0 (@a): per-PE segment @w [1025, 1027) overlaps "
                   "segment (unnamed) [1024, 1028) of image 0");
  p = sample();
  p.groups[0].perPe[0].words.pop_back();
  expectInvalid(p, "per-PE segment @w holds 7 words, not 2 for each of 4 PEs");
}

TEST(BinaryVerifyTest, Routes) {
  Program p = sample();
  p.images[0].routes[0].color = 24;
  expectInvalid(p, "image 0: route color 24 is not routable on this target "
                   "(colors 0..23)");
  p = sample();
  p.images[0].routes[1].color = 1;
  expectInvalid(p, "color 1 is routed twice");
  p = sample();
  p.images[0].routes[0].outputs = 0;
  expectInvalid(p, "route of color 1 has port sets");
  p = sample();
  p.images[0].routes[0].inputs = 0x20;
  expectInvalid(p, "route of color 1 has port sets (inputs 0x20");
  p = sample();
  p.images[0].routes[0].inputs |= wt::dirBit(wt::Dir::North);
  expectInvalid(p, "group 0 (@a): color 1 uses the north port of PE (0, 0), "
                   "which has no north neighbour");
}

TEST(BinaryVerifyTest, Params) {
  Program p = sample();
  p.groups[0].params[0].gpr = 16;
  expectInvalid(p, "param names gpr 16 but there are 16");
  p = sample();
  p.groups[0].params[1].gpr = 5;
  expectInvalid(p, "gpr 5 is initialised twice");
  Param prm{3, 2, 100, -1};
  EXPECT_EQ(prm.valueAt(3, 1), 105);
  EXPECT_EQ((Param{0, -1, 0, 0}).valueAt(1, 0), 0xffff);
}

TEST(BinaryVerifyTest, Io) {
  Program p = sample();
  p.io[0].endRow = 3;
  expectInvalid(p, "I/O stream 0 (@x) uses rows [0, 3), which are empty or "
                   "leave the 2-row fabric");
  p = sample();
  p.io[0].firstRow = 2;
  expectInvalid(p, "uses rows [2, 2)");
  p = sample();
  p.io[0].color = 30;
  expectInvalid(p, "uses color 30, which is not routable");
  p = sample();
  p.io[0].format = wt::PayloadFormat::Sparse16;
  expectInvalid(p, "carries f32 elements in the sparse16 format");
  p = sample();
  p.io[1].format = wt::PayloadFormat::Dense32;
  expectInvalid(p, "carries f16 elements in the dense32 format");
  p = sample();
  p.io[0].dtype = wt::ElemType::None;
  expectInvalid(p, "has element type 0");
  p = sample();
  p.io[0].shape = {4, -1};
  expectInvalid(p, "has dimension 1 of size -1");
  p = sample();
  p.io[0].shape = {int64_t(1) << 40, int64_t(1) << 40};
  expectInvalid(p, "has more than");
  p = sample();
  p.io[0].edge = wt::Dir::North;
  expectInvalid(p, "is on edge 0");
  p = sample();
  p.io[0].order = IoOrder(7);
  expectInvalid(p, "I/O stream 0 (@x) has element order 7");
  // Inputs are bound and outputs named by name (found by the simulator
  // fuzzer: an input named as an output could not be bound).
  p = sample();
  p.io[1].name = p.io[0].name;
  expectInvalid(p, "I/O streams 0 and 1 are both named @x; a stream's name "
                   "must be unique");
}

TEST(BinaryTest, SparseInputRoundTrips) {
  // A sparse16 f16 input that skips zeros and ends each chunk with
  // closeout index 63 reads back equal, and verifies.
  Program p = sample();
  p.io[0].dtype = wt::ElemType::F16;
  p.io[0].format = wt::PayloadFormat::Sparse16;
  p.io[0].skipZeros = true;
  p.io[0].closeout = 63;
  ASSERT_EQ(verify(p), "");
  std::string err;
  std::optional<Program> q = roundTrip(p, &err);
  ASSERT_TRUE(q) << err;
  EXPECT_TRUE(q->io[0].skipZeros);
  EXPECT_EQ(q->io[0].closeout, 63);
  EXPECT_EQ(*q, p);
  // A closeout index that is no wavelet index, and zero skipping on an
  // output or on a dense input.
  Program bad = p;
  bad.io[0].closeout = 64;
  expectInvalid(bad, "I/O stream 0 (@x) has closeout index 64; a sparse "
                     "input's is 0 .. 63, other streams have none");
  bad = p;
  bad.io[1].skipZeros = true;
  expectInvalid(bad, "skips zeros, but only a sparse16 input can");
  bad = p;
  bad.io[0].dtype = wt::ElemType::F32;
  bad.io[0].format = wt::PayloadFormat::Dense32;
  expectInvalid(bad, "skips zeros, but only a sparse16 input can");
}

TEST(BinaryVerifyTest, FeatureMapIo) {
  Program p = sample();
  p.io[0].order = IoOrder::FeatureMap;
  p.io[0].shape = {1, 4, 3, 3};
  EXPECT_EQ(verify(p), "");
  p.io[0].shape = {1, 2};
  EXPECT_EQ(verify(p), "");
  p.io[0].shape = {8};
  expectInvalid(p, "I/O stream 0 (@x) is a feature map of rank 1; a feature "
                   "map has shape [1, C, spatial...]");
  p.io[0].shape = {2, 4, 3};
  expectInvalid(p, "I/O stream 0 (@x) is a feature map with dimension 0 of "
                   "size 2; the dimensions before the channels");
  p.io[0].shape = {1, 5, 3};
  expectInvalid(p, "I/O stream 0 (@x) is a feature map of 5 channels on 2 "
                   "rows; the rows must divide the channels");
}

TEST(BinaryVerifyTest, Symbols) {
  Program p = sample();
  p.images[0].symbols[0].kind = SymbolKind(9);
  expectInvalid(p, "symbol 'xin' has kind 9");
}

//===----------------------------------------------------------------------===//
// Positioned routes (docs/architecture.md §4.4)
//===----------------------------------------------------------------------===//

namespace {
constexpr wt::DirSet kWest = wt::dirBit(wt::Dir::West);
constexpr wt::DirSet kEast = wt::dirBit(wt::Dir::East);
constexpr wt::DirSet kRamp = wt::dirBit(wt::Dir::Ramp);

/// sample() with color 1 of image 0 taking a segment out of the west
/// stream: 10 east, 6 east and to the CE, 20 to the CE.
Program positioned() {
  Program p = sample();
  p.images[0].routes[0].positions = {
      {kWest, kEast, 10}, {kWest, kEast | kRamp, 6}, {kWest, kRamp, 20}};
  return p;
}

/// The offset of the first route record with positions in `b`: color 1,
/// inputs west, outputs east and ramp, 3 positions.
size_t positionedRouteAt(const std::vector<uint8_t> &b) {
  for (size_t i = 0; i + 4 < b.size(); ++i)
    if (b[i] == 1 && b[i + 1] == kWest && b[i + 2] == (kEast | kRamp) &&
        b[i + 3] == 3)
      return i;
  return 0;
}
} // namespace

TEST(BinaryTest, PositionsRoundTrip) {
  Program p = positioned();
  ASSERT_EQ(verify(p), "");
  std::string err;
  std::optional<Program> back = roundTrip(p, &err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(*back, p);
  EXPECT_EQ(back->images[0].routes[0].positions.size(), 3u);
  EXPECT_EQ(back->images[0].routes[0].positions[2].count, 20u);
  EXPECT_TRUE(back->images[1].routes[0].positions.empty());
  // Positions are part of an image: a positioned copy is not merged with
  // the static one, and a different count is a different program.
  p.images[1] = p.images[0];
  p.images[1].routes[0].positions.clear();
  back = roundTrip(p, &err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(back->images.size(), 2u);
  Program q = positioned();
  q.images[0].routes[0].positions[1].count = 7;
  EXPECT_NE(write(q), write(positioned()));
  EXPECT_FALSE(q == positioned());
  // The writer puts version 2 in the header, and the route record holds the
  // position count in its last byte, followed by 8 bytes per position.
  std::vector<uint8_t> b = write(positioned());
  EXPECT_EQ(b[4] | b[5] << 8, kFormatVersion);
  EXPECT_EQ(kFormatVersion, 2);
  size_t at = positionedRouteAt(b);
  ASSERT_NE(at, 0u);
  EXPECT_EQ(b[at + 4], kWest);
  EXPECT_EQ(b[at + 5], kEast);
  EXPECT_EQ(b[at + 8] | b[at + 9] << 8, 10);
  EXPECT_EQ(b[at + 4 + 8 + 1], kEast | kRamp);
}

TEST(BinaryTest, Version1FilesReadAsStaticRoutes) {
  // A version 1 file is a version 2 file without positions: the byte that
  // now counts them was a pad byte that had to be 0.
  std::vector<uint8_t> b = write(sample());
  b[4] = 1;
  reseal(b);
  std::string err;
  std::optional<Program> p = read(b.data(), b.size(), &err);
  ASSERT_TRUE(p) << err;
  EXPECT_EQ(*p, sample());
  // In version 1 a non-zero count is a non-zero pad byte.
  b = write(positioned());
  b[4] = 1;
  reseal(b);
  EXPECT_FALSE(read(b.data(), b.size(), &err));
  EXPECT_NE(err.find("route padding is reserved and must be 0, got 3"),
            std::string::npos)
      << err;
}

TEST(BinaryTest, MalformedPositionRecordsAreRejected) {
  std::vector<uint8_t> good = write(positioned());
  size_t at = positionedRouteAt(good);
  ASSERT_NE(at, 0u);
  std::string err;
  auto expectError = [&](std::vector<uint8_t> b, const std::string &what) {
    reseal(b);
    err.clear();
    EXPECT_FALSE(read(b.data(), b.size(), &err)) << what;
    EXPECT_NE(err.find(what), std::string::npos) << err;
  };
  std::vector<uint8_t> b = good;
  b[at + 4 + 2] = 1;
  expectError(b, "route position padding is reserved and must be 0, got 1");
  // More positions than the section holds bytes for.
  b = good;
  b[at + 3] = 255;
  expectError(b, "route position count 255 needs at least 255 x 8 bytes");
  // Records the reader accepts but verify() does not, with the group named.
  Program one = positioned();
  one.images[0].routes[0].positions.resize(1);
  expectError(write(one), "invalid program: image 0 (run by group 0 (@a)): "
                          "route of color 1: has 1 position; a positioned "
                          "route has 2 to 4");
  b = good;
  put32(b, at + 4 + 8 + 4, 0);
  expectError(b, "route of color 1: position 2 of 3 has count 0; counts are "
                 "1 to 16777216");
  b = good;
  put32(b, at + 4 + 4, 0xffffffffu);
  expectError(b, "position 1 of 3 has count 4294967295");
  b = good;
  b[at + 4 + 16] = wt::dirBit(wt::Dir::North);
  expectError(b, "position 3 of 3 takes from [north], which the route's "
                 "inputs [west] do not include");
  // Any single changed byte of the route and its positions is rejected or
  // reads back as a program that verifies; nothing crashes.
  for (size_t i = at; i < at + 4 + 3 * 8; ++i)
    for (uint8_t v : {uint8_t(0), uint8_t(1), uint8_t(0x1f), uint8_t(0xff)}) {
      b = good;
      b[i] = v;
      reseal(b);
      std::optional<Program> p = read(b.data(), b.size(), &err);
      if (p) {
        EXPECT_EQ(verify(*p), "") << "byte " << i;
      }
    }
}

TEST(BinaryVerifyTest, RoutePositions) {
  const std::string where = "image 0 (run by group 0 (@a)): route of color 1: ";
  Program p = positioned();
  p.images[0].routes[0].positions.resize(1);
  expectInvalid(p, where + "has 1 position; a positioned route has 2 to 4");
  p = positioned();
  p.images[0].routes[0].positions.resize(5, {kWest, kEast, 1});
  expectInvalid(p, where + "has 5 positions; a positioned route has 2 to 4");
  p = positioned();
  p.images[0].routes[0].positions[0].count = 0;
  expectInvalid(p, where + "position 1 of 3 has count 0; counts are 1 to "
                           "16777216");
  p = positioned();
  p.images[0].routes[0].positions[2].count = (1u << 24) + 1;
  expectInvalid(p, where + "position 3 of 3 has count 16777217");
  p.images[0].routes[0].positions[2].count = 1u << 24;
  EXPECT_EQ(verify(p), "");
  p = positioned();
  p.images[0].routes[0].positions[1].inputs = 0;
  expectInvalid(p, where + "position 2 of 3 needs at least one input and "
                           "one output port");
  p = positioned();
  p.images[0].routes[0].positions[0].outputs = 0;
  expectInvalid(p, where + "position 1 of 3 needs at least one input and "
                           "one output port");
  p = positioned();
  p.images[0].routes[0].positions[0].outputs = 0x22;
  expectInvalid(p, where + "position 1 of 3 has port masks (inputs 8, "
                           "outputs 34) beyond the 5 ports");
  p = positioned();
  p.images[0].routes[0].positions[1].inputs = kWest | kRamp;
  expectInvalid(p, where + "position 2 of 3 takes from [west, ramp], which "
                           "the route's inputs [west] do not include");
  p = positioned();
  p.images[0].routes[0].outputs = kEast;
  expectInvalid(p, where + "position 2 of 3 sends to [east, ramp], which the "
                           "route's outputs [east] do not include");
  // The route's sets must be exactly the positions' unions.
  p = positioned();
  p.images[0].routes[0].inputs = kWest | kRamp;
  expectInvalid(p, where + "the positions take from [west] but the route's "
                           "inputs are [west, ramp]; they must be the "
                           "positions' union");
  p = positioned();
  p.images[0].routes[0].positions[1].outputs = kRamp;
  p.images[0].routes[0].positions[0].outputs = kRamp;
  expectInvalid(p, where + "the positions send to [ramp] but the route's "
                           "outputs are [east, ramp]");
  // An image no group runs is named alone.
  p = positioned();
  p.images[0].routes[0].positions[0].count = 0;
  p.groups[0].image = 1;
  p.groups[2].image = 1;
  expectInvalid(p, "image 0: route of color 1: position 1 of 3 has count 0");
  // The link check sees the unions, so a position cannot hide a port.
  p = positioned();
  p.images[0].routes[0].inputs |= wt::dirBit(wt::Dir::North);
  p.images[0].routes[0].positions[0].inputs |= wt::dirBit(wt::Dir::North);
  expectInvalid(p, "group 0 (@a): color 1 uses the north port of PE (0, 0)");
}

TEST(BinaryVerifyTest, CheckRoutesSeesInconsistentPositions) {
  // checkRoutes may see a program verify() has not passed; it reports
  // positions that do not fit their route, naming the PE and the color.
  Program p;
  p.target.width = 1;
  p.target.height = 1;
  CodeImage img;
  img.routes = {{1, kWest, kEast, {{kWest, kEast, 3}, {kRamp, kEast, 2}}}};
  p.images = {img};
  Group g;
  g.name = "g";
  p.groups = {g};
  IoStream in, out;
  in.name = "x";
  in.color = 1;
  in.shape = {4};
  out = in;
  out.name = "y";
  out.output = true;
  out.edge = wt::Dir::East;
  p.io = {in, out};
  std::vector<std::string> problems = checkRoutes(p);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "PE (0, 0) routes color 1 with positions that do not "
                         "fit its route: position 2 of 2 takes from [ramp], "
                         "which the route's inputs [west] do not include");
  p.images[0].routes[0].inputs = kWest | kRamp;
  EXPECT_TRUE(checkRoutes(p).empty());
  EXPECT_EQ(verify(p), "");
}
