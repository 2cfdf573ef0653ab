//===- WeftModule.cpp - The weft._weft extension module -------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The C++ half of the `weft` Python package (docs/python.md): compile a model
// through the driver library (include/weft/Driver/Driver.h, as `weftc`
// does), run the binary in this process on the simulator library
// (include/weft/Sim/Simulator.h, as tools/weft-sim does), save and load
// .wfb files (include/weft/Binary/File.h), run the host reference
// (include/weft/Reference/Reference.h), and draw a run: its heatmaps and its
// report page (include/weft/Report, as weft-sim and weftc run do).
// python/weft/__init__.py wraps it.
//
// Every long call (compile, simulate, reference) releases the GIL; numpy
// arrays are copied into host tensors before and out of them after. A
// program serializes its own runs with a mutex.
//
//===----------------------------------------------------------------------===//

#include "weft/Binary/File.h"
#include "weft/Driver/Driver.h"
#include "weft/Driver/Report.h"
#include "weft/Kernels/Replicas.h"
#include "weft/Pipeline/Pipeline.h"
#include "weft/Reference/Reference.h"
#include "weft/Report/Heatmap.h"
#include "weft/Report/Html.h"
#include "weft/Sim/Simulator.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <mutex>
#include <stdexcept>

namespace py = pybind11;
using namespace weft;

namespace {

/// The exceptions of docs/python.md, "Errors": weft.Error and its kinds.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct CompileError : Error {
  using Error::Error;
};
struct SimulationError : Error {
  using Error::Error;
};

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The numpy dtype of a tensor dtype.
const char *numpyDType(tensorio::DType t) {
  switch (t) {
  case tensorio::DType::F32:
    return "float32";
  case tensorio::DType::F16:
    return "float16";
  case tensorio::DType::F64:
    return "float64";
  case tensorio::DType::I8:
    return "int8";
  case tensorio::DType::U8:
    return "uint8";
  case tensorio::DType::I16:
    return "int16";
  case tensorio::DType::I32:
    return "int32";
  case tensorio::DType::I64:
    return "int64";
  case tensorio::DType::Bool:
    return "bool";
  }
  return "float32";
}

/// The tensor dtype of a host stream's elements.
std::optional<tensorio::DType> streamDType(machine::ElemType t) {
  switch (t) {
  case machine::ElemType::F32:
    return tensorio::DType::F32;
  case machine::ElemType::F16:
    return tensorio::DType::F16;
  case machine::ElemType::I16:
    return tensorio::DType::I16;
  case machine::ElemType::I32:
    return tensorio::DType::I32;
  default:
    return std::nullopt;
  }
}

/// A numpy array (or anything numpy.asarray takes) converted to `dtype`,
/// C-contiguous, copied into a host tensor. Needs the GIL.
tensorio::HostTensor toTensor(const py::handle &value, tensorio::DType dtype) {
  py::module_ np = py::module_::import("numpy");
  py::array a = np.attr("ascontiguousarray")(value, numpyDType(dtype));
  tensorio::HostTensor t;
  t.dtype = dtype;
  for (py::ssize_t d = 0; d < a.ndim(); ++d)
    t.shape.push_back(int64_t(a.shape(d)));
  const auto *data = static_cast<const uint8_t *>(a.data());
  t.bytes.assign(data, data + a.nbytes());
  return t;
}

/// A host tensor as a new numpy array. Needs the GIL.
py::array toArray(const tensorio::HostTensor &t) {
  py::dtype dtype(numpyDType(t.dtype));
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
  py::array a(dtype, shape);
  if (size_t(a.nbytes()) != t.bytes.size())
    throw Error("an output of " + std::to_string(t.bytes.size()) +
                " bytes does not fill the shape " + shapeString(t.shape));
  std::copy(t.bytes.begin(), t.bytes.end(),
            static_cast<uint8_t *>(a.mutable_data()));
  return a;
}

/// One graph input or output beside its host port.
struct Port {
  /// The graph's name (the port's for a loaded program).
  std::string name;
  /// The binary's host stream.
  std::string port;
  /// The graph's shape (the port's per-sample shape for a loaded program).
  std::vector<int64_t> shape;
  /// The port's per-sample shape and element type.
  std::vector<int64_t> perSample;
  tensorio::DType dtype = tensorio::DType::F32;
};

