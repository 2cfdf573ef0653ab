//===- TensorIOTest.cpp - .npy and ONNX TensorProto host tensors ------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//

#include "weft/TensorIO/TensorIO.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <unistd.h>

using namespace weft::tensorio;

namespace {

HostTensor iota(DType t, std::vector<int64_t> shape) {
  HostTensor h;
  h.dtype = t;
  h.shape = std::move(shape);
  uint64_t n = *h.numElements() * dtypeSize(t);
  for (uint64_t i = 0; i < n; ++i)
    h.bytes.push_back(uint8_t(i * 7 + 1));
  if (t == DType::Bool)
    for (uint8_t &b : h.bytes)
      b &= 1;
  return h;
}

std::vector<uint8_t> bytesOf(const std::string &s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

/// A v1 .npy image with the given header dict and data.
std::vector<uint8_t> npy(const std::string &dict, size_t dataBytes,
                         unsigned major = 1) {
  std::string h = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + h.size() + 1) % 64)
    h.push_back(' ');
  h.push_back('\n');
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  out.push_back(uint8_t(h.size()));
  out.push_back(uint8_t(h.size() >> 8));
  if (major != 1) {
    out.push_back(0);
    out.push_back(0);
  }
  out.insert(out.end(), h.begin(), h.end());
  out.resize(out.size() + dataBytes, 0x5a);
  return out;
}

std::string tempPath(const std::string &ext) {
  char path[] = "/tmp/weft-tensorio-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  std::remove(path);
  return std::string(path) + ext;
}

} // namespace

TEST(TensorIOTest, DTypes) {
  EXPECT_EQ(dtypeSize(DType::F16), 2u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  for (unsigned i = 0; i < kNumDTypes; ++i)
    EXPECT_EQ(parseDType(dtypeName(DType(i))), DType(i));
  EXPECT_FALSE(parseDType("f128"));
}

TEST(TensorIOTest, Validate) {
  HostTensor t = iota(DType::F32, {2, 3});
  EXPECT_EQ(t.validate(), "");
  t.bytes.pop_back();
  EXPECT_NE(t.validate().find("needs 24 bytes, the tensor holds 23"),
            std::string::npos);
  t.shape = {-1};
  EXPECT_NE(t.validate().find("negative"), std::string::npos);
  HostTensor scalar = iota(DType::F64, {});
  EXPECT_EQ(scalar.bytes.size(), 8u);
  EXPECT_EQ(scalar.validate(), "");
}

TEST(TensorIOTest, NpyRoundTripEveryType) {
  for (unsigned i = 0; i < kNumDTypes; ++i)
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{}, {5}, {2, 3}, {2, 0, 4}, {1, 2, 3, 2}}) {
      HostTensor t = iota(DType(i), shape);
      std::string err;
      std::optional<std::vector<uint8_t>> bytes = writeNpy(t, &err);
      ASSERT_TRUE(bytes) << err;
      EXPECT_EQ(bytes->size() - t.bytes.size(), 64u * ((bytes->size() - t.bytes.size()) / 64));
      std::optional<HostTensor> back = readNpy(bytes->data(), bytes->size(), &err);
      ASSERT_TRUE(back) << err;
      EXPECT_EQ(*back, t) << dtypeName(DType(i));
    }
}

TEST(TensorIOTest, NpyReadsNumpyHeaders) {
  // Headers exactly as numpy.save writes them, including v2 and 1-tuples.
  std::string err;
  auto v1 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 12);
  std::optional<HostTensor> t = readNpy(v1.data(), v1.size(), &err);
  ASSERT_TRUE(t) << err;
  EXPECT_EQ(t->shape, std::vector<int64_t>{3});
  auto v2 = npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }", 4, 2);
  t = readNpy(v2.data(), v2.size(), &err);
  ASSERT_TRUE(t) << err;
  EXPECT_EQ(t->dtype, DType::U8);
  auto scalar = npy("{'descr': '<i8', 'fortran_order': False, 'shape': (), }", 8);
  t = readNpy(scalar.data(), scalar.size(), &err);
  ASSERT_TRUE(t) << err;
  EXPECT_TRUE(t->shape.empty());
  auto boolean = npy("{\"descr\": \"|b1\", \"fortran_order\": False, \"shape\": (1,)}", 1);
  t = readNpy(boolean.data(), boolean.size(), &err);
  ASSERT_TRUE(t) << err;
  EXPECT_EQ(t->dtype, DType::Bool);
}

