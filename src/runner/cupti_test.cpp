#include "runner/cupti.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "device/cuda_driver.h"

namespace kopt::runner {

namespace {

// Sets an environment variable for one scope, restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST(CuptiOpen, KoptCupti0DisablesIt) {
  ScopedEnv off("KOPT_CUPTI", "0");
  EXPECT_TRUE(KernelClock::disabled_by_env());
  std::string why;
  EXPECT_EQ(KernelClock::open(&why), nullptr);
  EXPECT_EQ(why, "disabled");
}

TEST(CuptiOpen, GivesAClockOrAClearReasonWithoutCrashing) {
  // libcupti is installed on the build machine; without a GPU driver enabling activity may fail: either way
  // the answer is clean, and the same on a second try (CUPTI is started once per process).
  ::unsetenv("KOPT_CUPTI");
  std::string why;
  auto clock = KernelClock::open(&why);
  if (clock) {
    EXPECT_TRUE(why.empty());
    EXPECT_FALSE(clock->library_path().empty());
    clock->drain();
    std::vector<GpuActivity> none = clock->collect();  // nothing ran on the GPU in between
    EXPECT_TRUE(none.empty());
    std::string second_why;
    EXPECT_EQ(KernelClock::open(&second_why), nullptr);  // one clock at a time
    EXPECT_FALSE(second_why.empty());
    clock.reset();
    EXPECT_NE(KernelClock::open(&second_why), nullptr);  // and again once it is closed
  } else {
    EXPECT_FALSE(why.empty());
    EXPECT_NE(why, "disabled");
    std::string again;
    EXPECT_EQ(KernelClock::open(&again), nullptr);
    EXPECT_EQ(again, why);
  }
  std::printf("[cupti] %s\n", clock ? ("open: " + clock->library_path()).c_str() : ("off: " + why).c_str());
}

TEST(CuptiOpen, AMissingLibraryNamedByKoptCuptiLibIsSkippedForTheUsualPlaces) {
  // KOPT_CUPTI_LIB only adds a first candidate: a wrong one is not fatal. (Checked for not crashing: CUPTI is
  // started once per process, so which library won is decided by the first open of the test binary.)
  ScopedEnv lib("KOPT_CUPTI_LIB", "/nonexistent/libcupti.so");
  std::string why;
  auto clock = KernelClock::open(&why);
  EXPECT_TRUE(clock != nullptr || !why.empty());
}

}  // namespace kopt::runner