/// A compiled or loaded program, and its last run.
class Program {
public:
  /// From a compile: the binary, the graph's ports and the figures.
  Program(driver::CompiledModel &&model, const driver::HostPorts &ports)
      : binary(std::move(*model.binary)), compiled(std::move(model)),
        fromCompile(true) {
    this->compiled.binary.reset();
    batch = std::max<int64_t>(1, this->compiled.batch);
    for (size_t i = 0; i < ports.inputs.size(); ++i)
      inputs.push_back(makePort(ports.inputs[i], ports.inputPorts[i]));
    for (size_t i = 0; i < ports.outputs.size(); ++i)
      outputs.push_back(makePort(ports.outputs[i], ports.outputPorts[i]));
  }

  /// From a .wfb: the host streams name and shape the ports.
  explicit Program(binary::Program &&program) : binary(std::move(program)) {
    compiled.gridWidth = binary.target.width;
    compiled.gridHeight = binary.target.height;
    compiled.gridPEs = int64_t(binary.target.width) * binary.target.height;
    compiled.programName = binary.name;
    for (const binary::IoStream &s : binary.io) {
      Port p;
      p.name = p.port = s.name;
      p.shape = p.perSample = s.shape;
      p.dtype = streamDType(s.dtype).value_or(tensorio::DType::F32);
      (s.output ? outputs : inputs).push_back(std::move(p));
    }
  }

  /// Runs the program on `named` inputs; returns the outputs in order.
  py::dict run(const py::dict &named, uint64_t maxCycles, unsigned threads);
  void save(const std::string &path) const;
  py::array heatmap(const std::string &kind) const;
  void report(const std::string &path) const;
  py::object stats() const;
  py::dict figures() const;
  py::object runFigures() const;
  py::list kernels() const;
  py::list portList(bool output) const;

  binary::Program binary;
  driver::CompiledModel compiled;
  bool fromCompile = false;
  int64_t batch = 1;
  std::vector<Port> inputs, outputs;

private:
  Port makePort(const reference::TensorSignature &sig,
                const std::string &port) const {
    Port p;
    p.name = sig.name.empty() ? port : sig.name;
    p.port = port;
    p.shape = sig.shape;
    p.dtype = sig.dtype;
    for (const binary::IoStream &s : binary.io)
      if (s.name == port) {
        p.perSample = s.shape;
        p.dtype = streamDType(s.dtype).value_or(p.dtype);
      }
    return p;
  }
  /// The samples an input of shape `shape` holds for `port`, or 0.
  int64_t samplesOf(const Port &port, const std::vector<int64_t> &shape) const;

  /// Guards the last run's results; held while simulating.
  mutable std::mutex mutex;
  bool ran = false;
  int64_t lastSamples = 0;
  std::string lastStats;
  std::vector<sim::PeStats> lastPes;
};

int64_t Program::samplesOf(const Port &port,
                           const std::vector<int64_t> &shape) const {
  if (fromCompile && shape == port.shape)
    return batch;
  const std::vector<int64_t> &p = port.perSample;
  if (shape == p)
    return 1;
  if (shape.size() == p.size() + 1 &&
      std::equal(p.begin(), p.end(), shape.begin() + 1) && shape[0] > 0)
    return shape[0];
  if (!p.empty() && shape.size() == p.size() && p[0] > 0 && shape[0] > 0 &&
      shape[0] % p[0] == 0 &&
      std::equal(p.begin() + 1, p.end(), shape.begin() + 1))
    return shape[0] / p[0];
  return 0;
}

