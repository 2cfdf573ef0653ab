//===- Report.cpp - The report page of a compiled model's run -------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/Driver/Report.h"

using namespace weft;
using namespace weft::driver;
namespace json = llvm::json;

std::vector<sim::PeStats> weft::driver::readPeStats(const json::Object *stats) {
  std::vector<sim::PeStats> pes;
  const json::Array *array = stats ? stats->getArray("pes") : nullptr;
  if (!array)
    return pes;
  for (const json::Value &v : *array) {
    const json::Object *o = v.getAsObject();
    if (!o)
      continue;
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
    pes.push_back(p);
  }
  return pes;
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
          row.predicted = double(k.predictedCycles);
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
