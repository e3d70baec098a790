#include "contract/golden_maker.h"

#include "toolchain/tools.h"
#include "util/strings.h"

namespace kopt::contract {

std::vector<std::string> harness_argv(const GoldenRequest& req, const std::string& python) {
  util::Json dims = util::Json::object();
  for (const auto& [k, v] : req.dims) dims[k] = v;
  std::vector<std::string> argv = {python, "-m", "kopt_harness", "golden",
                                   "--ref", std::filesystem::absolute(req.ref_py).string()};
  if (req.triton_kernel.empty()) {
    argv.insert(argv.end(), {"--signature", (req.out_dir / "signature.json").string()});
  } else {
    argv.insert(argv.end(), {"--triton-kernel", std::filesystem::absolute(req.triton_kernel).string()});
  }
  argv.insert(argv.end(), {"--dims", dims.dump(), "--seeds", std::to_string(req.seeds), "--out", req.out_dir.string()});
  if (req.ptr_size > 0 && req.triton_kernel.empty()) {
    argv.push_back("--ptr-size");
    argv.push_back(std::to_string(req.ptr_size));
  }
  if (req.time_reference) argv.push_back("--time-reference");
  return argv;
}

Result<util::ProcessSpec> harness_process(const std::vector<std::string>& args, double timeout_s) {
  std::string python = toolchain::find_python();
  if (python.empty()) return gate_error("python3 not found; the golden-data harness needs it (or set KOPT_PYTHON)");
  std::string harness = toolchain::python_harness_dir();
  if (harness.empty()) return internal_error("kopt's Python harness (python/kopt_harness) was not found next to kopt");
  util::ProcessSpec spec{{python, "-m", "kopt_harness"}};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env["PYTHONPATH"] = harness + (std::getenv("PYTHONPATH") ? std::string(":") + std::getenv("PYTHONPATH") : "");
  spec.env["PYTHONUNBUFFERED"] = "1";
  spec.timeout_s = timeout_s;
  return spec;
}

Result<util::Json> make_golden(const GoldenRequest& req, util::CommandRunner& runner) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(req.ref_py, ec))
    return input_error("reference file " + req.ref_py.string() + " not found (give it with --ref ref.py)");
  std::filesystem::create_directories(req.out_dir, ec);
  if (req.triton_kernel.empty())  // a Triton kernel's harness writes signature.json from setup()
    KOPT_TRY(util::write_json_atomic(req.out_dir / "signature.json", "signature", {{"signature", to_json(req.signature)}}));
  auto argv = harness_argv(req, "python3");
  KOPT_TRY_ASSIGN(util::ProcessSpec spec, harness_process({argv.begin() + 3, argv.end()}, req.timeout_s));
  auto r = runner.run(spec);
  if (r.timed_out) return input_error("ref.py took longer than " + std::to_string(static_cast<int>(req.timeout_s)) + " s to make golden data");
  if (!r.success()) {
    std::string err = util::trim(r.stderr_text);
    if (r.exit_code == 4)
      return input_error("ref.py failed while making golden data:\n" + err);
    return internal_error("the golden-data harness failed (" + r.describe() + "):\n" + err);
  }
  return util::read_json(req.out_dir / "manifest.json");
}

}  // namespace kopt::contract
