#include "util/input_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "util/fs.h"

namespace kopt::util {
namespace {

namespace fs = std::filesystem;

TEST(InputFile, AFileTheUserNamedSaysWhatItIsInstead) {
  fs::path dir = fs::path(::testing::TempDir()) / ("kopt-input-file-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "k.cu");  // a folder named like a kernel
  auto folder = require_regular_file(dir / "k.cu", "kernel file");
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.error().code, ExitCode::kInput);
  EXPECT_NE(folder.error().message.find("is a directory"), std::string::npos) << folder.error().message;
  auto missing = require_regular_file(dir / "none.cu", "kernel file");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("kernel file " + (dir / "none.cu").string() + " not found"), std::string::npos);
  ASSERT_TRUE(write_file_atomic(dir / "bin.cu", std::string("\x7f" "ELF\0\0\0", 7)).ok());
  auto binary = read_text_file(dir / "bin.cu", "kernel file");
  ASSERT_FALSE(binary.ok());
  EXPECT_NE(binary.error().message.find("not a text file"), std::string::npos) << binary.error().message;
  ASSERT_TRUE(write_file_atomic(dir / "ok.cu", "extern \"C\" void solve() {}\n").ok());
  auto text = read_text_file(dir / "ok.cu", "kernel file");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "extern \"C\" void solve() {}\n");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kopt::util
