//===- Report.cpp - The report page of a compiled model's run -------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Driver/Report.h"

using namespace weft;
using namespace weft::driver;
namespace json = llvm::json;

sim::PeStats weft::driver::readPeStat(const json::Object &pe) {
  const json::Object *o = &pe;
  auto u64 = [&](const json::Object *obj, llvm::StringRef key) {
    return uint64_t(std::max<int64_t>(0, obj->getInteger(key).value_or(0)));
  };
  sim::PeStats p;
  p.x = uint32_t(u64(o, "x"));
  p.y = uint32_t(u64(o, "y"));
  p.layer = int32_t(o->getInteger("layer").value_or(-1));
  p.busyCycles = u64(o, "busy_cycles");
  p.ceBusyCycles = u64(o, "ce_busy_cycles");
  p.sendWaitCycles = u64(o, "send_wait_cycles");
  p.freeCycles = u64(o, "free_cycles");
  p.instructions = u64(o, "instructions");
  p.elements = u64(o, "elements");
  p.flops = u64(o, "flops");
  p.macs = u64(o, "macs");
  p.picks = u64(o, "picks");
  if (const json::Object *hops = o->getObject("hops")) {
    static const char *const dirs[] = {"north", "east", "south", "west",
                                       "ramp"};
    for (unsigned d = 0; d < 5; ++d)
      p.hops[d] = u64(hops, dirs[d]);
  }
  p.routerQueueHigh = uint32_t(u64(o, "router_queue_high"));
  p.ceQueueHigh = uint32_t(u64(o, "ce_queue_high"));
  p.memoryWordsUsed = uint32_t(u64(o, "memory_words_used"));
  return p;
}

std::vector<sim::PeStats> weft::driver::readPeStats(const json::Object *stats) {
  std::vector<sim::PeStats> pes;
  if (const json::Array *array = stats ? stats->getArray("pes") : nullptr)
    for (const json::Value &v : *array)
      if (const json::Object *o = v.getAsObject())
        pes.push_back(readPeStat(*o));
  return pes;
}

namespace {
/// Finds the extent of JSON values in a text without building them: enough
/// to cut the "pes" array into its entries. The text is checked only as far
/// as finding the extents needs; `llvm::json::parse` checks the pieces.
struct Scanner {
  llvm::StringRef text;
  size_t pos = 0;

  void skipSpace() {
    while (pos < text.size() && llvm::StringRef(" \t\r\n").contains(text[pos]))
      ++pos;
  }
  bool at(char c) {
    skipSpace();
    return pos < text.size() && text[pos] == c;
  }
  /// Past the string starting at `pos` (a '"').
  bool skipString() {
    for (++pos; pos < text.size(); ++pos) {
      if (text[pos] == '\\')
        ++pos;
      else if (text[pos] == '"')
        return ++pos, true;
    }
    return false;
  }
  /// Past the value starting at `pos` (after spaces).
  bool skipValue() {
    skipSpace();
    if (pos >= text.size())
      return false;
    if (text[pos] == '"')
      return skipString();
    if (text[pos] != '{' && text[pos] != '[') {
      size_t start = pos;
      while (pos < text.size() &&
             !llvm::StringRef(",]} \t\r\n").contains(text[pos]))
        ++pos;
      return pos > start;
    }
    unsigned depth = 0;
    while (pos < text.size()) {
      char c = text[pos];
      if (c == '"') {
        if (!skipString())
          return false;
        continue;
      }
      ++pos;
      if (c == '{' || c == '[')
        ++depth;
      else if ((c == '}' || c == ']') && --depth == 0)
        return true;
    }
    return false;
  }
};
} // namespace

static llvm::Error statsError(const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
}

