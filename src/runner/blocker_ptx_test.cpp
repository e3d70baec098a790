// The blocker's embedded PTX: generated from blocker.cu (the recorded source matches the file), for sm_90 at a
// PTX ISA old drivers load, and it assembles for sm_90 with the real ptxas (skipped where nvcc is missing).
#include "runner/blocker_ptx.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "testing/test_support.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/process.h"

namespace kopt::runner {

namespace fs = std::filesystem;

namespace {
fs::path source_root() { return testing_support::source_dir(); }
}  // namespace

TEST(Blocker, EmbeddedPtxMatchesTheCuFile) {
  auto cu = util::read_file(source_root() / "src/runner/blocker.cu");
  ASSERT_TRUE(cu.ok()) << cu.error().message;
  EXPECT_TRUE(*cu == blocker_source())
      << "src/runner/blocker_ptx.cpp is stale: run python3 scripts/embed_blocker_ptx.py";
  const std::string_view ptx = blocker_ptx();
  EXPECT_EQ(ptx.substr(0, 13), ".version 7.8\n");
  EXPECT_NE(ptx.find(".target sm_90\n"), std::string_view::npos);
  EXPECT_NE(ptx.find(std::string(".entry ") + kBlockerEntry + "("), std::string_view::npos);
  EXPECT_NE(ptx.find("ld.volatile.global.u32"), std::string_view::npos);  // the spin re-reads the host's flag
  EXPECT_NE(ptx.find("%globaltimer"), std::string_view::npos);            // and is bounded in time
  EXPECT_EQ(ptx.data()[ptx.size()], '\0');  // cuModuleLoadData takes NUL-terminated text
  // The clean flush's read pass is in the same module, its 16-byte loads kept (they are its whole point).
  const size_t read = ptx.find(std::string(".entry ") + kCleanReadEntry + "(");
  ASSERT_NE(read, std::string_view::npos);
  EXPECT_NE(ptx.find("ld.global.v4.u32", read), std::string_view::npos);
}

TEST(Blocker, PtxAssemblesForSm90) {
  const std::string nvcc = toolchain::find_nvcc();
  if (!testing_support::executable(nvcc)) GTEST_SKIP() << "nvcc not found";
  const fs::path ptxas = fs::path(nvcc).parent_path() / "ptxas";
  if (!testing_support::executable(ptxas.string())) GTEST_SKIP() << "ptxas not beside nvcc";
  const fs::path dir = fs::path(::testing::TempDir()) / ("kopt_blocker_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ASSERT_TRUE(util::write_file_atomic(dir / "blocker.ptx", std::string(blocker_ptx())).ok());
  auto r = util::run_process({{ptxas.string(), "-arch=sm_90", "-o", (dir / "blocker.cubin").string(), (dir / "blocker.ptx").string()},
                              "", {}, 120, 1 << 20, true});
  EXPECT_TRUE(r.success()) << r.stdout_text << r.stderr_text;
  fs::remove_all(dir);
}

}  // namespace kopt::runner
