//===- Executable.cpp - JIT-compile and run the lowered reference ---------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// After lowering, the entry function takes one memref per graph input, then
// one per graph output, through its C interface wrapper
// `_mlir_ciface_<entry>(Desc *in0, ..., Desc *out0, ...)`. Each descriptor is
// the standard ranked-memref struct: allocated and aligned pointers, offset,
// sizes, strides. Host tensors are dense row-major, so a descriptor is just a
// pointer plus the shape; the caller owns every buffer.
//
//===----------------------------------------------------------------------===//

#include "weft/Reference/Reference.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

using namespace mlir;
using namespace weft;
using namespace weft::tensorio;
using namespace weft::reference;

static_assert(sizeof(void *) == sizeof(int64_t),
              "memref descriptors are built as arrays of 64-bit words");

//===----------------------------------------------------------------------===//
// Signatures
//===----------------------------------------------------------------------===//

/// The host dtype of a tensor element type, or nullopt if the reference
/// cannot exchange it with the host.
static std::optional<DType> dtypeOf(Type type) {
  if (type.isF32())
    return DType::F32;
  if (type.isF64())
    return DType::F64;
  if (type.isF16())
    return DType::F16;
  if (type.isSignlessInteger(1))
    return DType::Bool;
  if (type.isSignlessInteger(8) || type.isSignedInteger(8))
    return DType::I8;
  if (type.isUnsignedInteger(8))
    return DType::U8;
  if (type.isSignlessInteger(16) || type.isSignedInteger(16))
    return DType::I16;
  if (type.isSignlessInteger(32) || type.isSignedInteger(32))
    return DType::I32;
  if (type.isSignlessInteger(64) || type.isSignedInteger(64))
    return DType::I64;
  return std::nullopt;
}

static std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, ", ");
  os << "]";
  return s;
}

static std::string signatureString(const TensorSignature &sig) {
  return std::string(dtypeName(sig.dtype)) + shapeString(sig.shape);
}

/// One argument or result: a statically shaped tensor of a dtype the host
/// can hold.
static llvm::Expected<TensorSignature>
signatureOf(Type type, DictionaryAttr attrs, StringRef what, unsigned index) {
  std::string name;
  if (attrs)
    if (auto nameAttr = attrs.getAs<StringAttr>("onnx.name"))
      name = nameAttr.str();
  auto describe = [&] {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << what << " " << index;
    if (!name.empty())
      os << " '" << name << "'";
    return s;
  };
  auto error = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   describe() + why);
  };
  std::string typeText;
  llvm::raw_string_ostream(typeText) << type;
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType || !tensorType.hasStaticShape())
    return error(" has type " + typeText +
                 "; the host reference needs a static tensor");
  std::optional<DType> dtype = dtypeOf(tensorType.getElementType());
  if (!dtype)
    return error(" has type " + typeText +
                 ", whose elements the host reference does not exchange");
  TensorSignature sig;
  sig.name = std::move(name);
  sig.dtype = *dtype;
  sig.shape.assign(tensorType.getShape().begin(), tensorType.getShape().end());
  return sig;
}

llvm::Expected<GraphSignature>
weft::reference::readGraphSignature(ModuleOp module,
                                    llvm::StringRef entryPoint) {
  auto entry = module.lookupSymbol<func::FuncOp>(entryPoint);
  if (!entry)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the module has no function @" + entryPoint);
  GraphSignature graph;
  FunctionType type = entry.getFunctionType();
  for (unsigned i = 0, e = type.getNumInputs(); i < e; ++i) {
    auto sig = signatureOf(type.getInput(i), entry.getArgAttrDict(i), "input", i);
    if (!sig)
      return sig.takeError();
    graph.inputs.push_back(std::move(*sig));
  }
  for (unsigned i = 0, e = type.getNumResults(); i < e; ++i) {
    auto sig =
        signatureOf(type.getResult(i), entry.getResultAttrDict(i), "output", i);
    if (!sig)
      return sig.takeError();
    graph.outputs.push_back(std::move(*sig));
  }
  return graph;
}

//===----------------------------------------------------------------------===//
// Compilation
//===----------------------------------------------------------------------===//

