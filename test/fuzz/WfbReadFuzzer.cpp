//===- WfbReadFuzzer.cpp - libFuzzer target for the .wfb reader -------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Built with clang++ -fsanitize=fuzzer,address,undefined (test/fuzz/
// CMakeLists.txt). Every input must give either a program or an error
// message, never a crash, a sanitizer report or a huge allocation (the ctest
// run sets -malloc_limit_mb). Accepted programs must round-trip:
// read(write(p)) == mergeIdenticalImages(p) and writing is deterministic.
// The stream order of every small accepted I/O stream is a permutation.
//
// So that mutations reach the structural checks instead of stopping at the
// checksum, inputs are resealed first: the total-size field and the
// checksum are rewritten to match. The unit tests cover the checksum and
// size checks themselves.
//
//===----------------------------------------------------------------------===//

#include "Reseal.h"

#include "weft/Binary/File.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace weft::binary;

static void check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "wfb fuzzer: %s\n", what);
    std::abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> buf = reseal(data, size);
  std::string err;
  std::optional<Program> p = read(buf.data(), buf.size(), &err);
  if (!p) {
    check(!err.empty(), "rejected input without a message");
    return 0;
  }
  check(verify(*p).empty(), "accepted a program that does not verify");
  std::vector<uint8_t> bytes = write(*p);
  std::optional<Program> q = read(bytes.data(), bytes.size(), &err);
  check(q.has_value(), "cannot read back what was written");
  Program merged = *p;
  mergeIdenticalImages(merged);
  check(*q == merged, "read(write(p)) differs from p");
  check(write(*q) == bytes, "writer is not deterministic");
  for (const IoStream &s : p->io) {
    if (s.numElements() > 4096)
      continue;
    std::vector<uint64_t> order = s.streamOrder();
    std::vector<bool> seen(order.size(), false);
    for (uint64_t i : order) {
      check(i < order.size() && !seen[i], "stream order is no permutation");
      seen[i] = true;
    }
  }
  return 0;
}