py::dict Program::run(const py::dict &named, uint64_t maxCycles,
                      unsigned threads) {
  // Bind by name, with the GIL: every input given, no other.
  std::vector<tensorio::HostTensor> tensors(inputs.size());
  std::vector<bool> given(inputs.size(), false);
  for (auto [key, value] : named) {
    std::string name = py::str(key);
    auto it = std::find_if(inputs.begin(), inputs.end(),
                           [&](const Port &p) { return p.name == name; });
    if (it == inputs.end()) {
      std::string names;
      for (const Port &p : inputs)
        names += (names.empty() ? "'" : ", '") + p.name + "'";
      throw py::value_error("the program has no input '" + name +
                            "'; its inputs are " + names);
    }
    size_t i = size_t(it - inputs.begin());
    tensors[i] = toTensor(value, it->dtype);
    given[i] = true;
  }
  int64_t samples = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Port &p = inputs[i];
    if (!given[i])
      throw py::value_error("input '" + p.name + "' is not given");
    int64_t n = samplesOf(p, tensors[i].shape);
    if (n == 0)
      throw py::value_error(
          "input '" + p.name + "' is " + shapeString(p.shape) +
          (fromCompile ? ", or N samples of " + shapeString(p.perSample)
                       : std::string(" per sample (N samples: N x the first "
                                     "dimension, or a leading N)")) +
          ", not " + shapeString(tensors[i].shape));
    if (samples && n != samples)
      throw py::value_error("input '" + p.name + "' holds " +
                            std::to_string(n) + " samples, another input " +
                            std::to_string(samples));
    samples = n;
  }
  if (inputs.empty())
    samples = batch;

  // Simulate without the GIL.
  std::vector<tensorio::HostTensor> results;
  std::string error;
  bool simFailed = false;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    // With copies (replicas), every copy's ports stream its round-robin
    // share of the samples (the first copy's count, repeats included).
    int64_t copies = std::max<int64_t>(1, compiled.replicas);
    sim::Options options;
    options.samples =
        uint64_t(conversion::samplesOfReplica(0, samples, copies));
    options.threads = std::max(1u, threads);
    if (maxCycles)
      options.maxCycles = maxCycles;
    std::unique_ptr<sim::Simulator> simulator =
        sim::Simulator::create(binary, options, &error);
    if (!simulator) {
      error = "cannot load the program: " + error;
    } else {
      for (size_t i = 0; i < inputs.size() && error.empty(); ++i)
        for (int64_t k = 0; k < copies && error.empty(); ++k) {
          std::optional<tensorio::HostTensor> dealt =
              copies == 1
                  ? std::optional<tensorio::HostTensor>(tensors[i])
                  : driver::dealSamples(tensors[i], samples, k, copies, error);
          if (!dealt || !simulator->bindInput(
                            driver::replicaPort(compiled, inputs[i].port, k),
                            dealt->bytes, &error))
            error = "input '" + inputs[i].name + "': " + error;
        }
    }
    if (error.empty()) {
      sim::Status status = simulator->run();
      lastStats = simulator->statsJson();
      lastPes = simulator->stats().pes;
      lastSamples = samples;
      ran = true;
      if (status != sim::Status::Done) {
        error =
            std::string(sim::statusName(status)) + ": " + simulator->message();
        simFailed = true;
      } else {
        for (const Port &p : outputs) {
          tensorio::HostTensor t;
          t.dtype = p.dtype;
          t.bytes = simulator->output(p.port);
          if (copies > 1) {
            // Every copy's output, gathered back into sample order.
            std::vector<tensorio::HostTensor> perCopy;
            for (int64_t k = 0; k < copies; ++k) {
              tensorio::HostTensor c;
              c.dtype = p.dtype;
              c.bytes =
                  simulator->output(driver::replicaPort(compiled, p.port, k));
              c.shape = {options.samples > 1 ? int64_t(options.samples) : 1,
                         int64_t(c.bytes.size() / tensorio::dtypeSize(c.dtype) /
                                 std::max<uint64_t>(1, options.samples))};
              perCopy.push_back(std::move(c));
            }
            std::optional<tensorio::HostTensor> all =
                driver::gatherSamples(perCopy, samples, error);
            if (!all) {
              error = "output '" + p.name + "': " + error;
              break;
            }
            t.bytes = std::move(all->bytes);
          }
          if (std::string bad = driver::shapeOutput(t, p.shape, samples,
                                                    fromCompile ? batch : 1);
              !bad.empty()) {
            error = "output '" + p.name + "' does not have its shape: " + bad;
            break;
          }
          results.push_back(std::move(t));
        }
      }
    }
  }
  if (simFailed)
    throw SimulationError(error);
  if (!error.empty())
    throw Error(error);
  py::dict out;
  for (size_t i = 0; i < outputs.size(); ++i)
    out[py::str(outputs[i].name)] = toArray(results[i]);
  return out;
}

void Program::save(const std::string &path) const {
  std::string error;
  bool ok;
  {
    py::gil_scoped_release release;
    ok = binary::writeFile(path, binary, &error);
  }
  if (!ok)
    throw Error("cannot write '" + path + "': " + error);
}