static void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// Turns every constant global initialised from a dense_resource blob into
/// an external declaration and returns where each blob's bytes are, so the
/// JIT links the compiled code against the weights in place. Translating
/// the blobs to LLVM constants instead would copy every weight twice and
/// build one LLVM constant per innermost row (ResNet-18 spends most of its
/// JIT time there).
static llvm::StringMap<const void *> externalizeBlobGlobals(ModuleOp lowered) {
  llvm::StringMap<const void *> addresses;
  lowered.walk([&](LLVM::GlobalOp global) {
    auto value =
        dyn_cast_or_null<DenseResourceElementsAttr>(global.getValueAttr());
    if (!value || !global.getConstant())
      return;
    AsmResourceBlob *blob = value.getRawHandle().getBlob();
    ShapedType type = value.getType();
    unsigned bits = type.getElementTypeBitWidth();
    if (!blob || bits % 8 != 0 ||
        blob->getData().size() !=
            static_cast<size_t>(type.getNumElements()) * (bits / 8))
      return; // Leave anything unusual to the LLVM translation.
    const char *data = blob->getData().data();
    addresses[global.getSymName()] = data;
    global.removeValueAttr();
    global.setLinkage(LLVM::Linkage::External);
    // Promise no more alignment than the blob has.
    uint64_t address = reinterpret_cast<uint64_t>(data);
    uint64_t alignment = address ? std::min<uint64_t>(
                                       64, address & -address)
                                 : 64;
    global.setAlignment(alignment);
  });
  return addresses;
}

ReferenceExecutable::~ReferenceExecutable() = default;