TEST(TensorIOTest, NpyRejections) {
  auto expectError = [](std::vector<uint8_t> b, const std::string &what) {
    std::string err;
    EXPECT_FALSE(readNpy(b.data(), b.size(), &err)) << what;
    EXPECT_NE(err.find(what), std::string::npos) << err;
  };
  expectError(bytesOf("hello world, not numpy"), "no \\x93NUMPY magic");
  expectError(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", 12),
              "Fortran order");
  expectError(npy("{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }", 12),
              "big-endian");
  expectError(npy("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", 24),
              "element type '<c8' is not supported");
  expectError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 11),
              "needs 12 data bytes, the file has 11");
  expectError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 13),
              "needs 12 data bytes, the file has 13");
  expectError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }", 12),
              "non-negative integers");
  expectError(npy("{'descr': '<f4', 'fortran_order': False}", 4),
              "needs the keys");
  expectError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", 12),
              "unknown key 'x'");
  expectError(npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 12),
              "appears twice");
  expectError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), } x", 12),
              "unexpected text");
  expectError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': "
                  "(4294967296, 4294967296, 4294967296), }", 0),
              "too many elements");
  expectError(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 12, 4),
              "version 4.0 is not supported");
  // Header length beyond the file.
  std::vector<uint8_t> b = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 0);
  b[8] = 0xff;
  b[9] = 0xff;
  expectError(b, "header claims 65535 bytes");
  // Every truncation of a valid file is rejected.
  std::string err;
  std::vector<uint8_t> good = *writeNpy(iota(DType::I16, {3, 5}), &err);
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_FALSE(readNpy(good.data(), n, &err)) << n;
}

TEST(TensorIOTest, OnnxRoundTripEveryType) {
  for (unsigned i = 0; i < kNumDTypes; ++i) {
    HostTensor t = iota(DType(i), {2, 3});
    std::string err;
    std::optional<std::vector<uint8_t>> bytes = writeOnnxTensor(t, "x", &err);
    ASSERT_TRUE(bytes) << err;
    std::optional<HostTensor> back =
        readOnnxTensor(bytes->data(), bytes->size(), &err);
    ASSERT_TRUE(back) << err;
    EXPECT_EQ(*back, t) << dtypeName(DType(i));
  }
}

namespace {
std::vector<uint8_t> serialize(const onnx::TensorProto &p) {
  std::string s;
  EXPECT_TRUE(p.SerializeToString(&s));
  return std::vector<uint8_t>(s.begin(), s.end());
}
} // namespace

TEST(TensorIOTest, OnnxTypedFields) {
  std::string err;
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(2);
  p.add_float_data(1.5f);
  p.add_float_data(-2.0f);
  std::vector<uint8_t> b = serialize(p);
  std::optional<HostTensor> t = readOnnxTensor(b.data(), b.size(), &err);
  ASSERT_TRUE(t) << err;
  float f[2];
  std::memcpy(f, t->bytes.data(), 8);
  EXPECT_EQ(f[0], 1.5f);
  EXPECT_EQ(f[1], -2.0f);

  onnx::TensorProto q;
  q.set_data_type(onnx::TensorProto::INT8);
  q.add_dims(3);
  for (int v : {-128, 0, 127})
    q.add_int32_data(v);
  b = serialize(q);
  t = readOnnxTensor(b.data(), b.size(), &err);
  ASSERT_TRUE(t) << err;
  EXPECT_EQ(t->bytes, (std::vector<uint8_t>{0x80, 0, 0x7f}));

  onnx::TensorProto h;
  h.set_data_type(onnx::TensorProto::FLOAT16);
  h.add_dims(1);
  h.add_int32_data(0x3c00);
  b = serialize(h);
  t = readOnnxTensor(b.data(), b.size(), &err);
  ASSERT_TRUE(t) << err;
  EXPECT_EQ(t->bytes, (std::vector<uint8_t>{0x00, 0x3c}));

  onnx::TensorProto l;
  l.set_data_type(onnx::TensorProto::INT64);
  l.add_int64_data(-2); // no dims: a scalar
  b = serialize(l);
  t = readOnnxTensor(b.data(), b.size(), &err);
  ASSERT_TRUE(t) << err;
  EXPECT_TRUE(t->shape.empty());
  EXPECT_EQ(t->bytes, (std::vector<uint8_t>{0xfe, 0xff, 0xff, 0xff, 0xff,
                                            0xff, 0xff, 0xff}));

  onnx::TensorProto d;
  d.set_data_type(onnx::TensorProto::DOUBLE);
  d.add_dims(1);
  d.add_double_data(0.25);
  b = serialize(d);
  t = readOnnxTensor(b.data(), b.size(), &err);
  ASSERT_TRUE(t) << err;
  double x;
  std::memcpy(&x, t->bytes.data(), 8);
  EXPECT_EQ(x, 0.25);
}

