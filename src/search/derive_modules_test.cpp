// A Triton wrapper's imported kernels: their modules found as Python would (derive_modules.cpp), and a tile one block
// of which covers a run_kernel argument (`covers=`, derive_triton.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "search/derive.h"
#include "search/derive_text.h"
#include "util/fs.h"

namespace kopt::search {
namespace {

namespace fs = std::filesystem;

// Liger-Kernel's row kernel, as its module spells it: one program a row, one block the whole row.
constexpr const char* kRowKernel = R"PY(import triton
import triton.language as tl


@triton.jit
def _row_kernel(
    Y_ptr,
    X_ptr,
    stride,
    n_cols,
    eps,
    casting: tl.constexpr,  # a comment naming BLOCK_SIZE is never read
    BLOCK_SIZE: tl.constexpr,
):
    """Docstrings that say BLOCK_SIZE * 2 are never read either."""
    row = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    x = tl.load(X_ptr + row * stride + col_offsets, mask=mask, other=0)
    tl.store(Y_ptr + row * stride + col_offsets, x / tl.sum(x * x, axis=0), mask=mask)


@triton.jit
def _looped_kernel(Y_ptr, X_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        tl.store(Y_ptr + row * n_cols + cols, tl.load(X_ptr + row * n_cols + cols, mask=cols < n_cols), mask=cols < n_cols)


@triton.jit
def _tiled_kernel(Y_ptr, X_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y_ptr + offs, tl.load(X_ptr + offs, mask=offs < n), mask=offs < n)
)PY";

// A wrapper as the corpus writes one: the project's package put on sys.path from a folder beside this one.
constexpr const char* kWrapper = R"PY(import os
import sys

_PKG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "_fetched", "proj-1.0")
if _PKG not in sys.path:
    sys.path.insert(0, _PKG)

from proj.ops.rows import _row_kernel, _looped_kernel  # noqa: E402
from proj.ops.rows import _tiled_kernel as tiled  # noqa: E402


def run_kernel(*, X, Y, n_rows, n_cols, n):
    BLOCK_SIZE = 4096
    _row_kernel[(n_rows,)](Y, X, X.stride(0), n_cols, 1e-6, casting=0, BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
    _looped_kernel[(n_rows,)](Y, X, n_cols, BLOCK_SIZE=1024)
    tiled[(triton.cdiv(n, 256),)](Y, X, n, BLOCK=256)
)PY";

struct Tree {
  fs::path root = fs::path(::testing::TempDir()) / ("kopt_derive_modules_" + std::to_string(::getpid()));
  fs::path wrapper = root / "corpus" / "row" / "kernel.py";
  Tree() {
    fs::create_directories(root / "corpus" / "_fetched" / "proj-1.0" / "proj" / "ops");
    fs::create_directories(wrapper.parent_path());
    EXPECT_TRUE(util::write_file_atomic(root / "corpus" / "_fetched" / "proj-1.0" / "proj" / "ops" / "rows.py", kRowKernel).ok());
    EXPECT_TRUE(util::write_file_atomic(wrapper, kWrapper).ok());
  }
  ~Tree() { fs::remove_all(root); }
};

const DerivedParam* param(const Derivation& d, const std::string& name) {
  for (const auto& p : d.params)
    if (p.name == name) return &p;
  return nullptr;
}

TEST(DeriveModules, TheModulesAWrapperImportsAreFoundOnThePathsItAddsToSysPath) {
  Tree t;
  const auto mods = local_includes(t.wrapper, kWrapper);
  ASSERT_EQ(mods.size(), 1u);  // one module, imported twice
  EXPECT_EQ(mods[0].spelled, "proj.ops.rows");
  EXPECT_NE(mods[0].text.find("def _row_kernel("), std::string::npos);
  // A path it cannot evaluate without running the file: nothing found, nothing guessed.
  std::string other = kWrapper;
  other.replace(other.find("os.path.abspath(__file__)"), 25, "find_root()");
  EXPECT_TRUE(local_includes(t.wrapper, other).empty());
  // The folder as a plain string literal assigned to a name (an absolute path, as a user's wrapper may write it).
  std::string literal = kWrapper;
  const size_t a = literal.find("os.path.join(os.path.dirname");
  literal.replace(a, literal.find('\n', a) - a, "\"" + (t.root / "corpus" / "_fetched" / "proj-1.0").string() + "\"");
  const auto found = local_includes(t.wrapper, literal);
  ASSERT_EQ(found.size(), 1u) << literal;
  EXPECT_EQ(found[0].spelled, "proj.ops.rows");
}

TEST(DeriveModules, ATileOneBlockOfWhichCoversARowCoversItsRunKernelArgument) {
  Tree t;
  auto d = derive(kWrapper, "kernel.py", local_includes(t.wrapper, kWrapper));
  ASSERT_TRUE(d.ok()) << d.error().message;
  const DerivedParam* row = param(*d, "BLOCK_SIZE");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->covers, "n_cols") << row->reason;
  EXPECT_NE(row->reason.find("one block of it covers n_cols (_row_kernel reads tl.arange(0, BLOCK_SIZE) masked by < n_cols"),
            std::string::npos)
      << row->reason;
  EXPECT_NE(annotation_text(*d).find("default=4096 kind=constexpr covers=n_cols"), std::string::npos) << annotation_text(*d);
  EXPECT_EQ(to_json(*d)["params"][0]["covers"], "n_cols");
  // The copy's annotations read back with it: the space knows the dim.
  auto back = parse_annotations(d->instrumented, "kernel.py");
  ASSERT_TRUE(back.ok()) << back.error().message;
  bool seen = false;
  for (const auto& p : back->params) seen = seen || (p.name == "BLOCK_SIZE" && p.covers == "n_cols");
  EXPECT_TRUE(seen) << d->instrumented;
  // A loop over blocks, a program id scaled by the tile: more programs or iterations cover the extent.
  for (const auto& p : d->params) {
    if (p.origin == "BLOCK_SIZE" && p.name != "BLOCK_SIZE") {  // the second launch's literal (a local's name taken)
      EXPECT_TRUE(p.covers.empty()) << p.name << ": " << p.reason;
    }
    if (p.origin == "BLOCK") {
      EXPECT_TRUE(p.covers.empty()) << p.reason;
    }
  }
  // Without the module's text, nothing is said.
  auto bare = derive(kWrapper, "kernel.py");
  ASSERT_TRUE(bare.ok());
  EXPECT_TRUE(param(*bare, "BLOCK_SIZE")->covers.empty());
}