py::object Program::stats() const {
  std::lock_guard<std::mutex> lock(mutex);
  if (!ran)
    return py::none();
  std::string text = lastStats;
  if (fromCompile) {
    // As `weftc run --stats` keeps it: with the compiler's MAC counts and
    // the run's figures (the copies, throughput, utilization).
    if (auto json = llvm::json::parse(text)) {
      if (llvm::json::Object *obj = json->getAsObject()) {
        driver::RunFigures f =
            driver::readRunFigures(obj, binary, compiled, lastSamples);
        driver::addCompilerFigures(*obj, compiled);
        driver::addRunFigures(*obj, f, compiled, lastSamples);
        text.clear();
        llvm::raw_string_ostream(text) << llvm::json::Value(std::move(*obj));
      }
    } else {
      llvm::consumeError(json.takeError());
    }
  }
  return py::module_::import("json").attr("loads")(text);
}

py::array Program::heatmap(const std::string &kind) const {
  const report::HeatmapKind *k = report::findHeatmapKind(kind);
  if (!k)
    throw py::value_error("unknown heatmap kind '" + kind +
                          "'; the kinds are " + report::heatmapKindNames());
  report::Grid grid;
  if (!k->needsRun) {
    grid = report::computeHeatmap(*k, binary, nullptr);
  } else {
    std::lock_guard<std::mutex> lock(mutex);
    if (!ran)
      throw Error("heatmap('" + kind + "') needs a run: call run() first");
    grid = report::computeHeatmap(*k, binary, &lastPes);
  }
  py::array_t<int64_t> a({py::ssize_t(grid.height), py::ssize_t(grid.width)});
  std::copy(grid.values.begin(), grid.values.end(), a.mutable_data());
  return a;
}

void Program::report(const std::string &path) const {
  std::string page;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!ran)
      throw Error("report('" + path + "') needs a run: call run() first");
    auto json = llvm::json::parse(lastStats);
    if (!json) {
      llvm::consumeError(json.takeError());
      throw Error("the simulator's statistics do not parse");
    }
    driver::RunFigures f =
        driver::readRunFigures(json->getAsObject(), binary, compiled);
    py::gil_scoped_release release;
    page = report::renderReport(driver::reportInput(
        binary, compiled, fromCompile, f, lastPes, lastSamples));
  }
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(path, ec);
    if (!ec) {
      os << page;
      os.close();
      if (os.has_error()) {
        ec = os.error();
        os.clear_error();
      }
    }
  }
  if (ec)
    throw Error("cannot write '" + path + "': " + ec.message());
}

py::dict Program::figures() const {
  py::dict d;
  d["name"] = compiled.programName;
  d["grid"] = py::make_tuple(binary.target.width, binary.target.height);
  d["fabric"] = binary.target.str();
  d["pes"] = int64_t(binary.target.width) * binary.target.height;
  if (!fromCompile)
    return d;
  d["batch"] = compiled.batch;
  d["precision"] = compiled.mixed ? "mixed" : "fp32";
  d["grid_auto"] = compiled.gridAuto;
  d["predicted_cycles_per_sample"] = compiled.predictedCycles;
  d["model_macs_per_sample"] = compiled.macsPerSample;
  d["executed_macs_per_sample"] = compiled.executedMacsPerSample;
  d["colors_used"] = compiled.colorsUsed;
  d["replicas"] = compiled.replicas;
  d["replica_rows"] = compiled.replicaRows;
  d["replica_plan"] = compiled.replicaPlan;
  d["routable_colors"] = compiled.routableColors;
  return d;
}

py::object Program::runFigures() const {
  std::lock_guard<std::mutex> lock(mutex);
  if (!ran)
    return py::none();
  auto json = llvm::json::parse(lastStats);
  if (!json) {
    llvm::consumeError(json.takeError());
    throw Error("the simulator's statistics do not parse");
  }
  driver::RunFigures f = driver::readRunFigures(json->getAsObject(), binary,
                                                compiled, lastSamples);
  py::dict d;
  d["samples"] = lastSamples;
  d["replicas"] = f.replicas;
  d["samples_per_million_cycles"] = f.samplesPerMillionCycles;
  if (fromCompile)
    d["replica"] =
        py::dict(py::arg("pes") = f.copyPEs,
                 py::arg("cycles_per_sample") = f.copyCyclesPerSample,
                 py::arg("utilization") = f.copyUtilization);
  d["cycles"] = f.cycles;
  d["latency"] = f.latency;
  d["macs"] = f.macs;
  d["steady_cycles_per_sample"] = f.steadyCycles;
  d["cycles_per_sample"] = f.cyclesPerSample;
  if (fromCompile) {
    d["utilization"] = f.utilization;
    d["executed_utilization"] = f.executedUtilization;
  }
  py::dict kernels;
  // (Per kernel of each copy: the samples that copy ran.)
  double ran = double(std::max<int64_t>(
      1, conversion::samplesOfReplica(0, lastSamples, f.replicas)));
  for (const auto &[name, busiest] : f.busiest)
    kernels[py::str(name)] = py::dict(
        py::arg("busiest_pe_cycles_per_sample") = double(busiest.first) / ran,
        py::arg("ce_busy_cycles_per_sample") = double(busiest.second) / ran);
  d["kernels"] = kernels;
  return d;
}

