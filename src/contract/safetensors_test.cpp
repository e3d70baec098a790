#include "contract/safetensors.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "util/fs.h"

namespace kopt::contract {
namespace {

namespace fs = std::filesystem;

// A fresh folder of this test process (removed when it ends: testing/test_support.h).
fs::path fresh(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("kopt_safetensors_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TensorMap two_tensors() {
  TensorMap m;
  Tensor a;
  a.dtype = DType::kF32;
  a.shape = {3, 5};
  a.data.resize(60);
  for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = static_cast<unsigned char>(i * 7 + 1);
  m["in.a"] = a;
  Tensor c;
  c.dtype = DType::kF16;
  c.shape = {6};
  c.data.resize(12);
  for (size_t i = 0; i < c.data.size(); ++i) c.data[i] = static_cast<unsigned char>(200 - i);
  m["out.c"] = c;
  return m;
}

// The file reader (each tensor read into its own buffer) gives what parsing the whole file's bytes gives.
TEST(Safetensors, AFileReadTensorByTensorHoldsWhatItsBytesParseTo) {
  const fs::path d = fresh("read");
  const std::string bytes = serialize_safetensors(two_tensors());
  ASSERT_TRUE(util::write_file_atomic(d / "s.safetensors", bytes).ok());
  auto read = read_safetensors(d / "s.safetensors");
  auto parsed = parse_safetensors(bytes);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(read->size(), 2u);
  for (const auto& [name, t] : *parsed) {
    ASSERT_TRUE(read->count(name)) << name;
    EXPECT_EQ(read->at(name).dtype, t.dtype) << name;
    EXPECT_EQ(read->at(name).shape, t.shape) << name;
    EXPECT_EQ(read->at(name).data, t.data) << name;
  }
  EXPECT_EQ(read->at("in.a").data, two_tensors().at("in.a").data);
}

// A file cut short, one whose header length is past its end and one that is not there: each refused with its path.
TEST(Safetensors, AShortOrMissingFileIsRefusedWithItsPath) {
  const fs::path d = fresh("short");
  const std::string bytes = serialize_safetensors(two_tensors());
  const fs::path cut = d / "cut.safetensors", tiny = d / "tiny.safetensors", huge = d / "huge.safetensors";
  ASSERT_TRUE(util::write_file_atomic(cut, bytes.substr(0, bytes.size() - 5)).ok());
  ASSERT_TRUE(util::write_file_atomic(tiny, "abc").ok());
  std::string long_header = bytes;
  long_header[7] = '\x7f';  // a header length of about 2^63
  ASSERT_TRUE(util::write_file_atomic(huge, long_header).ok());
  for (const fs::path& p : {cut, tiny, huge, d / "absent.safetensors"}) {
    auto r = read_safetensors(p);
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_NE(r.error().message.find(p.string()), std::string::npos) << r.error().message;
  }
  EXPECT_NE(read_safetensors(cut).error().message.find("points outside the file"), std::string::npos);
}

// A header whose entry lacks its offsets is an input error, not an exception out of the reader.
TEST(Safetensors, AMalformedHeaderEntryIsAnInputError) {
  std::string header = R"({"in.a":{"dtype":"F32","shape":[1]}})";
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  bytes += header + std::string(4, '\0');
  auto r = parse_safetensors(bytes, "m.safetensors");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("m.safetensors: malformed header"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace kopt::contract
