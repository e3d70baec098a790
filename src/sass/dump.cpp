#include "sass/dump.h"

#include "toolchain/tools.h"

namespace kopt::sass {

namespace {

Result<std::string> run_cuobjdump(const std::string& flag, const std::filesystem::path& binary,
                                  util::CommandRunner& runner, const DumpOptions& opts) {
  std::string tool = opts.cuobjdump.empty() ? toolchain::find_cuobjdump() : opts.cuobjdump;
  if (tool.empty())
    return gate_error("cuobjdump not found: install the CUDA toolkit or `pip install nvidia-cuda-cuobjdump`, "
                      "or set KOPT_CUOBJDUMP");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(binary, ec)) return input_error("no such file: " + binary.string());
  util::ProcessSpec spec{{tool, flag, binary.string()}};
  spec.timeout_s = opts.timeout_s;
  auto r = runner.run(spec);
  // "cuobjdump info    : File 'x.so' does not contain device code" (exit 255): nothing to list.
  if (r.started && !r.timed_out && r.stderr_text.find("does not contain device code") != std::string::npos)
    return std::string();
  if (!r.success()) {
    std::string out = r.stderr_text.empty() ? r.stdout_text.substr(0, 500) : r.stderr_text.substr(0, 500);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return gate_error("cuobjdump " + flag + " " + binary.string() + " failed (" + r.describe() + ")" +
                      (out.empty() ? "" : ": " + out));
  }
  return r.stdout_text;
}

}  // namespace

Result<std::vector<SassFunction>> dump_sass(const std::filesystem::path& binary, util::CommandRunner& runner,
                                            const DumpOptions& opts) {
  KOPT_TRY_ASSIGN(std::string text, run_cuobjdump("--dump-sass", binary, runner, opts));
  return parse_sass_listing(text);
}

Result<std::string> dump_resource_usage(const std::filesystem::path& binary, util::CommandRunner& runner,
                                        const DumpOptions& opts) {
  return run_cuobjdump("--dump-resource-usage", binary, runner, opts);
}

}  // namespace kopt::sass
