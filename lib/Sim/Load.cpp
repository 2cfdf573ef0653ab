//===- Load.cpp - Loading a program's images ------------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// What the engine's load (Simulator.cpp) derives from the program's images
// alone: decode caches, queue layouts and the size of the PEs' state.
//
//===----------------------------------------------------------------------===//

#include "Load.h"

#include "weft/Machine/Wavelet.h"

#include <algorithm>

#include <unistd.h>

using namespace weft::machine;

namespace weft::sim::detail {

std::vector<DecodeCache> decodeImages(const binary::Program &prog,
                                      const Target &target) {
  std::vector<DecodeCache> caches(prog.images.size());
  for (size_t i = 0; i < prog.images.size(); ++i) {
    DecodeCache &c = caches[i];
    c.insts.assign(target.memorySlots(), Instruction());
    c.status.assign(target.memorySlots(), DecodeCache::Uncached);
    for (const binary::Segment &s : prog.images[i].segments) {
      uint32_t first = (s.address + 1) / 2;
      uint32_t end = uint32_t((s.address + s.words.size()) / 2);
      for (uint32_t slot = first; slot < end; ++slot) {
        uint32_t lo = s.words[2 * slot - s.address];
        uint32_t hi = s.words[2 * slot + 1 - s.address];
        std::optional<Instruction> d;
        if (!(hi & 0xfff0u))
          d = Instruction::decode(lo | (hi << 16));
        c.status[slot] = d ? DecodeCache::Valid : DecodeCache::Invalid;
        if (d)
          c.insts[slot] = *d;
      }
    }
    c.cachedBefore.assign(c.status.size() + 1, 0);
    for (size_t slot = 0; slot < c.status.size(); ++slot)
      c.cachedBefore[slot + 1] =
          c.cachedBefore[slot] + (c.status[slot] != DecodeCache::Uncached);
  }
  return caches;
}

std::vector<QueueLayout> planQueues(const binary::Program &prog,
                                    const FabricConfig &cfg) {
  std::vector<QueueLayout> layouts(prog.images.size());
  for (size_t i = 0; i < prog.images.size(); ++i) {
    QueueLayout &l = layouts[i];
    std::fill(std::begin(l.rqSlot), std::end(l.rqSlot), Pe::kNoSlot);
    std::fill(std::begin(l.cqSlot), std::end(l.cqSlot), Pe::kNoSlot);
    unsigned nr = 0, nc = 0;
    for (const binary::Route &r : prog.images[i].routes) {
      if (r.color >= cfg.colors)
        continue;
      for (unsigned port = 0; port < 5; ++port)
        if (r.inputs & (1u << port))
          l.rqSlot[cfg.rqIndex(port, r.color)] = uint8_t(nr++);
      if (r.outputs & (1u << unsigned(Dir::Ramp)))
        l.cqSlot[r.color] = uint8_t(nc++);
    }
    l.rqWords = size_t(nr) * cfg.rqDepth;
    l.words = l.rqWords + size_t(nc) * cfg.cqDepth;
  }
  return layouts;
}

size_t countPes(const binary::Program &prog) {
  size_t count = 0;
  for (const binary::Group &g : prog.groups)
    count += size_t(g.width) * g.height;
  return count;
}

std::string checkStateFits(size_t count) {
  double need = double(count) * sizeof(Pe);
  double have = double(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  if (have > 0 && need > have)
    return "the program places code on " + std::to_string(count) +
           " PEs, whose state needs " +
           std::to_string(uint64_t(need / double(1 << 30))) +
           " GiB; this machine has " +
           std::to_string(uint64_t(have / double(1 << 30))) + " GiB";
  return {};
}

uint64_t initialisedWords(const binary::Program &prog) {
  uint64_t initWords = 0;
  for (const binary::Group &g : prog.groups) {
    uint64_t perPe = 0;
    for (const binary::Segment &sg : prog.images[g.image].segments)
      perPe += sg.words.size();
    for (const binary::PerPeSegment &sg : g.perPe)
      perPe += sg.wordsPerPE;
    initWords += perPe * g.width * g.height;
  }
  return initWords;
}

} // namespace weft::sim::detail
