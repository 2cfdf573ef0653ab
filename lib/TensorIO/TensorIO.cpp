//===- TensorIO.cpp - Host tensors and the .npy format ----------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The .npy format: the magic "\x93NUMPY", a major and minor version byte, a
// header length (2 bytes in version 1, 4 bytes in versions 2 and 3), and a
// Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2,
// 3), } padded with spaces and a newline so that the data starts at a
// multiple of 64 bytes. The data follows, in C order. The dict parser below
// accepts exactly those three keys and the literal forms NumPy writes.
//
//===----------------------------------------------------------------------===//

#include "weft/TensorIO/TensorIO.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace weft::tensorio;

unsigned weft::tensorio::dtypeSize(DType t) {
  switch (t) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::I16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  }
  return 0;
}

static const char *kNames[] = {"f32", "f16", "f64", "i8", "u8",
                               "i16", "i32", "i64", "bool"};

const char *weft::tensorio::dtypeName(DType t) {
  return unsigned(t) < kNumDTypes ? kNames[unsigned(t)] : "?";
}

std::optional<DType> weft::tensorio::parseDType(const std::string &name) {
  for (unsigned i = 0; i < kNumDTypes; ++i)
    if (name == kNames[i])
      return DType(i);
  return std::nullopt;
}

std::optional<uint64_t> HostTensor::numElements() const {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d && n > UINT64_MAX / uint64_t(d))
      return std::nullopt;
    n *= uint64_t(d);
  }
  return n;
}

static std::string shapeString(const std::vector<int64_t> &shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

/// Bytes a tensor of `shape` and `t` needs, or nullopt on a negative
/// dimension or overflow.
static std::optional<uint64_t> byteSize(DType t,
                                        const std::vector<int64_t> &shape) {
  HostTensor probe;
  probe.shape = shape;
  std::optional<uint64_t> n = probe.numElements();
  if (!n || *n > UINT64_MAX / dtypeSize(t))
    return std::nullopt;
  return *n * dtypeSize(t);
}

std::string HostTensor::validate() const {
  if (unsigned(dtype) >= kNumDTypes)
    return "element type " + std::to_string(unsigned(dtype)) +
           " does not exist";
  std::optional<uint64_t> want = byteSize(dtype, shape);
  if (!want)
    return "shape " + shapeString(shape) +
           " has a negative dimension or too many elements";
  if (*want != bytes.size())
    return "shape " + shapeString(shape) + " of " + dtypeName(dtype) +
           " needs " + std::to_string(*want) + " bytes, the tensor holds " +
           std::to_string(bytes.size());
  return "";
}

template <typename T>
static std::optional<T> fail(std::string *error, const std::string &msg) {
  if (error)
    *error = msg;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

static const uint8_t kNpyMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

namespace {
/// A parser for the header dict; errors carry the header text position.
class DictParser {
public:
  explicit DictParser(const std::string &s) : s(s) {}

  bool parse(std::string &descr, bool &fortran, std::vector<int64_t> &shape) {
    bool haveDescr = false, haveFortran = false, haveShape = false;
    if (!expect('{'))
      return false;
    while (true) {
      skip();
      if (peek('}')) {
        ++i;
        break;
      }
      std::string key;
      if (!string(key) || !expect(':'))
        return false;
      if (key == "descr") {
        if (haveDescr)
          return bad("key 'descr' appears twice");
        haveDescr = true;
        if (!string(descr))
          return false;
      } else if (key == "fortran_order") {
        if (haveFortran)
          return bad("key 'fortran_order' appears twice");
        haveFortran = true;
        skip();
        if (s.compare(i, 4, "True") == 0) {
          fortran = true;
          i += 4;
        } else if (s.compare(i, 5, "False") == 0) {
          fortran = false;
          i += 5;
        } else {
          return bad("'fortran_order' must be True or False");
        }
      } else if (key == "shape") {
        if (haveShape)
          return bad("key 'shape' appears twice");
        haveShape = true;
        if (!tuple(shape))
          return false;
      } else {
        return bad("unknown key '" + key + "'");
      }
      skip();
      if (peek(',')) {
        ++i;
        continue;
      }
      if (!expect('}'))
        return false;
      break;
    }
    skip();
    if (i != s.size())
      return bad("unexpected text after the dict");
    if (!haveDescr || !haveFortran || !haveShape)
      return bad("the header needs the keys 'descr', 'fortran_order' and "
                 "'shape'");
    return true;
  }

  std::string error;

private:
  bool bad(const std::string &msg) {
    if (error.empty())
      error = "header dict, character " + std::to_string(i) + ": " + msg;
    return false;
  }
  void skip() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
      ++i;
  }
  bool peek(char c) { return i < s.size() && s[i] == c; }
  bool expect(char c) {
    skip();
    if (!peek(c))
      return bad(std::string("expected '") + c + "'");
    ++i;
    return true;
  }
  bool string(std::string &out) {
    skip();
    if (!peek('\'') && !peek('"'))
      return bad("expected a quoted string");
    char q = s[i++];
    size_t end = s.find(q, i);
    if (end == std::string::npos)
      return bad("unterminated string");
    out = s.substr(i, end - i);
    i = end + 1;
    return true;
  }
  bool tuple(std::vector<int64_t> &out) {
    if (!expect('('))
      return false;
    while (true) {
      skip();
      if (peek(')')) {
        ++i;
        return true;
      }
      if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i])))
        return bad("shape entries must be non-negative integers");
      int64_t v = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        if (v > (INT64_MAX - 9) / 10)
          return bad("shape entry too large");
        v = v * 10 + (s[i++] - '0');
      }
      // NumPy may write "3L" in headers from Python 2.
      if (peek('L'))
        ++i;
      out.push_back(v);
      skip();
      if (peek(',')) {
        ++i;
        continue;
      }
      if (!expect(')'))
        return false;
      return true;
    }
  }

  const std::string &s;
  size_t i = 0;
};
} // namespace

