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