TEST(DeriveModules, AKernelInTheFileIsReadToo) {
  const std::string file = std::string(kRowKernel) + R"PY(

def run_kernel(*, X, Y, n_rows, n_cols):
    _row_kernel[(n_rows,)](Y, X, X.stride(0), n_cols, 1e-6, casting=0, BLOCK_SIZE=1024)
)PY";
  auto d = derive(file, "kernel.py");
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_NE(param(*d, "BLOCK_SIZE"), nullptr);
  EXPECT_EQ(param(*d, "BLOCK_SIZE")->covers, "n_cols");
  // The extent passed as something that is not an argument of run_kernel: a note, no covers.
  std::string computed = file;
  computed.replace(computed.find("X.stride(0), n_cols,"), 20, "X.stride(0), n_cols // 2,");
  auto e = derive(computed, "kernel.py");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(param(*e, "BLOCK_SIZE")->covers.empty());
  bool noted = false;
  for (const auto& n : e->notes)
    noted = noted || n.find("one block of BLOCK_SIZE covers n_cols of _row_kernel, passed as n_cols // 2") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(DeriveModules, UsesOfTheTileBesideItsRangeOrABoundThatIsAConstexprAreNoCover) {
  const std::string base = R"PY(
@triton.jit
def k(Y_ptr, n_cols, LIMIT: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    cols = tl.arange(0, BLOCK_SIZE)
    BODY


def run_kernel(*, Y, n_cols):
    k[(1,)](Y, n_cols, LIMIT=64, BLOCK_SIZE=1024)
)PY";
  auto covers = [&](const std::string& body) {
    std::string f = base;
    f.replace(f.find("BODY"), 4, body);
    auto d = derive(f, "kernel.py");
    EXPECT_TRUE(d.ok());
    const DerivedParam* p = d.ok() ? param(*d, "BLOCK_SIZE") : nullptr;
    return p ? p->covers : std::string("?");
  };
  EXPECT_EQ(covers("tl.store(Y_ptr + cols, 1.0, mask=cols < n_cols)"), "n_cols");
  EXPECT_EQ(covers("tl.store(Y_ptr + cols, 1.0, mask=tl.arange(0, BLOCK_SIZE) < n_cols)"), "n_cols");
  EXPECT_EQ(covers("tl.store(Y_ptr + cols, 1.0, mask=cols < LIMIT)"), "");                        // a constexpr bound
  EXPECT_EQ(covers("tl.store(Y_ptr + cols, 1.0, mask=cols < n_cols - 4)"), "");                   // an expression of it
  EXPECT_EQ(covers("tl.store(Y_ptr + cols * BLOCK_SIZE, 1.0, mask=cols < n_cols)"), "");          // the tile used again
  EXPECT_EQ(covers("cols = cols + 1\n    tl.store(Y_ptr + cols, 1.0, mask=cols < n_cols)"), "");  // assigned again
  EXPECT_EQ(covers("for i in range(0, n_cols, BLOCK_SIZE):\n        tl.store(Y_ptr + i + cols, 1.0, mask=cols < n_cols)"), "");
}

}  // namespace
}  // namespace kopt::search