llvm::Expected<std::unique_ptr<ReferenceExecutable>>
ReferenceExecutable::compile(ModuleOp module, const ReferenceOptions &options) {
  MLIRContext *ctx = module.getContext();
  // Every diagnostic from here on is part of the error we return.
  std::string diagnostics;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (!diagnostics.empty())
      diagnostics += "\n";
    llvm::raw_string_ostream os(diagnostics);
    // Imported ops carry the ONNX node name as their location.
    if (auto name = dyn_cast<NameLoc>(diag.getLocation()))
      os << "node '" << name.getName().getValue() << "': ";
    os << diag;
    return success();
  });
  auto fail = [&](llvm::StringRef what) {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        what + (diagnostics.empty() ? "" : ":\n" + diagnostics));
  };

  std::unique_ptr<ReferenceExecutable> exe(new ReferenceExecutable());
  exe->entryPoint = options.entryPoint;

  auto signature = readGraphSignature(module, options.entryPoint);
  if (!signature)
    return signature.takeError();
  exe->signature = std::move(*signature);

  exe->lowered = module.clone();
  PassManager pm(ctx);
  buildReferenceLoweringPipeline(pm, options);
  if (failed(pm.run(*exe->lowered)))
    return fail("lowering for the host reference failed");

  llvm::StringMap<const void *> blobs = externalizeBlobGlobals(*exe->lowered);

  initializeNativeTarget();
  ExecutionEngineOptions engineOptions;
  auto transformer = makeOptimizingTransformer(std::min(options.optLevel, 3u),
                                               /*sizeLevel=*/0,
                                               /*targetMachine=*/nullptr);
  engineOptions.transformer = transformer;
  static constexpr llvm::CodeGenOptLevel codeGenLevels[] = {
      llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less,
      llvm::CodeGenOptLevel::Default, llvm::CodeGenOptLevel::Aggressive};
  engineOptions.jitCodeGenOptLevel = codeGenLevels[std::min(options.optLevel, 3u)];
  // No debugger or profiler is listening; registering objects costs time.
  engineOptions.enableGDBNotificationListener = false;
  engineOptions.enablePerfNotificationListener = false;
  auto engine = ExecutionEngine::create(*exe->lowered, engineOptions);
  if (!engine)
    return fail("JIT compilation failed: " + llvm::toString(engine.takeError()));
  exe->engine = std::move(*engine);
  exe->engine->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    for (const auto &blob : blobs)
      symbols[interner(blob.getKey())] = {
          llvm::orc::ExecutorAddr::fromPtr(blob.getValue()),
          llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  if (!diagnostics.empty())
    return fail("JIT compilation reported errors");
  return exe;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

namespace {
/// A ranked memref descriptor over a dense row-major buffer, laid out as the
/// C interface expects: {allocated, aligned, offset, sizes[r], strides[r]}.
class MemRefDescriptor {
public:
  MemRefDescriptor(void *data, llvm::ArrayRef<int64_t> shape)
      : words(3 + 2 * shape.size()) {
    int64_t address = reinterpret_cast<int64_t>(data);
    words[0] = address;
    words[1] = address;
    words[2] = 0;
    int64_t stride = 1;
    for (size_t i = shape.size(); i-- > 0;) {
      words[3 + i] = shape[i];
      words[3 + shape.size() + i] = stride;
      stride *= shape[i];
    }
  }
  void *get() { return words.data(); }

private:
  std::vector<int64_t> words;
};
} // namespace

/// Whether a host tensor of dtype `given` can stand for `declared`. MLIR
/// integers in the imported IR are signless, so an 8-bit signature accepts
/// both i8 and u8 bytes.
static bool sameElements(DType given, DType declared) {
  auto is8Bit = [](DType t) { return t == DType::I8 || t == DType::U8; };
  return given == declared || (is8Bit(given) && is8Bit(declared));
}

static int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

llvm::Expected<std::vector<HostTensor>>
ReferenceExecutable::run(llvm::ArrayRef<NamedTensor> inputs) const {
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  auto inputNames = [&] {
    std::string names;
    for (const TensorSignature &sig : signature.inputs)
      names += (names.empty() ? "'" : ", '") + sig.name + "'";
    return names;
  };

  // Match every value to a graph input: by name where it has one, else the
  // next unfilled position.
  std::vector<const HostTensor *> bound(signature.inputs.size(), nullptr);
  size_t nextPosition = 0;
  for (const NamedTensor &value : inputs) {
    size_t index;
    if (!value.name.empty()) {
      auto it = llvm::find_if(signature.inputs, [&](const TensorSignature &sig) {
        return sig.name == value.name;
      });
      if (it == signature.inputs.end())
        return error("the graph has no input named '" + value.name +
                     "' (its inputs are " + inputNames() + ")");
      index = it - signature.inputs.begin();
    } else {
      while (nextPosition < bound.size() && bound[nextPosition])
        ++nextPosition;
      if (nextPosition == bound.size())
        return error("too many inputs: the graph takes " +
                     llvm::Twine(signature.inputs.size()));
      index = nextPosition;
    }
    if (bound[index])
      return error("input '" + signature.inputs[index].name + "' is given twice");
    const TensorSignature &sig = signature.inputs[index];
    const HostTensor &tensor = value.tensor;
    if (!sameElements(tensor.dtype, sig.dtype) || tensor.shape != sig.shape)
      return error("input '" + sig.name + "' must be " + signatureString(sig) +
                   ", got " + dtypeName(tensor.dtype) +
                   shapeString(tensor.shape));
    uint64_t expectedBytes = numElements(sig.shape) * dtypeSize(sig.dtype);
    if (tensor.bytes.size() != expectedBytes)
      return error("input '" + sig.name + "' holds " +
                   llvm::Twine(tensor.bytes.size()) + " bytes, " +
                   signatureString(sig) + " needs " +
                   llvm::Twine(expectedBytes));
    bound[index] = &tensor;
  }
  for (size_t i = 0; i < bound.size(); ++i)
    if (!bound[i])
      return error("graph input " + llvm::Twine(i) + " '" + signature.inputs[i].name +
                   "' (" + signatureString(signature.inputs[i]) + ") has no value");

  std::vector<HostTensor> outputs(signature.outputs.size());
  std::vector<MemRefDescriptor> descriptors;
  descriptors.reserve(signature.inputs.size() + signature.outputs.size());
  // The entry function never writes its inputs (they are marked read-only
  // for bufferization), so the caller's bytes are passed as they are.
  for (const HostTensor *tensor : bound)
    descriptors.emplace_back(
        const_cast<uint8_t *>(tensor->bytes.data()), tensor->shape);
  for (size_t i = 0; i < signature.outputs.size(); ++i) {
    HostTensor &out = outputs[i];
    out.dtype = signature.outputs[i].dtype;
    out.shape = signature.outputs[i].shape;
    out.bytes.assign(numElements(out.shape) * dtypeSize(out.dtype), 0);
    descriptors.emplace_back(out.bytes.data(), out.shape);
  }

  // invokePacked takes a pointer to each argument; each argument of the C
  // interface is itself a pointer to a descriptor.
  std::vector<void *> descriptorPointers;
  for (MemRefDescriptor &d : descriptors)
    descriptorPointers.push_back(d.get());
  llvm::SmallVector<void *> packed;
  for (void *&p : descriptorPointers)
    packed.push_back(&p);
  if (llvm::Error err =
          engine->invokePacked("_mlir_ciface_" + entryPoint, packed))
    return err;
  return outputs;
}

llvm::Expected<std::vector<HostTensor>>
weft::reference::runReference(ModuleOp module,
                              llvm::ArrayRef<NamedTensor> inputs,
                              const ReferenceOptions &options) {
  auto exe = ReferenceExecutable::compile(module, options);
  if (!exe)
    return exe.takeError();
  return (*exe)->run(inputs);
}