py::list Program::kernels() const {
  py::list l;
  for (const driver::KernelFigures &k : compiled.kernels)
    l.append(
        py::dict(py::arg("name") = k.name, py::arg("what") = k.what,
                 py::arg("dense") = k.dense, py::arg("inputs") = k.K,
                 py::arg("outputs") = k.M, py::arg("column") = k.x0,
                 py::arg("width") = k.width, py::arg("rows") = k.rows,
                 py::arg("predicted_cycles_per_sample") = k.predictedCycles,
                 py::arg("model_macs") = k.modelMacs,
                 py::arg("executed_macs") = k.executedMacs));
  return l;
}

py::list Program::portList(bool output) const {
  py::list l;
  for (const Port &p : output ? outputs : inputs)
    l.append(py::make_tuple(p.name, py::tuple(py::cast(p.shape)),
                            numpyDType(p.dtype)));
  return l;
}

/// The ONNX model at `path`, or in `bytes` when they are given (`path` then
/// names it in messages).
struct ModelSource {
  std::string path;
  std::string bytes;
};

ModelSource modelSource(const std::string &path, const py::object &bytes) {
  ModelSource m{path, ""};
  if (!bytes.is_none())
    m.bytes = std::string(py::bytes(bytes));
  return m;
}

std::unique_ptr<Program> compile(const std::string &path,
                                 const py::object &bytes,
                                 driver::CompileOptions options) {
  ModelSource model = modelSource(path, bytes);
  options.modelBytes = model.bytes;
  options.commandLineOptions = false;
  std::vector<std::string> frozen;
  for (const std::string &spec : options.constants)
    frozen.push_back(spec.substr(0, spec.find('=')));
  std::string error;
  std::unique_ptr<Program> program;
  {
    py::gil_scoped_release release;
    std::unique_ptr<mlir::MLIRContext> ctx = driver::createContext();
    driver::CompiledModel compiled;
    if (driver::compileModel(*ctx, model.path, options, compiled, error)) {
      std::optional<driver::HostPorts> ports =
          driver::mapHostPorts(compiled, frozen, error);
      if (ports) {
        // The modules go with their context; the program keeps plain data.
        compiled.imported = nullptr;
        compiled.module = nullptr;
        program = std::make_unique<Program>(std::move(compiled), *ports);
      }
    }
  }
  if (!program)
    throw CompileError(error);
  return program;
}

std::unique_ptr<Program> load(const std::string &path) {
  std::string error;
  std::optional<binary::Program> p;
  {
    py::gil_scoped_release release;
    p = binary::readFile(path, &error);
    // The simulator's load-time checks, so that a bad file fails here.
    if (p)
      if (std::string bad = binary::verify(*p); !bad.empty()) {
        error = bad;
        p.reset();
      }
  }
  if (!p)
    throw Error("cannot load '" + path + "': " + error);
  return std::make_unique<Program>(std::move(*p));
}

