#include "compile/command.h"

#include <gtest/gtest.h>

namespace kopt::compile {
namespace {

using V = std::vector<std::string>;

TEST(CompileCommand, ArchFlags) {
  EXPECT_EQ(*arch_flags("sm_90"), V{"-arch=sm_90"});
  EXPECT_EQ(*arch_flags("sm_80"), V{"-arch=sm_80"});
  EXPECT_EQ(*arch_flags("sm_90a"), V{"-gencode=arch=compute_90a,code=sm_90a"});
  EXPECT_EQ(*arch_flags("sm_100f"), V{"-gencode=arch=compute_100f,code=sm_100f"});
  for (const char* bad : {"", "sm_", "90", "sm_9x0", "sm_90ab", "compute_90", "sm_90A"})
    EXPECT_FALSE(arch_flags(bad).ok()) << bad;
}

TEST(CompileCommand, FlagsAndArgv) {
  CompileRequest r;
  r.name = "c1";
  r.source = "/runs/it1/c1/kernel.cu";
  r.defines = {{"KOPT_VEC4", "1"}, {"BLOCK", "256"}, {"FLAG", ""}};
  r.include_dirs = {"/opt/cutlass/include"};
  r.extra_flags = {"-maxrregcount=32"};
  auto f = nvcc_flags(r);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, (V{"-shared", "-Xcompiler", "-fPIC", "-O3", "-lineinfo", "-Xptxas", "-v", "-arch=sm_90",
                   "-DBLOCK=256", "-DFLAG", "-DKOPT_VEC4=1", "-I/opt/cutlass/include", "-maxrregcount=32"}));
  auto argv = nvcc_argv("/usr/local/cuda/bin/nvcc", *f, r.source, "/cache/tmp/1-0/kernel.so");
  ASSERT_GE(argv.size(), 5u);
  EXPECT_EQ(argv.front(), "/usr/local/cuda/bin/nvcc");
  EXPECT_EQ((V{argv.end() - 4, argv.end()}),
            (V{"-I/runs/it1/c1", "-o", "/cache/tmp/1-0/kernel.so", "/runs/it1/c1/kernel.cu"}));
  r.arch = "sm90";
  EXPECT_FALSE(nvcc_flags(r).ok());
}

TEST(CompileCommand, MethodGuard) {
  EXPECT_EQ(method_guard("vec4"), "KOPT_VEC4");
  EXPECT_EQ(method_guard("cp-async.v2"), "KOPT_CP_ASYNC_V2");
}

TEST(CompileCommand, CacheKeyCoversEveryInput) {
  KeyInputs base;
  base.nvcc_version = "Cuda compilation tools, release 13.0, V13.0.88";
  base.flags = {"-O3", "-arch=sm_90"};
  base.source_text = "__global__ void k() {}";
  base.headers = {{"tile.h", "#define T 16"}};
  const std::string k0 = cache_key(base);
  EXPECT_EQ(k0.size(), 32u);
  EXPECT_EQ(cache_key(base), k0);  // deterministic

  auto changed = [&](auto mutate) {
    KeyInputs k = base;
    mutate(k);
    return cache_key(k) != k0;
  };
  EXPECT_TRUE(changed([](KeyInputs& k) { k.nvcc_version += "x"; }));
  EXPECT_TRUE(changed([](KeyInputs& k) { k.flags.push_back("-DX=1"); }));
  EXPECT_TRUE(changed([](KeyInputs& k) { k.flags[1] = "-arch=sm_80"; }));
  EXPECT_TRUE(changed([](KeyInputs& k) { k.source_text += " "; }));
  EXPECT_TRUE(changed([](KeyInputs& k) { k.headers[0].second = "#define T 32"; }));
  EXPECT_TRUE(changed([](KeyInputs& k) { k.headers[0].first = "other.h"; }));
  EXPECT_TRUE(changed([](KeyInputs& k) { k.env.emplace_back("NVCC_APPEND_FLAGS", "-G"); }));
  // Field boundaries matter: moving text between source and header changes the key.
  EXPECT_TRUE(changed([](KeyInputs& k) {
    k.source_text += "#define T 16";
    k.headers.clear();
  }));
}

}  // namespace
}  // namespace kopt::compile