/// The NumPy type string for each DType; one-byte types use '|'.
static const char *npyDescr(DType t) {
  static const char *d[] = {"<f4", "<f2", "<f8", "|i1", "|u1",
                            "<i2", "<i4", "<i8", "|b1"};
  return d[unsigned(t)];
}

static std::optional<DType> parseDescr(const std::string &descr,
                                       std::string &why) {
  if (descr.size() == 3) {
    char order = descr[0];
    std::string code = descr.substr(1);
    for (unsigned i = 0; i < kNumDTypes; ++i) {
      DType t = DType(i);
      if (code != std::string(npyDescr(t)).substr(1))
        continue;
      bool oneByte = dtypeSize(t) == 1;
      if (order == '<' || (oneByte && (order == '|' || order == '=')))
        return t;
      if (order == '>' && !oneByte) {
        why = "big-endian data ('" + descr + "') is not supported";
        return std::nullopt;
      }
    }
  }
  why = "element type '" + descr +
        "' is not supported (f4, f2, f8, i1, u1, i2, i4, i8, b1, "
        "little-endian)";
  return std::nullopt;
}

std::optional<HostTensor> weft::tensorio::readNpy(const uint8_t *data,
                                                  size_t size,
                                                  std::string *error) {
  using R = HostTensor;
  if (size < 10 || std::memcmp(data, kNpyMagic, 6) != 0)
    return fail<R>(error, "not a .npy file: no \\x93NUMPY magic");
  unsigned major = data[6], minor = data[7];
  size_t headerLen, pos;
  if (major == 1) {
    headerLen = size_t(data[8]) | (size_t(data[9]) << 8);
    pos = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return fail<R>(error, ".npy version " + std::to_string(major) +
                                " header is truncated");
    headerLen = size_t(data[8]) | (size_t(data[9]) << 8) |
                (size_t(data[10]) << 16) | (size_t(data[11]) << 24);
    pos = 12;
  } else {
    return fail<R>(error, ".npy version " + std::to_string(major) + "." +
                              std::to_string(minor) + " is not supported");
  }
  if (headerLen > size - pos)
    return fail<R>(error, ".npy header claims " + std::to_string(headerLen) +
                              " bytes but only " +
                              std::to_string(size - pos) + " remain");
  std::string header(reinterpret_cast<const char *>(data + pos), headerLen);
  pos += headerLen;
  // Strip the padding: trailing spaces and the final newline.
  while (!header.empty() && (header.back() == ' ' || header.back() == '\n' ||
                             header.back() == '\0'))
    header.pop_back();
  std::string descr;
  bool fortran = false;
  HostTensor t;
  DictParser dict(header);
  if (!dict.parse(descr, fortran, t.shape))
    return fail<R>(error, "malformed .npy " + dict.error);
  if (fortran)
    return fail<R>(error, ".npy data in Fortran order is not supported "
                          "(save it with fortran_order=False / C order)");
  std::string why;
  std::optional<DType> dt = parseDescr(descr, why);
  if (!dt)
    return fail<R>(error, ".npy " + why);
  t.dtype = *dt;
  std::optional<uint64_t> want = byteSize(t.dtype, t.shape);
  if (!want)
    return fail<R>(error, ".npy shape " + shapeString(t.shape) +
                              " has too many elements");
  if (*want != size - pos)
    return fail<R>(error, ".npy shape " + shapeString(t.shape) + " of " +
                              dtypeName(t.dtype) + " needs " +
                              std::to_string(*want) + " data bytes, the file "
                              "has " + std::to_string(size - pos));
  t.bytes.assign(data + pos, data + size);
  return t;
}

