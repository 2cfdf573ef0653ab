//===- LocalExchange.cpp - BandExchange between threads -------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Every collective is one barrier. Each rank writes its slot, waits for the
// others, and reads theirs. Slots are double-buffered by the parity of the
// collective's number: a rank writes the slots of collective k + 2 only
// after every rank has reached the barrier of k + 1, so after every rank
// has read what it needed of k.
//
//===----------------------------------------------------------------------===//

#include "weft/Sim/LocalExchange.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <thread>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace weft::sim {

namespace {

struct alignas(64) Slot {
  std::vector<uint64_t> north, south, values;
  std::vector<uint8_t> part;
};

/// Waits while the 32-bit word at `addr` holds `expected` (or until a
/// wake-up; the caller checks again).
void futexWait(std::atomic<uint32_t> &word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAIT_PRIVATE,
          expected, nullptr, nullptr, 0);
}

void futexWakeAll(std::atomic<uint32_t> &word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&word), FUTEX_WAKE_PRIVATE,
          INT_MAX, nullptr, nullptr, 0);
}

static_assert(sizeof(std::atomic<uint32_t>) == 4, "a futex word is 32 bits");

/// The ranks' meeting point.
struct Hub {
  explicit Hub(unsigned n) : n(n) {
    for (auto &s : slots)
      s.resize(n);
    // With no more ranks than cores, a waiter spins: the last rank is
    // running and arrives within the cycle's phase. With more, the last
    // rank may wait for the waiter's core, so waiters give it up at once.
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    spins = n <= cores ? kSpins : 0;
    yields = n <= cores ? kYields : 1;
  }
  /// Sense-reversing: the last to arrive opens the next phase. A waiter
  /// spins, then yields, then sleeps on a futex (a machine with fewer free
  /// cores than ranks slows down instead of stalling).
  void barrier() {
    uint32_t phase = barPhase.load(std::memory_order_acquire);
    if (arrived.fetch_add(1, std::memory_order_acq_rel) == n - 1) {
      arrived.store(0, std::memory_order_relaxed);
      barPhase.fetch_add(1); // sequentially consistent with `sleepers`
      if (sleepers.load())
        futexWakeAll(barPhase);
      return;
    }
    for (unsigned k = 0; k < spins; ++k) {
      if (barPhase.load(std::memory_order_acquire) != phase)
        return;
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
    for (unsigned k = 0; k < yields; ++k) {
      if (barPhase.load(std::memory_order_acquire) != phase)
        return;
      std::this_thread::yield();
    }
    sleepers.fetch_add(1);
    while (barPhase.load() == phase)
      futexWait(barPhase, phase);
    sleepers.fetch_sub(1);
  }
  /// Pauses a waiter spins before it yields, and yields before it sleeps.
  /// On the 4096-4096-4096-1000 MLP on two threads (docs/performance.md)
  /// 1,024 spins beat 256 and 4,096: 2.19 s against 2.52 and 2.53 s,
  /// medians of four alternating rounds.
  static constexpr unsigned kSpins = 1024, kYields = 16;
  unsigned spins, yields;
  unsigned n;
  std::vector<Slot> slots[2];
  alignas(64) std::atomic<unsigned> arrived{0};
  alignas(64) std::atomic<uint32_t> barPhase{0};
  alignas(64) std::atomic<unsigned> sleepers{0};
};

class LocalExchange final : public BandExchange {
public:
  LocalExchange(std::shared_ptr<Hub> hub, unsigned rank)
      : hub(std::move(hub)), r(rank) {}
  unsigned rank() const override { return r; }
  unsigned size() const override { return hub->n; }

  void swapEdges(const std::vector<uint64_t> &toNorth,
                 const std::vector<uint64_t> &toSouth,
                 std::vector<uint64_t> &fromNorth,
                 std::vector<uint64_t> &fromSouth, size_t) override {
    std::vector<Slot> &s = next();
    s[r].north = toNorth;
    s[r].south = toSouth;
    hub->barrier();
    if (r > 0)
      fromNorth = s[r - 1].south;
    else
      fromNorth.clear();
    if (r + 1 < hub->n)
      fromSouth = s[r + 1].north;
    else
      fromSouth.clear();
    edgeMessages += (r > 0) + (r + 1 < hub->n);
  }

  void allMin(uint64_t *values, size_t n) override {
    std::vector<Slot> &s = next();
    s[r].values.assign(values, values + n);
    hub->barrier();
    for (unsigned k = 0; k < hub->n; ++k)
      if (k != r)
        for (size_t i = 0; i < n; ++i)
          values[i] = std::min(values[i], s[k].values[i]);
  }

  std::vector<std::vector<uint8_t>>
  gather(const std::vector<uint8_t> &mine) override {
    std::vector<Slot> &s = next();
    s[r].part = mine;
    hub->barrier();
    std::vector<std::vector<uint8_t>> all;
    if (r == 0)
      for (Slot &slot : s)
        all.push_back(std::move(slot.part));
    return all;
  }

private:
  /// The slots of the next collective.
  std::vector<Slot> &next() { return hub->slots[count++ & 1]; }

  std::shared_ptr<Hub> hub;
  unsigned r;
  uint64_t count = 0;
};

} // namespace

std::vector<std::unique_ptr<BandExchange>> createLocalExchanges(unsigned n) {
  auto hub = std::make_shared<Hub>(std::max(1u, n));
  std::vector<std::unique_ptr<BandExchange>> out;
  for (unsigned k = 0; k < hub->n; ++k)
    out.push_back(std::make_unique<LocalExchange>(hub, k));
  return out;
}

} // namespace weft::sim
