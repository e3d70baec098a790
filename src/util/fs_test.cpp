#include "util/fs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace kopt::util {
namespace {

namespace fs = std::filesystem;

// read_file returns every byte (binary, empty, larger than its read chunk) and names what it cannot read.
TEST(ReadFile, ReturnsEveryByteAndNamesWhatItCannotRead) {
  const fs::path root = fs::temp_directory_path() / ("kopt-read-file-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::string big(3 * (1 << 20) + 7, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 2654435761u) >> 13);
  ASSERT_TRUE(write_file_atomic(root / "big.bin", big).ok());
  auto got = read_file(root / "big.bin");
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->size(), big.size());
  EXPECT_TRUE(*got == big);
  ASSERT_TRUE(write_file_atomic(root / "empty", "").ok());
  EXPECT_EQ(read_file(root / "empty").value(), "");
  auto missing = read_file(root / "missing.txt");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("missing.txt"), std::string::npos) << missing.error().message;
  auto dir = read_file(root);
  EXPECT_FALSE(dir.ok()) << "a directory is not a file";
  // /proc files report size 0 and still have content.
  auto proc = read_file("/proc/self/status");
  ASSERT_TRUE(proc.ok());
  EXPECT_NE(proc->find("Name:"), std::string::npos);
  fs::remove_all(root);
}

TEST(KoptCacheDir, FollowsTheEnvironmentInOrder) {
  const char* k = std::getenv("KOPT_CACHE_DIR");
  const char* x = std::getenv("XDG_CACHE_HOME");
  const std::string saved_k = k ? k : "", saved_x = x ? x : "";
  ::setenv("KOPT_CACHE_DIR", "/c", 1);
  EXPECT_EQ(kopt_cache_dir("tools"), fs::path("/c/tools"));
  ::unsetenv("KOPT_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/x", 1);
  EXPECT_EQ(kopt_cache_dir("golden"), fs::path("/x/kopt/golden"));
  ::unsetenv("XDG_CACHE_HOME");
  if (const char* h = std::getenv("HOME"); h && *h) {
    EXPECT_EQ(kopt_cache_dir("g"), fs::path(h) / ".cache" / "kopt" / "g");
  }
  if (k) ::setenv("KOPT_CACHE_DIR", saved_k.c_str(), 1);
  if (x) ::setenv("XDG_CACHE_HOME", saved_x.c_str(), 1);
}

}  // namespace
}  // namespace kopt::util
