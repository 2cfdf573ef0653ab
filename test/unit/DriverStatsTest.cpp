//===- DriverStatsTest.cpp - The simulator's statistics read back ---------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// `weftc run` reads the simulator's statistics JSON split at its "pes"
// array (the per-PE entries parsed one at a time) and writes it back; the
// per-PE statistics and the file written must be those of the whole JSON
// parsed as one tree.
//
//===----------------------------------------------------------------------===//

#include "weft/Driver/Report.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace weft;
using namespace weft::driver;
namespace json = llvm::json;

namespace {

/// Statistics in the simulator's layout (docs/simulator.md, "Statistics"),
/// with strings that hold brackets, braces, commas and escaped quotes, and
/// an entry that is not an object.
const char *const kStats = R"({
  "cycles": 120, "latency": 40, "macs": 96,
  "note": "a \"quoted\" [text] {with} , commas\\",
  "pes": [
    {"x": 0, "y": 1, "layer": 0, "busy_cycles": 50, "ce_busy_cycles": 44,
     "send_wait_cycles": 3, "free_cycles": 2, "instructions": 17,
     "elements": 64, "flops": 128, "macs": 64, "picks": 5,
     "hops": {"north": 1, "east": 2, "south": 3, "west": 4, "ramp": 5},
     "router_queue_high": 2, "ce_queue_high": 1, "memory_words_used": 300,
     "name": "pe ]}, \"0\""},
    7,
    {"x": 749, "y": 993, "layer": 1, "ce_busy_cycles": 9, "hops": {}},
    {"x": 3, "y": 2, "layer": -1, "ratio": 0.25, "flag": true, "none": null,
     "list": [1, [2, {"k": "]"}], -3e2]}
  ],
  "sample_done": [60, 100], "first_injection": 20, "z": {"a": [], "b": {}}
})";

void expectSame(const sim::PeStats &a, const sim::PeStats &b) {
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.y, b.y);
  EXPECT_EQ(a.layer, b.layer);
  EXPECT_EQ(a.busyCycles, b.busyCycles);
  EXPECT_EQ(a.ceBusyCycles, b.ceBusyCycles);
  EXPECT_EQ(a.sendWaitCycles, b.sendWaitCycles);
  EXPECT_EQ(a.freeCycles, b.freeCycles);
  EXPECT_EQ(a.instructions, b.instructions);
  EXPECT_EQ(a.elements, b.elements);
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.macs, b.macs);
  EXPECT_EQ(a.picks, b.picks);
  for (unsigned d = 0; d < 5; ++d)
    EXPECT_EQ(a.hops[d], b.hops[d]);
  EXPECT_EQ(a.routerQueueHigh, b.routerQueueHigh);
  EXPECT_EQ(a.ceQueueHigh, b.ceQueueHigh);
  EXPECT_EQ(a.memoryWordsUsed, b.memoryWordsUsed);
}

std::string written(const SplitStatistics &split) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::Error err = writeStatistics(os, split);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));
  return out;
}

TEST(DriverStats, SplitMatchesTheWholeTree) {
  llvm::Expected<json::Value> whole = json::parse(kStats);
  ASSERT_TRUE(bool(whole)) << llvm::toString(whole.takeError());
  auto split = splitStatistics(kStats);
  ASSERT_TRUE(bool(split)) << llvm::toString(split.takeError());
  EXPECT_TRUE(split->hasPes);
  ASSERT_EQ(split->pes.size(), 4u);
  EXPECT_EQ(split->top.get("pes"), nullptr);
  EXPECT_EQ(split->top.getInteger("cycles"), 120);
  EXPECT_EQ(split->top.getString("note"),
            llvm::StringRef("a \"quoted\" [text] {with} , commas\\"));

  // The per-PE statistics: those of the whole tree, non-objects skipped.
  std::vector<sim::PeStats> want = readPeStats(whole->getAsObject());
  auto got = readPeStats(*split);
  ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
  ASSERT_EQ(got->size(), 3u);
  ASSERT_EQ(want.size(), 3u);
  for (size_t i = 0; i < want.size(); ++i)
    expectSame((*got)[i], want[i]);
  EXPECT_EQ((*got)[0].hops[4], 5u);
  EXPECT_EQ((*got)[0].memoryWordsUsed, 300u);
  EXPECT_EQ((*got)[1].x, 749u);
  EXPECT_EQ((*got)[1].layer, 1);
  EXPECT_EQ((*got)[2].layer, -1);

  // Written back byte for byte as llvm::json prints the whole tree, with
  // figures added to the top level on both sides.
  json::Object *obj = whole->getAsObject();
  (*obj)["utilization"] = 0.5;
  (*obj)["replica"] = json::Object{{"rows", 3}};
  split->top["utilization"] = 0.5;
  split->top["replica"] = json::Object{{"rows", 3}};
  EXPECT_EQ(written(*split),
            llvm::formatv("{0:2}", json::Value(std::move(*obj))).str());
}

TEST(DriverStats, WithoutPes) {
  for (const char *text : {R"({"cycles": 3})", R"({})", R"({"pes": 4})"}) {
    llvm::Expected<json::Value> whole = json::parse(text);
    ASSERT_TRUE(bool(whole));
    auto split = splitStatistics(text);
    ASSERT_TRUE(bool(split))
        << text << ": " << llvm::toString(split.takeError());
    EXPECT_FALSE(split->hasPes);
    EXPECT_TRUE(split->pes.empty());
    EXPECT_EQ(written(*split), llvm::formatv("{0:2}", *whole).str()) << text;
  }
  auto empty = splitStatistics(R"({"pes": [ ]})");
  ASSERT_TRUE(bool(empty));
  EXPECT_TRUE(empty->hasPes);
  EXPECT_TRUE(empty->pes.empty());
  EXPECT_EQ(written(*empty), "{\n  \"pes\": []\n}");
}

TEST(DriverStats, BadInputIsAnError) {
  for (const char *text :
       {"", "[1]", "{", R"({"pes": [{"x": 1})", R"({"pes": [{"x": 1}})",
        R"({"pes": [1 2]})", R"({"a" 1})", R"({"a": "open})",
        R"({"a": 1} trailing)", R"({"a": tru})", R"({"pes": [], "pes": []})"}) {
    auto split = splitStatistics(text);
    EXPECT_FALSE(bool(split)) << text;
    if (!split)
      llvm::consumeError(split.takeError());
  }
  // A malformed entry is found when the entries are parsed.
  auto split = splitStatistics(R"({"pes": [{"x": 1,}]})");
  ASSERT_TRUE(bool(split));
  auto pes = readPeStats(*split);
  EXPECT_FALSE(bool(pes));
  if (!pes)
    llvm::consumeError(pes.takeError());
}

} // namespace