llvm::Expected<SplitStatistics>
weft::driver::splitStatistics(llvm::StringRef text) {
  SplitStatistics split;
  Scanner scan{text};
  // The extent of the "pes" array, replaced by [] for the top-level parse.
  size_t pesBegin = 0, pesEnd = 0;
  if (!scan.at('{'))
    return statsError("the statistics are not a JSON object");
  ++scan.pos;
  while (!scan.at('}')) {
    if (!scan.at('"'))
      return statsError("expected a key in the statistics at offset " +
                        llvm::Twine(scan.pos));
    size_t keyBegin = scan.pos;
    if (!scan.skipString())
      return statsError("unterminated key in the statistics");
    bool isPes = text.slice(keyBegin, scan.pos) == "\"pes\"";
    if (!scan.at(':'))
      return statsError("expected ':' in the statistics at offset " +
                        llvm::Twine(scan.pos));
    ++scan.pos;
    if (isPes && scan.at('[')) {
      if (split.hasPes)
        return statsError("the statistics have two \"pes\" arrays");
      split.hasPes = true;
      pesBegin = scan.pos++;
      while (!scan.at(']')) {
        size_t begin = (scan.skipSpace(), scan.pos);
        if (!scan.skipValue())
          return statsError("bad \"pes\" entry at offset " +
                            llvm::Twine(begin));
        split.pes.push_back(text.slice(begin, scan.pos));
        if (scan.at(','))
          ++scan.pos;
        else if (!scan.at(']'))
          return statsError("expected ',' or ']' in \"pes\" at offset " +
                            llvm::Twine(scan.pos));
      }
      pesEnd = ++scan.pos;
    } else if (!scan.skipValue()) {
      return statsError("bad value in the statistics at offset " +
                        llvm::Twine(scan.pos));
    }
    if (scan.at(','))
      ++scan.pos;
    else if (!scan.at('}'))
      return statsError("expected ',' or '}' in the statistics at offset " +
                        llvm::Twine(scan.pos));
  }
  std::string rest =
      split.hasPes
          ? (text.take_front(pesBegin) + "[]" + text.drop_front(pesEnd)).str()
          : text.str();
  llvm::Expected<json::Value> top = json::parse(rest);
  if (!top)
    return top.takeError();
  json::Object *object = top->getAsObject();
  if (!object)
    return statsError("the statistics are not a JSON object");
  split.top = std::move(*object);
  if (split.hasPes)
    split.top.erase("pes");
  return split;
}

llvm::Expected<std::vector<sim::PeStats>>
weft::driver::readPeStats(const SplitStatistics &split) {
  std::vector<sim::PeStats> pes;
  pes.reserve(split.pes.size());
  for (llvm::StringRef entry : split.pes) {
    llvm::Expected<json::Value> v = json::parse(entry);
    if (!v)
      return v.takeError();
    if (const json::Object *o = v->getAsObject())
      pes.push_back(readPeStat(*o));
  }
  return pes;
}

llvm::Error weft::driver::writeStatistics(llvm::raw_ostream &os,
                                          const SplitStatistics &split) {
  // The order in which llvm::json prints an object's keys.
  std::vector<llvm::StringRef> keys;
  for (const auto &kv : split.top)
    keys.push_back(kv.first);
  if (split.hasPes)
    keys.push_back("pes");
  llvm::sort(keys);
  json::OStream out(os, 2);
  llvm::Error err = llvm::Error::success();
  out.object([&] {
    for (llvm::StringRef key : keys) {
      if (key != "pes" || !split.hasPes) {
        out.attribute(key, *split.top.get(key));
        continue;
      }
      out.attributeArray(key, [&] {
        for (llvm::StringRef entry : split.pes) {
          llvm::Expected<json::Value> v = json::parse(entry);
          if (!v) {
            if (!err)
              err = v.takeError();
            else
              llvm::consumeError(v.takeError());
            continue;
          }
          out.value(*v);
        }
      });
    }
  });
  return err;
}

report::ReportInput weft::driver::reportInput(
    const binary::Program &program, const CompiledModel &compiled,
    bool fromCompile, const RunFigures &figures,
    const std::vector<sim::PeStats> &pes, int64_t samples) {
  report::ReportInput in;
  in.program = &program;
  in.pes = &pes;
  report::RunSummary &s = in.summary;
  s.samples = samples;
  s.cycles = figures.cycles;
  s.latency = figures.latency;
  s.steadyCycles = figures.steadyCycles;
  s.cyclesPerSample = figures.cyclesPerSample;
  if (fromCompile) {
    s.predictedCycles = compiled.predictedCycles;
    s.macsPerSample = compiled.macsPerSample;
    s.executedMacsPerSample = compiled.executedMacsPerSample;
    if (figures.cyclesPerSample > 0) {
      s.utilization = figures.utilization;
      s.executedUtilization = figures.executedUtilization;
    }
    s.precision = compiled.mixed ? "mixed" : "fp32";
  }
  // One row per layer of the binary, in its order; the compile's kernel of
  // that name gives what it computes and its predicted cycles.
  std::vector<int64_t> pesOf(program.layers.size(), 0);
  for (const binary::Group &g : program.groups)
    if (g.layer >= 0 && size_t(g.layer) < pesOf.size())
      pesOf[size_t(g.layer)] += int64_t(g.width) * g.height;
  double perSample = samples > 0 ? double(samples) : 1.0;
  for (size_t l = 0; l < program.layers.size(); ++l) {
    report::KernelRow row;
    row.name = program.layers[l];
    row.pes = pesOf[l];
    if (fromCompile)
      for (const KernelFigures &k : compiled.kernels)
        if (k.name == row.name) {
          row.what = k.what;
          // (Its work: the busiest PE's figure it is compared with.)
          row.predicted = double(k.predictedCycles - k.laneWaitCycles);
        }
    auto it = figures.busiest.find(row.name);
    if (it != figures.busiest.end()) {
      row.simulated = double(it->second.first) / perSample;
      row.ceBusy = double(it->second.second) / perSample;
    }
    in.kernels.push_back(std::move(row));
  }
  return in;
}
