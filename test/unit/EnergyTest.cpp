//===- EnergyTest.cpp - The memory access energy model --------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Machine/Energy.h"

#include <gtest/gtest.h>

using namespace weft::machine;

TEST(Energy, AccessByWidth) {
  EXPECT_EQ(readEnergyFj(0), 0u);
  EXPECT_EQ(writeEnergyFj(0), 0u);
  // A 16-bit word and an fp32 pair (docs/architecture.md §7.3).
  EXPECT_EQ(readEnergyFj(2), 2000u);
  EXPECT_EQ(readEnergyFj(4), 3000u);
  EXPECT_EQ(writeEnergyFj(2), 2400u);
  EXPECT_EQ(writeEnergyFj(4), 3600u);
  // Wider accesses cost more per access and less per byte.
  for (unsigned w = 1; w < 16; ++w) {
    EXPECT_LT(readEnergyFj(w), readEnergyFj(w + 1));
    EXPECT_GT(readEnergyFj(w) * (w + 1), readEnergyFj(w + 1) * w);
    EXPECT_LT(writeEnergyFj(w), writeEnergyFj(w + 1));
  }
}

TEST(Energy, SlicedWordValidity) {
  EXPECT_TRUE((SlicedWord{4, 2, 2}.valid()));
  EXPECT_TRUE((SlicedWord{8, 1, 4}.valid()));
  EXPECT_FALSE((SlicedWord{4, 2, 0}.valid()));
  EXPECT_FALSE((SlicedWord{4, 2, 4}.valid()));
  EXPECT_FALSE((SlicedWord{4, 0, 2}.valid()));
  EXPECT_FALSE((SlicedWord{65, 1, 4}.valid()));
}

// The document's canonical word: 8 one-byte lanes, an 8-bit mask slice and
// two 4-byte slices; boundary popcounts 0, S1 and S1 + 1.
TEST(Energy, SlicedWordBoundaries) {
  SlicedWord w{8, 1, 4};
  ASSERT_EQ(w.maskBytes(), 1u);
  ASSERT_EQ(w.slice1Bytes(), 4u);
  ASSERT_EQ(w.slice2Bytes(), 4u);
  uint64_t mask = readEnergyFj(1), slice = readEnergyFj(4);
  EXPECT_EQ(slicedReadEnergyFj(w, 0), mask);
  EXPECT_EQ(slicedReadEnergyFj(w, 1), mask + slice);
  EXPECT_EQ(slicedReadEnergyFj(w, 4), mask + slice);
  EXPECT_EQ(slicedReadEnergyFj(w, 5), mask + 2 * slice);
  EXPECT_EQ(slicedReadEnergyFj(w, 8), mask + 2 * slice);
  EXPECT_EQ(slicedWriteEnergyFj(w, 0), writeEnergyFj(1));
  EXPECT_EQ(slicedWriteEnergyFj(w, 5), writeEnergyFj(1) + 2 * writeEnergyFj(4));
  // A sparse word is cheaper than the dense 8-byte access; a full one costs
  // the mask and the second decode more.
  EXPECT_LT(slicedReadEnergyFj(w, 4), readEnergyFj(8));
  EXPECT_GT(slicedReadEnergyFj(w, 8), readEnergyFj(8));
}

// fp16 lanes at two-byte mask granularity: 4 lanes, slice 1 of 2 lanes.
TEST(Energy, SlicedWordFp16) {
  SlicedWord w{4, 2, 2};
  EXPECT_EQ(w.maskBytes(), 1u);
  EXPECT_EQ(w.slice1Bytes(), 4u);
  EXPECT_EQ(w.slice2Bytes(), 4u);
  EXPECT_EQ(slicedReadEnergyFj(w, 2), readEnergyFj(1) + readEnergyFj(4));
  EXPECT_EQ(slicedReadEnergyFj(w, 3), readEnergyFj(1) + 2 * readEnergyFj(4));
}

//===----------------------------------------------------------------------===//
// Sliced vectors (weft/Machine/Sliced.h; architecture §8.3)
//===----------------------------------------------------------------------===//

#include "weft/Machine/Sliced.h"

// Every mask of a word, 16- and 32-bit lanes: pack then unpack is the
// identity, the non-zero lanes are packed from the slot's start in order
// and the rest of the slot is zero.
TEST(Sliced, EveryMaskRoundTrips) {
  for (unsigned ew : {1u, 2u})
    for (unsigned mask = 0; mask < 16; ++mask) {
      std::vector<uint32_t> v(4, 0);
      for (unsigned l = 0; l < 4; ++l)
        if (mask & (1u << l))
          v[l] = (ew == 2 ? 0x3f800000u : 0x3c00u) + l + 1;
      std::vector<uint16_t> words = packSliced(v, ew);
      SlicedLayout layout{4, ew};
      ASSERT_EQ(words.size(), layout.footprintWords());
      EXPECT_EQ(slicedMask(words.data() + layout.maskOffset(), 0), mask);
      EXPECT_EQ(unpackSliced(words.data(), 4, ew), v);
      unsigned packed = 0;
      for (unsigned l = 0; l < 4; ++l) {
        if (!(mask & (1u << l)))
          continue;
        uint32_t got = words[packed * ew] |
                       (ew == 2 ? uint32_t(words[packed * ew + 1]) << 16 : 0);
        EXPECT_EQ(got, v[l]);
        ++packed;
      }
      for (unsigned i = packed * ew; i < 4 * ew; ++i)
        EXPECT_EQ(words[i], 0u);
    }
}

// The document's example at two-byte granularity: lanes 0 .. 3 =
// 0000 1234 0000 5678 -> mask 0b1010, slice 1 = 1234 5678, slice 2 empty.
// -0 (the sign bit alone) is not zero.
TEST(Sliced, WorkedExampleAndNegativeZero) {
  std::vector<uint16_t> w = packSliced({0, 0x1234, 0, 0x5678, 0x8000}, 1);
  SlicedLayout l{5, 1};
  ASSERT_EQ(l.words(), 2u);
  ASSERT_EQ(l.footprintWords(), 8u + 1u);
  EXPECT_EQ(w[0], 0x1234);
  EXPECT_EQ(w[1], 0x5678);
  EXPECT_EQ(w[2], 0);
  EXPECT_EQ(w[4], 0x8000);
  EXPECT_EQ(w[8], 0xA | (0x1 << 4));
  EXPECT_EQ(slicedGroups(w.data(), 5, 1, 4), 2u);
  EXPECT_EQ(slicedGroups(w.data(), 5, 1, 1), 3u);
}

// Masks share memory words four at a time; a long vector's layout.
TEST(Sliced, LayoutOfALongVector) {
  SlicedLayout l{37, 2};
  EXPECT_EQ(l.words(), 10u);
  EXPECT_EQ(l.slotWords(), 80u);
  EXPECT_EQ(l.maskWords(), 3u);
  EXPECT_EQ(l.footprintWords(), 83u);
  std::vector<uint32_t> v(37);
  for (unsigned i = 0; i < 37; ++i)
    v[i] = i % 3 ? 0x40000000u + i : 0;
  std::vector<uint16_t> words = packSliced(v, 2);
  EXPECT_EQ(unpackSliced(words.data(), 37, 2), v);
  SlicedWord word = l.word();
  EXPECT_EQ(word.laneBytes, 4u);
  EXPECT_EQ(word.slice1Lanes, kSlice1Lanes);
}
