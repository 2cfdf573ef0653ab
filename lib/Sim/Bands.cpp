//===- Bands.cpp - The fast mode's threads, one band of rows each ---------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// With Options::threads = n > 1 the fast mode runs the fabric as n bands of
// rows, each an engine of its own on its own thread, exactly as n ranks of a
// distributed run do (lib/Sim/Band.cpp), exchanging through shared memory
// (include/weft/Sim/LocalExchange.h) instead of MPI. A band's engine holds
// only its PEs, their stamps, lists and timers, so the threads share no PE
// state: each cycle they meet three times (the edge exchange and two
// reductions), and between the meetings each runs alone on its core
// (docs/simulator.md, "Threads"). The program is shared read only; rank 0
// gathers the results when the run ends (or when a caller asks between
// slices), so the bands give the single-process run's outputs, cycles and
// statistics.
//
//===----------------------------------------------------------------------===//

#include "Engine.h"

#include "weft/Sim/LocalExchange.h"

#include <algorithm>
#include <mutex>
#include <thread>

namespace weft::sim::detail {

namespace {

class BandThreads final : public Simulator {
public:
  BandThreads(std::vector<std::unique_ptr<BandExchange>> exchanges,
              std::vector<std::unique_ptr<Engine>> engines)
      : exchanges(std::move(exchanges)), engines(std::move(engines)) {}

  bool bindInput(const std::string &name, const std::vector<uint8_t> &bytes,
                 std::string *error) override {
    for (auto &e : engines)
      if (!e->bindInput(name, bytes, error))
        return false;
    return true;
  }

  /// Every band runs the same cycles (they stop together: the reductions
  /// give every band the same answers), band 0 on the calling thread.
  Status run(uint64_t cycles) override {
    std::vector<std::thread> others;
    for (size_t k = 1; k < engines.size(); ++k)
      others.emplace_back([this, k, cycles] { engines[k]->run(cycles); });
    Status s = engines[0]->run(cycles);
    for (std::thread &t : others)
      t.join();
    return s;
  }

  Status status() const override { return engines[0]->status(); }
  const std::string &message() const override { return engines[0]->message(); }
  uint64_t cycle() const override { return engines[0]->cycle(); }
  std::vector<uint8_t> output(const std::string &name) const override {
    gather();
    return engines[0]->output(name);
  }
  const binary::Program &program() const override {
    return engines[0]->program();
  }

  bool readMemory(uint32_t x, uint32_t y, uint32_t address, uint32_t count,
                  std::vector<uint16_t> &words,
                  std::string *error) const override {
    for (const auto &e : engines)
      if (e->hasRow(y))
        return e->readMemory(x, y, address, count, words, error);
    if (error)
      *error = "PE (" + std::to_string(x) + ", " + std::to_string(y) +
               ") runs no program";
    return false;
  }

  /// The whole fabric's, after the run or a slice of it (band 0 gathers
  /// them when the run ends, or when asked between slices).
  Stats stats() const override {
    gather();
    return engines[0]->stats();
  }
  std::string statsJson() const override {
    gather();
    return engines[0]->statsJson();
  }
  std::string traceJson() const override {
    gather();
    return engines[0]->traceJson();
  }

private:
  /// Between slices of a run, the bands' results gathered to band 0 (a
  /// collective of every band, each on its thread); once per slice.
  void gather() const {
    // (Two callers at once would bring twice the bands to the barrier.)
    std::lock_guard<std::mutex> lock(gathering);
    if (engines[0]->isGathered())
      return;
    std::vector<std::thread> others;
    for (size_t k = 1; k < engines.size(); ++k)
      others.emplace_back([this, k] { engines[k]->gatherNow(); });
    engines[0]->gatherNow();
    for (std::thread &t : others)
      t.join();
  }

  // Declared first: the engines use the exchanges until they are destroyed.
  std::vector<std::unique_ptr<BandExchange>> exchanges;
  std::vector<std::unique_ptr<Engine>> engines;
  mutable std::mutex gathering;
};

} // namespace

std::unique_ptr<Simulator>
createBandThreads(std::shared_ptr<const binary::Program> program,
                  const Options &options, const Target &target,
                  unsigned bands, std::string *error) {
  std::vector<std::unique_ptr<BandExchange>> exchanges =
      createLocalExchanges(bands);
  std::vector<std::unique_ptr<Engine>> engines(bands);
  std::vector<std::string> errors(bands);
  std::vector<uint8_t> noMemory(bands, 0);
  // The bands load in parallel: each decodes the program for its rows.
  auto load = [&](unsigned k) {
    Options o = options;
    o.threads = 1;
    o.exchange = exchanges[k].get();
    try {
      auto e = std::make_unique<Engine>(program, o, target);
      if (e->load(&errors[k]))
        engines[k] = std::move(e);
    } catch (const std::bad_alloc &) {
      noMemory[k] = 1;
    }
  };
  {
    std::vector<std::thread> others;
    for (unsigned k = 1; k < bands; ++k)
      others.emplace_back(load, k);
    load(0);
    for (std::thread &t : others)
      t.join();
  }
  for (unsigned k = 0; k < bands; ++k) {
    if (engines[k])
      continue;
    if (noMemory[k])
      throw std::bad_alloc();
    if (error)
      *error = errors[k];
    return nullptr;
  }
  return std::make_unique<BandThreads>(std::move(exchanges),
                                       std::move(engines));
}

} // namespace weft::sim::detail
