#include "compile/command.h"

#include <cctype>

#include "util/hash.h"

namespace kopt::compile {

Result<std::vector<std::string>> arch_flags(const std::string& arch) {
  size_t i = 3;
  bool ok = arch.rfind("sm_", 0) == 0 && arch.size() > 3;
  while (ok && i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i]))) ++i;
  ok = ok && i > 3 && (i == arch.size() || (i + 1 == arch.size() && std::islower(static_cast<unsigned char>(arch[i]))));
  if (!ok) return input_error("invalid arch '" + arch + "': expected sm_<digits> with an optional suffix, e.g. sm_90, sm_90a");
  if (i == arch.size()) return std::vector<std::string>{"-arch=" + arch};
  return std::vector<std::string>{"-gencode=arch=compute_" + arch.substr(3) + ",code=" + arch};
}

Result<std::vector<std::string>> nvcc_flags(const CompileRequest& req) {
  std::vector<std::string> f = {"-shared", "-Xcompiler", "-fPIC", "-O3", "-lineinfo", "-Xptxas", "-v"};
  KOPT_TRY_ASSIGN(auto arch, arch_flags(req.arch));
  f.insert(f.end(), arch.begin(), arch.end());
  for (const auto& [k, v] : req.defines) {
    if (k.empty()) return input_error("empty define name in compile request '" + req.name + "'");
    f.push_back(v.empty() ? "-D" + k : "-D" + k + "=" + v);
  }
  for (const auto& d : req.include_dirs) f.push_back("-I" + d);
  f.insert(f.end(), req.extra_flags.begin(), req.extra_flags.end());
  return f;
}

std::vector<std::string> nvcc_argv(const std::string& nvcc, const std::vector<std::string>& flags,
                                   const std::filesystem::path& source, const std::filesystem::path& output) {
  std::vector<std::string> argv = {nvcc};
  argv.insert(argv.end(), flags.begin(), flags.end());
  std::string dir = source.parent_path().string();
  argv.push_back("-I" + (dir.empty() ? std::string(".") : dir));
  argv.push_back("-o");
  argv.push_back(output.string());
  argv.push_back(source.string());
  return argv;
}

std::string cache_key(const KeyInputs& in) {
  util::Hasher h;
  h.add("kopt-build-v1").add(in.nvcc_version);
  h.add("flags").add(std::to_string(in.flags.size()));
  for (const auto& f : in.flags) h.add(f);
  h.add("env").add(std::to_string(in.env.size()));
  for (const auto& [k, v] : in.env) h.add(k).add(v);
  h.add("source").add(in.source_text);
  h.add("headers").add(std::to_string(in.headers.size()));
  for (const auto& [name, text] : in.headers) h.add(name).add(text);
  return h.hex();
}

}  // namespace kopt::compile
