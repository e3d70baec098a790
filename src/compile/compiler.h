#pragma once
// Compiling one candidate into a shared library, through the build cache. Side effects (nvcc, disk) go
// through util::CommandRunner and the cache folder.
#include <mutex>
#include <string>

#include "compile/request.h"
#include "util/process.h"

namespace kopt::compile {

class Compiler {
 public:
  // `nvcc` empty: toolchain::find_nvcc(). The runner must be safe to call from several threads.
  explicit Compiler(util::CommandRunner& runner, std::string nvcc = "");
  // Thread-safe. Never throws; every failure is a CompileStatus with a log. Two requests running at the
  // same time must not share an out_dir.
  CompileResult compile(const CompileRequest& req);
  // The full `nvcc --version` text (asked once); empty when nvcc is missing or failed (then `error` says why).
  const std::string& nvcc_version();

 private:
  util::CommandRunner& runner_;
  std::string nvcc_;
  std::once_flag version_once_;
  std::string version_, version_error_;
};

}  // namespace kopt::compile
