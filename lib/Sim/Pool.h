//===- Pool.h - The simulator's fork/join pool (internal) -------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_LIB_SIM_POOL_H
#define WEFT_LIB_SIM_POOL_H

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace weft::sim::detail {

/// A spinning fork/join pool: run(fn) calls fn(t) for t in [0, threads) and
/// returns when all are done; the caller is thread 0. Inside run(), every
/// thread may call barrier(), which returns when all have called it.
class Pool {
public:
  explicit Pool(unsigned n) : n(n) {
    for (unsigned t = 1; t < n; ++t)
      workers.emplace_back([this, t] { loop(t); });
  }
  ~Pool() {
    stop.store(true);
    generation.fetch_add(1);
    for (std::thread &w : workers)
      w.join();
  }
  unsigned size() const { return n; }
  template <typename F> void run(F &&f) {
    job = [&f](unsigned t) { f(t); };
    pending.store(n - 1);
    generation.fetch_add(1, std::memory_order_release);
    f(0);
    // Spin briefly, then yield: on a loaded machine a spinning waiter
    // would steal the core its worker needs.
    for (unsigned spins = 0; pending.load(std::memory_order_acquire);)
      if (++spins > 64)
        std::this_thread::yield();
      else
        spin();
  }

  /// Waits for every thread of the running job (sense-reversing: the last
  /// to arrive opens the next phase).
  void barrier() {
    if (n == 1)
      return;
    uint64_t phase = barPhase.load(std::memory_order_acquire);
    if (barArrived.fetch_add(1, std::memory_order_acq_rel) == n - 1) {
      barArrived.store(0, std::memory_order_relaxed);
      barPhase.fetch_add(1, std::memory_order_release);
      return;
    }
    for (unsigned spins = 0;
         barPhase.load(std::memory_order_acquire) == phase;)
      if (++spins > 64)
        std::this_thread::yield();
      else
        spin();
  }

private:
  static void spin() {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
  void loop(unsigned t) {
    uint64_t seen = 0;
    for (;;) {
      unsigned spins = 0;
      uint64_t g;
      while ((g = generation.load(std::memory_order_acquire)) == seen) {
        if (++spins > 64)
          std::this_thread::yield();
        else
          spin();
      }
      seen = g;
      if (stop.load())
        return;
      job(t);
      pending.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
  unsigned n;
  std::vector<std::thread> workers;
  std::function<void(unsigned)> job;
  // Each on its own cache line: the threads poll one while others write
  // another.
  alignas(64) std::atomic<uint64_t> generation{0};
  alignas(64) std::atomic<unsigned> pending{0};
  alignas(64) std::atomic<unsigned> barArrived{0};
  alignas(64) std::atomic<uint64_t> barPhase{0};
  alignas(64) std::atomic<bool> stop{false};
};

} // namespace weft::sim::detail

#endif // WEFT_LIB_SIM_POOL_H
