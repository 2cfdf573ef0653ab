//===- Simulator.cpp - Loading, host I/O and the cycle loop ---------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The engine owns the PEs (allocated only where a group places code), the
// host ports and the cycle loop. Both modes run the same PE step:
//
//  reference  steps and commits every PE every cycle, on one thread;
//  fast       steps only PEs that made progress in the previous cycle or
//             were woken (a wavelet arrived, or a downstream queue freed a
//             slot), on Options::threads threads. A PE that made no
//             progress and was not woken would make none again: its step
//             reads only its own state and its neighbours' queue counts,
//             and those changes wake it. So both modes compute the same.
//
//===----------------------------------------------------------------------===//

#include "Engine.h"

#include "weft/Binary/Binary.h"
#include "weft/Machine/Energy.h"
#include "weft/Machine/Numerics.h"
#include "weft/Machine/Sliced.h"
#include "weft/Machine/Wavelet.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <sstream>
#include <thread>
#include <unordered_map>

#include <sys/mman.h>
#include <unistd.h>

using namespace weft::machine;
using namespace weft::sim::detail;

namespace weft::sim {

const char *statusName(Status s) {
  switch (s) {
  case Status::Running:
    return "running";
  case Status::Done:
    return "done";
  case Status::Deadlock:
    return "deadlock";
  case Status::CycleLimit:
    return "cycle-limit";
  case Status::Error:
    return "error";
  }
  return "?";
}

Simulator::~Simulator() = default;

/// Non-zero lanes standing for each class of sliced reads.
static constexpr unsigned kSlicedClassLanes[3] = {0, 1, machine::kSlicedLanes};

uint64_t PeStats::memoryEnergyFj() const {
  uint64_t e = 0;
  for (unsigned w = 0; w < 2; ++w) {
    e += memoryReads[w] * readEnergyFj(2 * (w + 1)) +
         memoryWrites[w] * writeEnergyFj(2 * (w + 1));
    machine::SlicedWord word = machine::SlicedLayout{0, w + 1}.word();
    for (unsigned c = 0; c < 3; ++c)
      e += slicedReads[w][c] *
           machine::slicedReadEnergyFj(word, kSlicedClassLanes[c]);
  }
  return e;
}

uint64_t PeStats::memoryReadBytes() const {
  uint64_t bytes = 2 * memoryReads[0] + 4 * memoryReads[1];
  for (unsigned w = 0; w < 2; ++w) {
    machine::SlicedWord word = machine::SlicedLayout{0, w + 1}.word();
    bytes += (slicedReads[w][0] + slicedReads[w][1] + slicedReads[w][2]) *
                 word.maskBytes() +
             (slicedReads[w][1] + slicedReads[w][2]) * word.slice1Bytes() +
             slicedReads[w][2] * word.slice2Bytes();
  }
  return bytes;
}

namespace detail {

void addMemoryAccesses(Stats &s, const PeStats &p) {
  s.memoryReads += p.memoryReadCount();
  s.memoryWrites += p.memoryWriteCount();
  s.memoryReadBytes += p.memoryReadBytes();
  s.memoryWriteBytes += p.memoryWriteBytes();
  s.memoryEnergyFj += p.memoryEnergyFj();
  s.memorySlicedReads += p.slicedReadCount();
  s.memorySlicedZeroReads += p.slicedReads[0][0] + p.slicedReads[1][0];
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

bool Engine::load(std::string *error) {
  std::string why;
  if (!loadProgram(why)) {
    if (error)
      *error = why;
    return false;
  }
  return true;
}

bool Engine::loadProgram(std::string &why) {
  configure();
  if (opts.samples == 0)
    return loadError(why, "the number of samples must be at least 1");
  caches = decodeImages(prog, target);
  size_t count = countPes(prog);
  if (count > UINT32_MAX / 2)
    return loadError(why, "the program places code on " + std::to_string(count) +
                         " PEs; the simulator handles at most " +
                         std::to_string(UINT32_MAX / 2));
  if (distributed() && !planBand(why))
    return false;
  // The PEs this process holds: those of its band and, in a distributed
  // run, the ghosts just outside it (all of them otherwise).
  std::vector<QueueLayout> layouts = planQueues(prog, cfg);
  size_t local = 0, held = 0, queueWords = 0;
  for (const binary::Group &g : prog.groups)
    for (uint32_t gy = 0; gy < g.height; ++gy) {
      uint64_t y = uint64_t(g.y) + gy;
      if (y + 1 < bandBegin || y > bandEnd)
        continue;
      local += inBand(y) ? g.width : 0;
      held += g.width;
      queueWords += layouts[g.image].words * g.width;
    }
  count = held;
  ghostBase = uint32_t(local);
  if (std::string e = checkStateFits(count); !e.empty())
    return loadError(why, e);
  if (!reserveMemories(count, why))
    return false;
  allocateArena(count);
  queueStore.assign(queueWords, 0);
  // PEs by position, only those a group covers: nothing here is dense in
  // the fabric's size.
  PeGrid grid;
  if (!placePes(count, layouts, grid, why))
    return false;
  linkNeighbours(grid);
  if (distributed())
    linkGhosts();
  if (!openStreams(grid, why))
    return false;
  sampleDone.assign(opts.samples, 0);
  initSchedule();
  return true;
}

/// The fabric-wide constants every step reads.
void Engine::configure() {
  cfg.target = &target;
  cfg.colors = target.routableColors();
  cfg.rqDepth = target.config().routerQueueDepth;
  cfg.cqDepth = target.config().ceQueueDepth;
  cfg.memWords = target.memoryWords();
  cfg.descWords = target.descriptorWords();
  cfg.trace = opts.trace;
  cfg.batch = opts.mode == Mode::Fast;
}

/// PE memories: one reservation the OS commits page by page as they are
/// written, so unwritten memory takes address space but no RAM.
bool Engine::reserveMemories(size_t count, std::string &why) {
  memStride = (size_t(cfg.memWords) * 2 + 4095) & ~size_t(4095);
  memBytes = memStride * count;
  if (!count)
    return true;
  void *m = mmap(nullptr, memBytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) {
    std::string e = "cannot reserve " + std::to_string(memBytes >> 20) +
                    " MiB of address space for the memories of " +
                    std::to_string(count) + " PEs";
    memBytes = 0;
    return loadError(why, e);
  }
  memBase = static_cast<uint16_t *>(m);
  // Programs that initialise a quarter of every PE's memory or more (the
  // weights of a dense layer) get huge pages: their instructions stream
  // through memory all over the reservation, and small pages would cost
  // a TLB miss per vector. Sparse programs keep small pages, which are
  // committed one by one as they are written.
  uint64_t initWords = initialisedWords(prog);
#ifdef MADV_HUGEPAGE
  if (initWords * 4 >= uint64_t(count) * cfg.memWords)
    madvise(m, memBytes, MADV_HUGEPAGE);
#else
  (void)initWords;
#endif
  return true;
}

/// The PEs' fixed state, contiguous, on huge pages where the OS gives them.
void Engine::allocateArena(size_t count) {
  arenaBytes = (count * sizeof(Pe) + (size_t(2) << 20) - 1) &
               ~((size_t(2) << 20) - 1);
  if (!count)
    return;
  void *a = mmap(nullptr, arenaBytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (a == MAP_FAILED) {
    arenaBytes = 0;
    throw std::bad_alloc();
  }
#ifdef MADV_HUGEPAGE
  madvise(a, arenaBytes, MADV_HUGEPAGE);
#endif
  arena = static_cast<Pe *>(a);
  for (; arenaCount < count; ++arenaCount)
    new (arena + arenaCount) Pe();
}

/// Builds the PEs of every group, in group order.
bool Engine::placePes(size_t count, const std::vector<QueueLayout> &layouts,
                      PeGrid &grid, std::string &why) {
  grid.reserve(count);
  pes.reserve(ghostBase);
  size_t queueAt = 0;
  uint32_t global = 0;
  for (const binary::Group &g : prog.groups) {
    const QueueLayout &layout = layouts[g.image];
    for (uint32_t gy = 0; gy < g.height; ++gy) {
      uint64_t y = uint64_t(g.y) + gy;
      if (y + 1 < bandBegin || y > bandEnd) {
        global += g.width;
        continue;
      }
      bool ghost = !inBand(y);
      for (uint32_t gx = 0; gx < g.width; ++gx, ++global) {
        size_t at = ghost ? ghostBase + ghosts.size() : pes.size();
        Pe &p = arena[at];
        p.index = uint32_t(at);
        if (!initPe(p, g, gx, gy, layout, queueAt, ghost, why))
          return false;
        queueAt += layout.words;
        grid[(uint64_t(p.y) << 32) | p.x] = &p;
        if (ghost) {
          ghosts.push_back(&p);
          continue;
        }
        pes.push_back(&p);
        if (distributed())
          globalIndex.push_back(global);
      }
    }
  }
  return true;
}

/// The PE at (gx, gy) of group `g`: its routes, queues, memory, registers
/// and task state. Fails when a route leaves the fabric.
bool Engine::initPe(Pe &p, const binary::Group &g, uint32_t gx, uint32_t gy,
                    const QueueLayout &layout, size_t queueAt, bool ghost,
                    std::string &why) {
  const binary::CodeImage &img = prog.images[g.image];
  p.x = g.x + gx;
  p.y = g.y + gy;
  p.layer = g.layer;
  for (const binary::Route &r : img.routes) {
    for (unsigned d = 0; d < 4; ++d)
      if (((r.inputs | r.outputs) & (1u << d)) &&
          !target.hasLink(p.x, p.y, Dir(d)))
        return loadError(why, "PE (" + std::to_string(p.x) + ", " +
                             std::to_string(p.y) + ") routes color " +
                             std::to_string(r.color) + " through " +
                             dirName(Dir(d)) + ", where it has no link");
    p.route[r.color] = {r.inputs, r.outputs, 0};
  }
  loadPositions(p, img);
  std::copy(std::begin(layout.rqSlot), std::end(layout.rqSlot), p.rqSlot);
  std::copy(std::begin(layout.cqSlot), std::end(layout.cqSlot), p.cqSlot);
  // The PE's block: its router queues, then its CE queues.
  p.rqData = queueStore.data() + queueAt;
  p.cqData = p.rqData + layout.rqWords;
  p.mem = memBase + memStride / 2 * p.index;
  // A ghost stands in for a PE of another rank: only its router queue
  // counts are read (the credit check of the PE beside it).
  if (ghost)
    return true;
  uint32_t used = 0;
  // Copy only non-zero runs: the reservation reads as zero, and a page
  // never written takes no memory.
  auto put = [&](uint32_t address, const uint16_t *words, size_t n) {
    for (size_t i = 0; i < n; ++i)
      if (words[i])
        p.mem[address + i] = words[i];
  };
  uint32_t high = 0;
  for (const binary::Segment &s : img.segments) {
    put(s.address, s.words.data(), s.words.size());
    used += uint32_t(s.words.size());
    high = std::max(high, uint32_t(s.address + s.words.size()));
  }
  for (const binary::PerPeSegment &s : g.perPe) {
    size_t off = (size_t(gy) * g.width + gx) * s.wordsPerPE;
    put(s.address, s.words.data() + off, s.wordsPerPE);
    used += s.wordsPerPE;
    high = std::max(high, uint32_t(s.address + s.wordsPerPE));
  }
  p.st.memoryWordsUsed = used;
  p.st.memoryHighWater = high;
  for (const binary::Param &pr : g.params)
    p.gpr[pr.gpr] = pr.valueAt(gx, gy);
  p.active = img.active;
  p.blocked = img.blocked;
  p.cache = &caches[g.image];
  uint32_t seed = 0x9E3779B9u ^ ((p.x << 16) | p.y);
  p.prng = seed ? seed : 1;
  p.rrPointer = cfg.colors * 5 - 1;
  p.st.x = p.x;
  p.st.y = p.y;
  p.st.layer = g.layer;
  return true;
}

/// The PE's positioned routes (§4.4) start in their first position with
/// its full count. A ghost gets them too, though it never forwards.
void Engine::loadPositions(Pe &p, const binary::CodeImage &img) {
  unsigned n = 0;
  for (const binary::Route &r : img.routes)
    n += !r.positions.empty();
  if (!n)
    return;
  p.positions = std::make_unique<PositionState[]>(n);
  unsigned k = 0;
  for (const binary::Route &r : img.routes) {
    if (r.positions.empty())
      continue;
    PositionState &s = p.positions[k];
    s.positions = r.positions.data();
    s.numPositions = uint8_t(r.positions.size());
    s.enter(0);
    p.route[r.color].position = uint8_t(++k);
  }
}

/// Each PE's neighbours (null where no PE runs) and host-port links.
void Engine::linkNeighbours(const PeGrid &grid) {
  unsigned w = target.width(), h = target.height();
  for (auto &pe : pes) {
    Pe &p = *pe;
    if (p.y > 0)
      p.neighbour[0] = grid.at(p.x, p.y - 1);
    if (p.x + 1 < w)
      p.neighbour[1] = grid.at(p.x + 1, p.y);
    if (p.y + 1 < h)
      p.neighbour[2] = grid.at(p.x, p.y + 1);
    if (p.x > 0)
      p.neighbour[3] = grid.at(p.x - 1, p.y);
    for (unsigned d = 0; d < 4; ++d)
      if (target.isHostPort(p.x, p.y, Dir(d)))
        p.hostPorts |= uint8_t(1u << d);
  }
}

/// Host ports and streams (§5): each stream's rows, the host ports that
/// inject inputs, and the ports outputs arrive on.
bool Engine::openStreams(const PeGrid &grid, std::string &why) {
  unsigned w = target.width();
  std::map<std::pair<unsigned, unsigned>, unsigned> portIndex;
  streams.resize(prog.io.size());
  for (unsigned i = 0; i < prog.io.size(); ++i) {
    const binary::IoStream &io = prog.io[i];
    StreamState &s = streams[i];
    s.io = &io;
    uint64_t n = io.numElements();
    uint64_t rows = io.endRow - io.firstRow;
    s.chunk = (n + rows - 1) / rows;
    s.rows.resize(rows);
    unsigned x = io.edge == Dir::West ? 0 : w - 1;
    for (uint64_t r = 0; r < rows; ++r) {
      unsigned y = unsigned(io.firstRow + r);
      // A distributed run holds only its band's PEs; the others' ports
      // are served by their ranks.
      Pe *pe = inBand(y) ? grid.at(x, y) : nullptr;
      bool programmed = pe || (!inBand(y) && isProgrammed(x, y));
      uint64_t begin = std::min(n, r * s.chunk);
      uint64_t len = std::min(n, begin + s.chunk) - begin;
      if (len && !programmed)
        return loadError(why, std::string(io.output ? "output" : "input") + " '" +
                             io.name + "' uses the " + dirName(io.edge) +
                             " host port of row " + std::to_string(y) +
                             ", but PE (" + std::to_string(x) + ", " +
                             std::to_string(y) + ") runs no program");
      uint64_t wavelets = io.format == PayloadFormat::Dense16x2
                              ? (len + 1) / 2
                              : len;
      if (io.output) {
        s.rows[r].expected = wavelets;
        auto key = std::make_tuple(unsigned(io.edge), y, unsigned(io.color));
        if (len && !outputByPort.emplace(key, i).second)
          return loadError(why, "outputs '" + prog.io[outputByPort[key]].name +
                               "' and '" + io.name + "' both arrive on the " +
                               dirName(io.edge) + " port of row " +
                               std::to_string(y) + " with color " +
                               std::to_string(io.color));
      } else if (len && pe) {
        auto key = std::make_pair(unsigned(io.edge), y);
        auto it = portIndex.find(key);
        if (it == portIndex.end()) {
          it = portIndex.emplace(key, unsigned(hostPorts.size())).first;
          HostPort hp;
          hp.pe = pe;
          hp.dir = unsigned(io.edge);
          hostPorts.push_back(hp);
        }
        hostPorts[it->second].streams.push_back(i);
      }
    }
    s.bound = io.output;
  }
  return true;
}

/// The fast mode's scheduling state: every PE is stepped in the first
/// cycle.
void Engine::initSchedule() {
  commitStamp.assign(pes.size(), 0);
  nextStamp.assign(pes.size(), 0);
  eventStamp.assign(pes.size(), 0);
  wheel.assign(kWheel, {});
  current.clear();
  for (auto &pe : pes)
    current.push_back(pe->index);
}

void Engine::packInput(StreamState &s, const std::vector<uint8_t> &bytes) {
  const binary::IoStream &io = *s.io;
  unsigned esize = (io.dtype == ElemType::F32 || io.dtype == ElemType::I32)
                       ? 4
                       : 2;
  uint64_t n = io.numElements();
  // i is a stream position; the host permutes feature maps (§5.2).
  auto elem = [&](uint64_t sample, uint64_t i) {
    const uint8_t *p = bytes.data() + (sample * n + io.elementAt(i)) * esize;
    uint32_t v = 0;
    for (unsigned b = 0; b < esize; ++b)
      v |= uint32_t(p[b]) << (8 * b);
    return v;
  };
  for (uint64_t r = 0; r < s.rows.size(); ++r) {
    RowState &row = s.rows[r];
    row.payloads.clear();
    row.controls.clear();
    row.next = 0;
    uint64_t begin = std::min(n, r * s.chunk);
    uint64_t end = std::min(n, begin + s.chunk);
    for (uint64_t smp = 0; smp < opts.samples; ++smp) {
      if (io.skipZeros) {
        // A sparse input (§5.2): the non-zero elements with their position
        // in the chunk, then the chunk's closeout.
        for (uint64_t i = begin; i < end; ++i)
          if (uint32_t v = elem(smp, i) & 0xffff) {
            row.payloads.push_back(v | (uint32_t(uint16_t(i - begin)) << 16));
            row.controls.push_back(false);
          }
        row.payloads.push_back(uint32_t(io.closeout) << 16);
        row.controls.push_back(true);
        continue;
      }
      for (uint64_t i = begin; i < end;) {
        switch (io.format) {
        case PayloadFormat::Dense32:
          row.payloads.push_back(elem(smp, i));
          ++i;
          break;
        case PayloadFormat::Dense16x2: {
          uint32_t lo = elem(smp, i) & 0xffff;
          uint32_t hi = i + 1 < end ? elem(smp, i + 1) & 0xffff : 0;
          row.payloads.push_back(lo | (hi << 16));
          i += 2;
          break;
        }
        case PayloadFormat::Sparse16:
          row.payloads.push_back((elem(smp, i) & 0xffff) |
                                 (uint32_t(uint16_t(i - begin)) << 16));
          ++i;
          break;
        }
      }
    }
  }
}

bool Engine::bindInput(const std::string &name,
                       const std::vector<uint8_t> &bytes,
                       std::string *error) {
  for (StreamState &s : streams) {
    if (s.io->name != name)
      continue;
    if (s.io->output) {
      if (error)
        *error = "'" + name + "' is an output of the program, not an input";
      return false;
    }
    uint64_t want = s.io->numBytes() * opts.samples;
    if (bytes.size() != want) {
      if (error)
        *error = "input '" + name + "' needs " + std::to_string(want) +
                 " bytes (" + std::to_string(opts.samples) + " sample(s) of " +
                 std::to_string(s.io->numElements()) + " " +
                 elemTypeName(s.io->dtype) + " elements), got " +
                 std::to_string(bytes.size());
      return false;
    }
    packInput(s, bytes);
    s.bound = true;
    return true;
  }
  if (error) {
    *error = "the program has no input named '" + name + "'; its inputs are:";
    for (const StreamState &s : streams)
      if (!s.io->output)
        *error += " '" + s.io->name + "'";
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Host ports
//===----------------------------------------------------------------------===//

void Engine::injectHost(ThreadOut &out) {
  for (HostPort &hp : hostPorts) {
    Pe &pe = *hp.pe;
    if (pe.inLatch[hp.dir])
      continue;
    unsigned ns = unsigned(hp.streams.size());
    for (unsigned k = 1; k <= ns; ++k) {
      unsigned si = (hp.last + k) % ns;
      StreamState &s = streams[hp.streams[si]];
      unsigned y = pe.y;
      RowState &row = s.rows[y - s.io->firstRow];
      if (row.next >= row.payloads.size())
        continue;
      unsigned q = cfg.rqIndex(hp.dir, s.io->color);
      if (pe.rqCount[q] >= cfg.rqDepth)
        continue;
      bool control = !row.controls.empty() && row.controls[row.next];
      uint32_t payload = row.payloads[row.next++];
      pe.inLatch[hp.dir] =
          Wavelet{s.io->color, control, payload}.encode() | kLatchFull;
      out.woken.push_back(pe.index);
      if (firstInjection == UINT64_MAX)
        firstInjection = now;
      ++hostIn;
      hp.last = si;
      break;
    }
  }
}

bool Engine::collectHost(ThreadOut &out) {
  bool moved = false;
  for (uint32_t idx : out.hostOut) {
    Pe &pe = *pes[idx];
    for (unsigned side = 0; side < 2; ++side) {
      uint64_t l = pe.hostLatch[side];
      if (!l)
        continue;
      pe.hostLatch[side] = 0;
      moved = true;
      if (std::string e = hostArrival(pe, side, l, true); !e.empty()) {
        fail(e);
        return moved;
      }
    }
  }
  out.hostOut.clear();
  return moved;
}

std::string Engine::hostArrival(Pe &pe, unsigned side, uint64_t latch,
                                bool apply) {
  Wavelet wv = *Wavelet::decode(latch & ~kLatchFull);
  Dir edge = side == 0 ? Dir::West : Dir::East;
  auto it = outputByPort.find(
      std::make_tuple(unsigned(edge), pe.y, unsigned(wv.color)));
  std::string where = std::string("the ") + dirName(edge) +
                      " host port of row " + std::to_string(pe.y);
  if (it == outputByPort.end())
    return "cycle " + std::to_string(now) + ": a wavelet of color " +
           std::to_string(wv.color) + " reaches " + where +
           ", where no output stream of that color leaves";
  StreamState &s = streams[it->second];
  RowState &row = s.rows[pe.y - s.io->firstRow];
  if (row.received >= row.expected * opts.samples)
    return "cycle " + std::to_string(now) + ": output '" + s.io->name +
           "' receives more than its " +
           std::to_string(row.expected * opts.samples) + " wavelets on " +
           where;
  if (!apply)
    return "";
  row.got.push_back(wv.payload);
  ++row.received;
  ++hostOut;
  lastArrival = now + 1;
  // The sample is done when every row of every output has it.
  uint64_t smp = (row.received - 1) / std::max<uint64_t>(1, row.expected);
  if (row.received % std::max<uint64_t>(1, row.expected) == 0 &&
      smp < sampleDone.size())
    sampleDone[smp] = std::max(sampleDone[smp], now + 1);
  return "";
}

/// Whether every output has all its wavelets and every input has been
/// injected completely (a program that leaves input unread is stuck too).
bool Engine::outputsComplete() const {
  for (const StreamState &s : streams)
    for (size_t y = s.io->firstRow; y < s.io->endRow; ++y) {
      if (!gathered && !inBand(y))
        continue;
      const RowState &r = s.rows[y - s.io->firstRow];
      if (s.io->output && r.received < r.expected * opts.samples)
        return false;
      if (!s.io->output && r.next < r.payloads.size())
        return false;
    }
  return true;
}

bool Engine::readMemory(uint32_t x, uint32_t y, uint32_t address,
                        uint32_t count, std::vector<uint16_t> &words,
                        std::string *error) const {
  auto fail = [&](const std::string &why) {
    if (error)
      *error = why;
    return false;
  };
  std::string pe = "PE (" + std::to_string(x) + ", " + std::to_string(y) + ")";
  if (!inBand(y))
    return fail(pe + " is not in this process's rows");
  const Pe *found = nullptr;
  for (uint32_t i = 0; i < ghostBase && i < pes.size(); ++i)
    if (pes[i]->x == x && pes[i]->y == y) {
      found = pes[i];
      break;
    }
  if (!found)
    return fail(pe + " runs no program");
  if (uint64_t(address) + count > cfg.memWords)
    return fail("words " + std::to_string(address) + " to " +
                std::to_string(uint64_t(address) + count) + " are outside " +
                pe + "'s " + std::to_string(cfg.memWords) + " words");
  words.assign(found->mem + address, found->mem + address + count);
  return true;
}

std::vector<uint8_t> Engine::output(const std::string &name) const {
  for (const StreamState &s : streams) {
    if (!s.io->output || s.io->name != name)
      continue;
    const binary::IoStream &io = *s.io;
    unsigned esize =
        (io.dtype == ElemType::F32 || io.dtype == ElemType::I32) ? 4 : 2;
    uint64_t n = io.numElements();
    std::vector<uint8_t> bytes(n * esize * opts.samples, 0);
    // i is a stream position; feature maps return in row-major order.
    auto put = [&](uint64_t smp, uint64_t i, uint32_t v) {
      uint8_t *p = bytes.data() + (smp * n + io.elementAt(i)) * esize;
      for (unsigned b = 0; b < esize; ++b)
        p[b] = uint8_t(v >> (8 * b));
    };
    for (uint64_t r = 0; r < s.rows.size(); ++r) {
      const RowState &row = s.rows[r];
      uint64_t begin = std::min(n, r * s.chunk);
      uint64_t len = std::min(n, begin + s.chunk) - begin;
      for (uint64_t k = 0; k < row.got.size(); ++k) {
        uint64_t smp = row.expected ? k / row.expected : 0;
        uint64_t j = row.expected ? k % row.expected : 0;
        uint32_t v = row.got[k];
        switch (io.format) {
        case PayloadFormat::Dense32:
          put(smp, begin + j, v);
          break;
        case PayloadFormat::Dense16x2:
          put(smp, begin + 2 * j, v & 0xffff);
          if (2 * j + 1 < len)
            put(smp, begin + 2 * j + 1, v >> 16);
          break;
        case PayloadFormat::Sparse16: {
          uint64_t at = v >> 16;
          if (at < len)
            put(smp, begin + at, v & 0xffff);
          break;
        }
        }
      }
    }
    return bytes;
  }
  return {};
}

//===----------------------------------------------------------------------===//
// The cycle loop
//===----------------------------------------------------------------------===//

/// Runs one cycle; returns false when the run has ended (status set).
bool Engine::cycleOnce() {
  bool reference = opts.mode == Mode::Reference;
  if (reference) {
    // Every PE, every cycle.
    current.resize(pes.size());
    for (size_t i = 0; i < pes.size(); ++i)
      current[i] = uint32_t(i);
  }
  if (distributed())
    return cycleBand();
  bool anyProgress = false;
  if (!decide(anyProgress) || !commit())
    return false;
  if (opts.trace)
    collectTrace();
  // A PE asleep in this cycle spent it on its batched instruction.
  anyProgress |= sleeping > 0;
  if (!reference)
    scheduleNext();
  stepOut.progressed.clear();
  stepOut.woken.clear();
  return endCycle(anyProgress, !anyProgress && outputsComplete());
}

/// The first program error of the cycle's steps in `err`; UINT32_MAX when
/// there is none.
uint32_t Engine::firstStepError(std::string &err) const {
  if (stepOut.errorPe != UINT32_MAX)
    err = stepOut.error;
  return stepOut.errorPe;
}

/// The decide phase: host ports inject, the PEs in `current` step, and
/// what reached the host ports is collected. Sets `anyProgress`; false
/// when the run has failed.
bool Engine::decide(bool &anyProgress) {
  injectHost(stepOut);
  bool hostMoved = !stepOut.woken.empty();
  stepCurrent();
  std::string err;
  if (firstStepError(err) != UINT32_MAX) {
    fail(err);
    return false;
  }
  anyProgress = steppedProgress() || hostMoved;
  anyProgress |= collectHost(stepOut);
  return st != Status::Error;
}

/// Whether any PE made progress in the cycle's steps; sorts the PEs that
/// reached a host port (each once) for collectHost.
bool Engine::steppedProgress() {
  std::vector<uint32_t> &h = stepOut.hostOut;
  std::sort(h.begin(), h.end());
  h.erase(std::unique(h.begin(), h.end()), h.end());
  return !stepOut.progressed.empty();
}

/// Moves the cycle's trace events into the run's trace (kept in a
/// canonical order at output time), up to Options::traceLimit.
void Engine::collectTrace() {
  for (const TraceEvent &e : stepOut.trace) {
    if (trace.size() >= opts.traceLimit) {
      traceTruncated = true;
      break;
    }
    trace.push_back(e);
  }
  stepOut.trace.clear();
}

/// Advances the clock; ends the run on a quiet cycle (§5.4: nothing will
/// ever change again) or at the cycle limit. False when the run has ended.
bool Engine::endCycle(bool anyProgress, bool complete) {
  if (anyProgress)
    lastProgress = now + 1;
  ++now;
  if (!anyProgress) {
    // A distributed run writes its message when the ranks' states are
    // gathered (gatherBand).
    if (complete) {
      st = Status::Done;
      now = lastProgress;
      msg = distributed() ? "" : leftoverWarning();
    } else {
      st = Status::Deadlock;
      msg = distributed() ? "" : deadlockReport();
      now = lastProgress;
    }
    return false;
  }
  if (now >= opts.maxCycles) {
    st = Status::CycleLimit;
    msg = cycleLimitMessage();
    return false;
  }
  return true;
}

/// The warning of a complete run that leaves wavelets queued (empty when
/// none are).
std::string Engine::leftoverWarning() const {
  std::ostringstream os;
  uint64_t left = leftoverCount();
  if (left)
    os << "warning: " << left
       << " wavelet(s) are still queued at the end of the run";
  return os.str();
}

/// Wavelets queued in this process's PEs.
uint64_t Engine::leftoverCount() const {
  uint64_t left = 0;
  for (auto &pe : pes)
    for (uint8_t c : pe->rqCount)
      left += c;
  for (auto &pe : pes)
    for (uint8_t c : pe->cqCount)
      left += c;
  return left;
}

/// Bytes of the PE memories the OS has committed (pages written so far).
uint64_t Engine::residentMemoryBytes() const {
  if (!memBase)
    return 0;
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  size_t n = (memBytes + page - 1) / page;
  std::vector<unsigned char> in(n);
  if (mincore(memBase, memBytes, in.data()) != 0)
    return memBytes;
  uint64_t pages = 0;
  for (unsigned char c : in)
    pages += c & 1;
  return pages * page;
}

Status Engine::run(uint64_t cycles) {
  if (st != Status::Running)
    return st;
  gathered = false;
  uint64_t end = cycles > UINT64_MAX - now ? UINT64_MAX : now + cycles;
  cfg.batchLimit = std::min(end, opts.maxCycles);
  Status s = runCycles(cycles);
  // Statistics count the cycles sleeping PEs have spent so far: up to
  // `now`, and after an error in cycle `now`, that cycle too (every PE
  // decided in it), which may retire an instruction.
  for (auto &pe : pes) {
    if (!pe->sleeping)
      continue;
    if (s == Status::Error && pe->main.busyLeft && pe->sleepFrom <= now) {
      catchUp(*pe, now + 1);
      if (!pe->main.busyLeft)
        retireBatch(*pe, cfg, now, stepOut);
    } else {
      catchUp(*pe, now);
    }
  }
  // A distributed run brings the ranks' results to rank 0 when it ends.
  if (distributed() && s != Status::Running)
    gatherBand();
  return s;
}

Status Engine::runCycles(uint64_t cycles) {
  if (!started) {
    for (const StreamState &s : streams)
      if (!s.bound) {
        fail("input '" + s.io->name + "' was not bound before the run");
        return st;
      }
    started = true;
  }
  for (uint64_t c = 0; c < cycles; ++c) {
    if (opts.mode == Mode::Fast) {
      // Skip cycles in which every PE with work is asleep: each would only
      // advance the clock (the run is not quiet while a PE sleeps).
      uint64_t limit = std::min(cycles - c, opts.maxCycles - now);
      if (uint64_t k = distributed() ? idleCyclesAheadBand(limit)
                                     : idleCyclesAhead(limit)) {
        now += k;
        lastProgress = now;
        c += k - 1;
        if (now >= opts.maxCycles) {
          st = Status::CycleLimit;
          msg = cycleLimitMessage();
          return st;
        }
        continue;
      }
    }
    if (!cycleOnce())
      return st;
  }
  return st;
}

std::string Engine::deadlockReport() const {
  std::ostringstream os;
  os << "deadlock at cycle " << lastProgress
     << ": nothing can move, but outputs are incomplete or inputs unread";
  for (const StreamState &s : streams) {
    for (size_t r = 0; r < s.rows.size(); ++r) {
      const RowState &row = s.rows[r];
      unsigned y = unsigned(s.io->firstRow + r);
      if (s.io->output && row.received < row.expected * opts.samples)
        os << "\n  output '" << s.io->name << "' row " << y << " ("
           << dirName(s.io->edge) << " port, color " << unsigned(s.io->color)
           << "): received " << row.received << " of "
           << row.expected * opts.samples << " wavelets";
      if (!s.io->output && row.next < row.payloads.size())
        os << "\n  input '" << s.io->name << "' row " << y << " ("
           << dirName(s.io->edge) << " port, color " << unsigned(s.io->color)
           << "): injected " << row.next << " of " << row.payloads.size()
           << " wavelets (queue full)";
    }
  }
  unsigned listed = 0, more = 0;
  for (const auto &[index, line] : gathered ? allStuck : stuckLines()) {
    if (listed++ < 64)
      os << "\n  " << line;
    else
      ++more;
  }
  if (more)
    os << "\n  ... and " << more << " more PEs";
  return os.str();
}

/// The hang report's line of each PE that is doing or waiting for
/// something, by (single-process) PE index.
std::vector<std::pair<uint32_t, std::string>> Engine::stuckLines() const {
  std::vector<std::pair<uint32_t, std::string>> lines;
  for (const auto &pe : pes) {
    std::string d = describeStuck(*pe, cfg);
    if (d.empty())
      continue;
    lines.emplace_back(globalOf(pe->index), "PE (" + std::to_string(pe->x) +
                                                ", " + std::to_string(pe->y) +
                                                "): " + d);
  }
  return lines;
}

//===----------------------------------------------------------------------===//
// Statistics and trace
//===----------------------------------------------------------------------===//

Stats Engine::stats() const {
  if (gathered)
    return gatheredStats;
  Stats s;
  s.cycles = now;
  s.hostWaveletsIn = hostIn;
  s.hostWaveletsOut = hostOut;
  s.firstInjection = firstInjection == UINT64_MAX ? 0 : firstInjection;
  s.lastArrival = lastArrival;
  s.sampleDone = sampleDone;
  s.peakActivePEs = opts.mode == Mode::Fast ? peakActive : pes.size();
  s.allocatedPEs = pes.size();
  s.peSteps = peSteps;
  s.stateBytes = pes.size() * sizeof(Pe) + queueStore.capacity() * 8 +
                 residentMemoryBytes();
  for (const Pe *pe : pes)
    s.stateBytes += pe->lazyStateBytes();
  for (unsigned c = 0; c < 32; ++c)
    s.hopsPerColor[c] += stepOut.hopsPerColor[c];
  for (const auto &pe : pes) {
    s.pes.push_back(pe->st);
    s.busyPeCycles += pe->st.busyCycles;
    s.instructions += pe->st.instructions;
    s.flops += pe->st.flops;
    s.macs += pe->st.macs;
    s.memoryHighWaterBytes = std::max<uint64_t>(
        s.memoryHighWaterBytes, 2 * uint64_t(pe->st.memoryHighWater));
    addMemoryAccesses(s, pe->st);
    for (unsigned d = 0; d < 5; ++d)
      s.hops += pe->st.hops[d];
  }
  return s;
}

/// Appends the decimal digits of `v`, as a stream prints the integer.
template <typename T> static void appendInt(std::string &out, T v) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof(buf), v).ptr);
}

/// Appends `fj` femtojoules as picojoules with three decimals.
static void appendPj(std::string &out, uint64_t fj) {
  appendInt(out, fj / 1000);
  char frac[4] = {char('0' + fj / 100 % 10), char('0' + fj / 10 % 10),
                  char('0' + fj % 10), 0};
  out += '.';
  out += frac;
}

std::string Engine::statsJson() const {
  Stats s = stats();
  std::ostringstream os;
  os << "{\n  \"status\": \"" << statusName(st) << "\",\n";
  // The fabric the program ran on, as `--grid` spells it: a run on a
  // non-default memory or queue depth says so in its statistics.
  os << "  \"fabric\": \"" << target.config().str() << "\",\n";
  os << "  \"cycles\": " << s.cycles << ",\n";
  os << "  \"samples\": " << opts.samples << ",\n";
  os << "  \"latency\": "
     << (s.lastArrival >= s.firstInjection ? s.lastArrival - s.firstInjection
                                           : 0)
     << ",\n";
  os << "  \"first_injection\": " << s.firstInjection << ",\n";
  os << "  \"last_arrival\": " << s.lastArrival << ",\n";
  os << "  \"sample_done\": [";
  for (size_t i = 0; i < s.sampleDone.size(); ++i)
    os << (i ? ", " : "") << s.sampleDone[i];
  os << "],\n";
  os << "  \"busy_pe_cycles\": " << s.busyPeCycles << ",\n";
  os << "  \"instructions\": " << s.instructions << ",\n";
  os << "  \"flops\": " << s.flops << ",\n";
  os << "  \"macs\": " << s.macs << ",\n";
  os << "  \"wavelet_hops\": " << s.hops << ",\n";
  os << "  \"memory_high_water_bytes\": " << s.memoryHighWaterBytes << ",\n";
  os << "  \"memory_reads\": " << s.memoryReads << ",\n";
  os << "  \"memory_writes\": " << s.memoryWrites << ",\n";
  os << "  \"memory_read_bytes\": " << s.memoryReadBytes << ",\n";
  os << "  \"memory_write_bytes\": " << s.memoryWriteBytes << ",\n";
  os << "  \"memory_sliced_reads\": " << s.memorySlicedReads << ",\n";
  os << "  \"memory_sliced_zero_reads\": " << s.memorySlicedZeroReads
     << ",\n";
  {
    std::string pj;
    appendPj(pj, s.memoryEnergyFj);
    os << "  \"memory_energy_pj\": " << pj << ",\n";
  }
  os << "  \"host_wavelets_in\": " << s.hostWaveletsIn << ",\n";
  os << "  \"host_wavelets_out\": " << s.hostWaveletsOut << ",\n";
  os << "  \"hops_per_color\": {";
  bool first = true;
  for (unsigned c = 0; c < 32; ++c)
    if (s.hopsPerColor[c]) {
      os << (first ? "" : ", ") << "\"" << c << "\": " << s.hopsPerColor[c];
      first = false;
    }
  os << "},\n";
  // Per layer.
  std::map<int32_t, std::array<uint64_t, 4>> layers;
  for (const PeStats &p : s.pes) {
    auto &l = layers[p.layer];
    l[0] += 1;
    l[1] += p.busyCycles;
    l[2] += p.macs;
    l[3] += p.instructions;
  }
  os << "  \"layers\": [";
  first = true;
  for (auto &[id, l] : layers) {
    std::string name = id >= 0 && size_t(id) < prog.layers.size()
                           ? prog.layers[id]
                           : std::string("(none)");
    os << (first ? "\n" : ",\n") << "    {\"name\": \"" << name
       << "\", \"pes\": " << l[0] << ", \"busy_pe_cycles\": " << l[1]
       << ", \"macs\": " << l[2] << ", \"instructions\": " << l[3] << "}";
    first = false;
  }
  os << "\n  ],\n  \"pes\": [";
  // The PEs' entries are most of the text (about 330 bytes each; 240 MB
  // for the whole wafer): appended to a string reserved once, not through
  // the stream, whose buffer grows by doubling and is copied at the end.
  std::string out = os.str();
  out.reserve(out.size() + s.pes.size() * 360 + 8);
  auto field = [&out](const char *name, auto v) {
    out += ", \"";
    out += name;
    out += "\": ";
    appendInt(out, v);
  };
  first = true;
  for (const PeStats &p : s.pes) {
    out += first ? "\n    {\"x\": " : ",\n    {\"x\": ";
    appendInt(out, p.x);
    field("y", p.y);
    field("layer", p.layer);
    field("busy_cycles", p.busyCycles);
    field("ce_busy_cycles", p.ceBusyCycles);
    field("send_wait_cycles", p.sendWaitCycles);
    field("free_cycles", p.freeCycles);
    field("instructions", p.instructions);
    field("elements", p.elements);
    field("flops", p.flops);
    field("macs", p.macs);
    field("picks", p.picks);
    out += ", \"hops\": {\"north\": ";
    appendInt(out, p.hops[0]);
    field("east", p.hops[1]);
    field("south", p.hops[2]);
    field("west", p.hops[3]);
    field("ramp", p.hops[4]);
    out += "}";
    field("router_queue_high", p.routerQueueHigh);
    field("ce_queue_high", p.ceQueueHigh);
    field("memory_words_used", p.memoryWordsUsed);
    field("memory_high_water_bytes", 2 * uint64_t(p.memoryHighWater));
    field("memory_reads", p.memoryReadCount());
    field("memory_writes", p.memoryWriteCount());
    field("memory_read_bytes", p.memoryReadBytes());
    field("memory_write_bytes", p.memoryWriteBytes());
    out += ", \"memory_energy_pj\": ";
    appendPj(out, p.memoryEnergyFj());
    out += "}";
    first = false;
  }
  out += "\n  ]\n}\n";
  return out;
}

std::string Engine::traceJson() const {
  if (!opts.trace)
    return "";
  std::vector<TraceEvent> ev = gathered ? gatheredTrace : trace;
  bool truncated = gathered ? gatheredTraceTruncated : traceTruncated;
  std::sort(ev.begin(), ev.end(), [](const TraceEvent &a, const TraceEvent &b) {
    return std::tie(a.ts, a.pe, a.kind, a.a, a.b, a.dur) <
           std::tie(b.ts, b.pe, b.kind, b.a, b.b, b.dur);
  });
  std::ostringstream os;
  os << "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"truncated\": "
     << (truncated ? "true" : "false") << "}, \"traceEvents\": [\n";
  bool first = true;
  // Track names: one process per PE, thread 0 = CE, 1 = router.
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> names;
  if (gathered)
    for (const PeRecord &r : allPes)
      names.emplace_back(r.global, r.st.x, r.st.y);
  else
    for (const auto &pe : pes)
      names.emplace_back(pe->index, pe->x, pe->y);
  for (auto [index, x, y] : names) {
    os << (first ? "" : ",\n") << "{\"ph\": \"M\", \"name\": "
       << "\"process_name\", \"pid\": " << index
       << ", \"args\": {\"name\": \"PE (" << x << ", " << y << ")\"}}";
    first = false;
  }
  static const char *kinds[] = {"data", "local", "control"};
  for (const TraceEvent &e : ev) {
    os << (first ? "" : ",\n");
    first = false;
    if (e.kind == 0)
      os << "{\"ph\": \"X\", \"pid\": " << e.pe << ", \"tid\": 0, \"ts\": "
         << e.ts << ", \"dur\": " << e.dur << ", \"name\": \"task "
         << unsigned(e.a) << "\", \"args\": {\"kind\": \""
         << kinds[e.b % 3] << "\"}}";
    else
      os << "{\"ph\": \"X\", \"pid\": " << e.pe << ", \"tid\": 1, \"ts\": "
         << e.ts << ", \"dur\": 1, \"name\": \"color " << unsigned(e.b)
         << " -> " << dirName(Dir(e.a)) << "\"}";
  }
  os << "\n]}\n";
  return os.str();
}

} // namespace detail

std::unique_ptr<Simulator> Simulator::create(binary::Program &&program,
                                             const Options &options,
                                             std::string *error) {
  std::string v = binary::verify(program);
  if (!v.empty()) {
    if (error)
      *error = v;
    return nullptr;
  }
  std::optional<Target> t = Target::create(program.target, error);
  if (!t)
    return nullptr;
  // The host side holds every input and output tensor whole: refuse
  // streams it could not allocate instead of aborting when they are read
  // (a valid binary may declare up to 2^48 elements a stream).
  constexpr uint64_t kMaxHostBytes = uint64_t(1) << 32;
  uint64_t samples = std::max<uint64_t>(options.samples, 1);
  for (const binary::IoStream &io : program.io)
    if (io.numBytes() > kMaxHostBytes / samples) {
      if (error)
        *error = std::string(io.output ? "output" : "input") + " stream @" +
                 io.name + " holds " + std::to_string(io.numBytes()) +
                 " bytes a sample; " + std::to_string(samples) +
                 " samples of it exceed the simulator's 4 GiB for a host "
                 "tensor";
      return nullptr;
    }
  // A program that passes verify() may still need more memory than the
  // machine has: say so instead of aborting.
  uint64_t pes = 0;
  for (const binary::Group &g : program.groups)
    pes += uint64_t(g.width) * g.height;
  try {
    auto shared =
        std::make_shared<const binary::Program>(std::move(program));
    // Threads of the fast mode run a band of rows each (lib/Sim/Bands.cpp),
    // no more bands than rows that hold programmed PEs (a band without PEs
    // would only meet the others).
    unsigned bands = 1;
    if (options.mode == Mode::Fast && options.threads > 1) {
      std::vector<bool> used(shared->target.height, false);
      for (const binary::Group &g : shared->groups)
        for (uint32_t y = g.y; y < g.y + g.height && y < used.size(); ++y)
          used[y] = true;
      bands = unsigned(std::min<uint64_t>(
          options.threads, std::count(used.begin(), used.end(), true)));
    }
    if (bands > 1 &&
        !(options.exchange && options.exchange->size() > 1))
      return createBandThreads(std::move(shared), options, *t, bands, error);
    auto e = std::make_unique<Engine>(std::move(shared), options, *t);
    if (!e->load(error))
      return nullptr;
    return e;
  } catch (const std::bad_alloc &) {
    if (error)
      *error = "not enough memory to build the state of the program's " +
               std::to_string(pes) + " PEs";
    return nullptr;
  }
}

std::unique_ptr<Simulator> Simulator::create(const binary::Program &program,
                                             const Options &options,
                                             std::string *error) {
  std::optional<binary::Program> copy;
  try {
    copy.emplace(program);
  } catch (const std::bad_alloc &) {
    if (error)
      *error = "not enough memory to copy the program";
    return nullptr;
  }
  return create(std::move(*copy), options, error);
}

} // namespace weft::sim