std::optional<std::vector<uint8_t>>
weft::tensorio::writeNpy(const HostTensor &t, std::string *error) {
  using R = std::vector<uint8_t>;
  std::string err = t.validate();
  if (!err.empty())
    return fail<R>(error, err);
  std::ostringstream os;
  os << "{'descr': '" << npyDescr(t.dtype)
     << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.shape.size(); ++i)
    os << t.shape[i] << (t.shape.size() == 1 || i + 1 < t.shape.size() ? ","
                                                                       : "")
       << (i + 1 < t.shape.size() ? " " : "");
  os << "), }";
  std::string dict = os.str();
  // Pad with spaces and a newline so the data starts 64-byte aligned.
  unsigned version = dict.size() + 1 + 10 > 65535 ? 2 : 1;
  size_t prefix = version == 1 ? 10 : 12;
  size_t total = prefix + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict.push_back('\n');
  std::vector<uint8_t> out(kNpyMagic, kNpyMagic + 6);
  out.push_back(uint8_t(version));
  out.push_back(0);
  size_t len = dict.size();
  out.push_back(uint8_t(len));
  out.push_back(uint8_t(len >> 8));
  if (version == 2) {
    out.push_back(uint8_t(len >> 16));
    out.push_back(uint8_t(len >> 24));
  }
  out.insert(out.end(), dict.begin(), dict.end());
  out.insert(out.end(), t.bytes.begin(), t.bytes.end());
  return out;
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::optional<HostTensor>
weft::tensorio::readTensorFile(const std::string &path, std::string *error) {
  using R = HostTensor;
  bool npy = endsWith(path, ".npy"), pb = endsWith(path, ".pb");
  if (!npy && !pb)
    return fail<R>(error, "'" + path +
                              "': unknown tensor file extension (.npy or .pb)");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail<R>(error, "cannot open '" + path + "'");
  in.seekg(0, std::ios::end);
  std::streamoff len = in.tellg();
  in.seekg(0, std::ios::beg);
  if (len < 0)
    return fail<R>(error, "cannot read '" + path + "'");
  std::vector<uint8_t> bytes(static_cast<size_t>(len));
  if (len && !in.read(reinterpret_cast<char *>(bytes.data()), len))
    return fail<R>(error, "cannot read '" + path + "'");
  std::string err;
  std::optional<HostTensor> t =
      npy ? readNpy(bytes.data(), bytes.size(), &err)
          : readOnnxTensor(bytes.data(), bytes.size(), &err);
  if (!t)
    return fail<R>(error, path + ": " + err);
  return t;
}

bool weft::tensorio::writeTensorFile(const std::string &path,
                                     const HostTensor &t, std::string *error) {
  std::optional<std::vector<uint8_t>> bytes;
  std::string err;
  if (endsWith(path, ".npy")) {
    bytes = writeNpy(t, &err);
  } else if (endsWith(path, ".pb")) {
    size_t slash = path.find_last_of('/');
    std::string stem = path.substr(slash == std::string::npos ? 0 : slash + 1);
    stem.resize(stem.size() - 3);
    bytes = writeOnnxTensor(t, stem, &err);
  } else {
    err = "unknown tensor file extension (.npy or .pb)";
  }
  if (!bytes) {
    if (error)
      *error = "'" + path + "': " + err;
    return false;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out)
    out.write(reinterpret_cast<const char *>(bytes->data()),
              std::streamsize(bytes->size()));
  if (!out) {
    if (error)
      *error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}
