//===- WfbSimFuzzer.cpp - libFuzzer target for the simulator ----------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Built with clang++ -fsanitize=fuzzer,address,undefined (test/fuzz/
// CMakeLists.txt). Every input the .wfb reader accepts is simulated on a
// small budget in the reference mode and in the fast mode on one and two
// threads: a program from an untrusted binary may fail, deadlock or run out
// of cycles, but must never crash, trip a sanitizer or hang, and the fast
// mode must end exactly as the reference mode does (status, cycle, message,
// outputs; docs/simulator.md, "Fast mode"). Inputs are resealed (Reseal.h) as in
// WfbReadFuzzer.cpp so that mutations reach the program.
//
//===----------------------------------------------------------------------===//

#include "Reseal.h"

#include "weft/Binary/File.h"
#include "weft/Sim/Simulator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace weft;
using namespace weft::binary;

namespace {

void check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "wfb sim fuzzer: %s\n", what);
    std::abort();
  }
}

/// What a run ends with; the figures the modes must agree on.
struct End {
  bool created = false;
  sim::Status status = sim::Status::Running;
  uint64_t cycle = 0;
  std::string message;
  std::vector<std::vector<uint8_t>> outputs;
};

End simulate(const Program &p, sim::Mode mode, unsigned threads,
             const std::vector<std::pair<std::string, std::vector<uint8_t>>>
                 &inputs) {
  sim::Options o;
  o.mode = mode;
  o.threads = threads;
  o.maxCycles = 4000;
  End e;
  std::string err;
  std::unique_ptr<sim::Simulator> s = sim::Simulator::create(p, o, &err);
  if (!s) {
    check(!err.empty(), "refused a program without a message");
    return e;
  }
  e.created = true;
  for (const auto &[name, bytes] : inputs)
    check(s->bindInput(name, bytes, &err), "cannot bind a declared input");
  e.status = s->run();
  check(e.status != sim::Status::Running, "an unbounded run did not end");
  e.cycle = s->cycle();
  e.message = s->message();
  for (const IoStream &io : p.io)
    if (io.output)
      e.outputs.push_back(s->output(io.name));
  return e;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> buf = reseal(data, size);
  std::string err;
  std::optional<Program> p = read(buf.data(), buf.size(), &err);
  if (!p)
    return 0;
  // Small fabrics and host tensors: a run costs PEs x cycles, and the host
  // keeps every tensor whole (the simulator refuses more than 4 GiB;
  // SimScale.HostTensorsTooLargeAreRefused).
  if (uint64_t(p->target.width) * p->target.height > 1024)
    return 0;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> inputs;
  uint64_t bytes = 0;
  for (const IoStream &io : p->io) {
    if (io.numElements() > (1u << 16))
      return 0;
    uint64_t n = io.numBytes();
    bytes += n;
    if (io.output)
      continue;
    // Values of moderate magnitude, some zero (sparse inputs skip them).
    std::vector<uint8_t> v(n);
    for (uint64_t i = 0; i < v.size(); ++i)
      v[i] = uint8_t(i % 7 == 0 ? 0 : 0x3c + (i % 3));
    inputs.emplace_back(io.name, std::move(v));
  }
  if (bytes > (1u << 20))
    return 0;
  End ref = simulate(*p, sim::Mode::Reference, 1, inputs);
  for (unsigned threads : {1u, 2u}) {
    End fast = simulate(*p, sim::Mode::Fast, threads, inputs);
    check(fast.created == ref.created, "the modes differ in loading");
    check(fast.status == ref.status, "the modes end in different states");
    check(fast.cycle == ref.cycle, "the modes end in different cycles");
    check(fast.message == ref.message, "the modes end with other messages");
    check(fast.outputs == ref.outputs, "the modes give other outputs");
  }
  return 0;
}