TEST(TensorIOTest, OnnxRejections) {
  auto expectError = [](const onnx::TensorProto &p, const std::string &what) {
    std::vector<uint8_t> b = serialize(p);
    std::string err;
    EXPECT_FALSE(readOnnxTensor(b.data(), b.size(), &err)) << what;
    EXPECT_NE(err.find(what), std::string::npos) << err;
  };
  std::string err;
  std::vector<uint8_t> junk = {0xff, 0xff, 0xff, 0xff, 0x0f};
  EXPECT_FALSE(readOnnxTensor(junk.data(), junk.size(), &err));
  EXPECT_NE(err.find("not a valid onnx.TensorProto"), std::string::npos) << err;

  onnx::TensorProto p;
  p.set_name("x");
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(5);
  p.set_raw_data(std::string(16, '\0'));
  expectError(p, "TensorProto 'x': 5 f32 elements need 20 bytes of raw_data, "
                 "found 16");
  p.clear_raw_data();
  p.add_float_data(1);
  expectError(p, "5 elements expected in float_data, found 1");
  p.set_dims(0, 1);
  p.set_data_type(onnx::TensorProto::STRING);
  expectError(p, "data type 8, which is not supported");
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.set_data_location(onnx::TensorProto::EXTERNAL);
  expectError(p, "external file");
  onnx::TensorProto q;
  q.set_data_type(onnx::TensorProto::UINT8);
  q.add_dims(1);
  q.add_int32_data(256);
  expectError(q, "int32_data[0] = 256 does not fit u8");
  q.set_dims(0, -1);
  expectError(q, "negative dimension");
  q.set_dims(0, int64_t(1) << 62);
  q.add_dims(int64_t(1) << 62);
  expectError(q, "too many elements");
  q.set_dims(0, int64_t(1) << 40);
  q.set_dims(1, 1);
  expectError(q, "1099511627776 elements expected in int32_data, found 1");

  HostTensor bad = iota(DType::F32, {4});
  bad.bytes.pop_back();
  EXPECT_FALSE(writeOnnxTensor(bad, "x", &err));
  EXPECT_NE(err.find("needs 16 bytes"), std::string::npos) << err;
  EXPECT_FALSE(writeNpy(bad, &err));
}

TEST(TensorIOTest, TensorFiles) {
  for (const char *ext : {".npy", ".pb"}) {
    std::string path = tempPath(ext);
    HostTensor t = iota(DType::F16, {3, 2});
    std::string err;
    ASSERT_TRUE(writeTensorFile(path, t, &err)) << err;
    std::optional<HostTensor> back = readTensorFile(path, &err);
    std::remove(path.c_str());
    ASSERT_TRUE(back) << err;
    EXPECT_EQ(*back, t);
  }
  std::string err;
  EXPECT_FALSE(readTensorFile("/tmp/x.csv", &err));
  EXPECT_NE(err.find("unknown tensor file extension"), std::string::npos);
  EXPECT_FALSE(writeTensorFile("/tmp/x.txt", iota(DType::F32, {1}), &err));
  EXPECT_FALSE(readTensorFile("/nonexistent/x.npy", &err));
  EXPECT_NE(err.find("cannot open"), std::string::npos);
}