py::dict runReference(const std::string &path, const py::object &bytes,
                      const py::dict &named, int64_t batchSize) {
  ModelSource model = modelSource(path, bytes);
  std::string error;
  std::unique_ptr<mlir::MLIRContext> ctx = driver::createContext();
  mlir::OwningOpRef<mlir::ModuleOp> module;
  {
    py::gil_scoped_release release;
    module = driver::loadModel(*ctx, model.path, batchSize, error, model.bytes);
  }
  if (!module)
    throw CompileError("cannot import '" + model.path + "':\n" + error);
  auto sig = reference::readGraphSignature(*module);
  if (!sig)
    throw Error(llvm::toString(sig.takeError()));
  // Each input converted to the graph's dtype, by name.
  std::vector<reference::NamedTensor> inputs;
  for (auto [key, value] : named) {
    std::string name = py::str(key);
    auto it = std::find_if(
        sig->inputs.begin(), sig->inputs.end(),
        [&](const reference::TensorSignature &s) { return s.name == name; });
    if (it == sig->inputs.end())
      throw py::value_error("the graph has no input '" + name + "'");
    inputs.push_back({name, toTensor(value, it->dtype)});
    if (inputs.back().tensor.shape != it->shape)
      throw py::value_error("input '" + name + "' is " +
                            tensorio::dtypeName(it->dtype) +
                            shapeString(it->shape) + ", not " +
                            shapeString(inputs.back().tensor.shape));
  }
  for (const reference::TensorSignature &s : sig->inputs)
    if (std::none_of(
            inputs.begin(), inputs.end(),
            [&](const reference::NamedTensor &t) { return t.name == s.name; }))
      throw py::value_error("graph input '" + s.name + "' is not given");
  std::optional<std::vector<tensorio::HostTensor>> outputs;
  {
    py::gil_scoped_release release;
    auto exe = reference::ReferenceExecutable::compile(*module);
    if (!exe) {
      error = llvm::toString(exe.takeError());
    } else {
      auto run = (*exe)->run(inputs);
      if (!run)
        error = llvm::toString(run.takeError());
      else
        outputs = std::move(*run);
    }
    module = nullptr;
  }
  if (!outputs)
    throw Error("the host reference: " + error);
  py::dict out;
  for (size_t i = 0; i < outputs->size(); ++i) {
    std::string name = sig->outputs[i].name.empty()
                           ? "output_" + std::to_string(i)
                           : sig->outputs[i].name;
    out[py::str(name)] = toArray((*outputs)[i]);
  }
  return out;
}

} // namespace

PYBIND11_MODULE(_weft, m) {
  m.doc() = "weft: compile ONNX models for the wafer-scale fabric and run "
            "them on its simulator (docs/python.md)";
  // The passes register once, as the tools do in main.
  weft::registerAllPasses();

  // pybind11 tries the translators last registered first: the kinds after
  // their base.
  auto &error = py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<CompileError>(m, "CompileError", error.ptr());
  py::register_exception<SimulationError>(m, "SimulationError", error.ptr());

  py::class_<Program>(m, "Program")
      .def("run", &Program::run, py::arg("inputs"), py::arg("max_cycles") = 0,
           py::arg("threads") = 1)
      .def("save", &Program::save, py::arg("path"))
      .def("heatmap", &Program::heatmap, py::arg("kind"))
      .def("report", &Program::report, py::arg("path"))
      .def_property_readonly("stats", &Program::stats)
      .def_property_readonly("figures", &Program::figures)
      .def_property_readonly("run_figures", &Program::runFigures)
      .def_property_readonly("kernels", &Program::kernels)
      .def_property_readonly("inputs",
                             [](const Program &p) { return p.portList(false); })
      .def_property_readonly("outputs",
                             [](const Program &p) { return p.portList(true); })
      .def_property_readonly("compiled",
                             [](const Program &p) { return p.fromCompile; });

  m.def(
      "compile",
      [](const std::string &path, const py::object &bytes,
         const std::string &grid, const std::string &maxGrid,
         const std::string &precision, bool mergeLanes, int64_t batchSize,
         const std::vector<std::string> &constants,
         const std::string &replicas) {
        driver::CompileOptions options;
        options.replicas = replicas;
        options.grid = grid;
        options.maxGrid = maxGrid;
        options.precision = precision;
        options.mergeLanes = mergeLanes;
        options.batchSize = batchSize;
        options.constants = constants;
        return compile(path, bytes, options);
      },
      py::arg("path"), py::arg("model_bytes"), py::arg("grid"),
      py::arg("max_grid"), py::arg("precision"), py::arg("merge_lanes"),
      py::arg("batch_size"), py::arg("constants"), py::arg("replicas"));
  m.def("load", &load, py::arg("path"));
  m.def("reference", &runReference, py::arg("path"), py::arg("model_bytes"),
        py::arg("inputs"), py::arg("batch_size"));
  py::list kinds;
  for (const report::HeatmapKind &h : report::heatmapKinds())
    kinds.append(py::make_tuple(h.name, h.description, h.needsRun));
  m.attr("HEATMAP_KINDS") = kinds;
}
