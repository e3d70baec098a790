#include "cli/sass_triton.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>

#include "cli/fail.h"
#include "cli/output_options.h"
#include "cli/parse.h"
#include "cli/sass_methods.h"
#include "compile/resources.h"
#include "doctor/doctor.h"
#include "device/gpu_info.h"
#include "pipeline/prepare.h"
#include "pipeline/triton.h"
#include "runner/launch.h"
#include "sass/binaries.h"
#include "sass/dump.h"
#include "sass/report.h"
#include "util/fs.h"
#include "util/input_file.h"
#include "util/output.h"

namespace kopt::cli {

namespace fs = std::filesystem;

namespace {

int fail(const Error& e) { return report_failure("sass", e); }

bool ends_with_py(const std::string& a) { return a.size() > 3 && a.compare(a.size() - 3, 3, ".py") == 0; }

// The run_kernel configuration: the annotations' baseline, then --config, then -D; each verified method's
// guard on when the kernel declares it.
Result<util::Json> build_config(const std::string& source_text, const std::string& source, const std::string& config_text,
                                const std::vector<std::string>& defines, const std::vector<std::string>& methods) {
  KOPT_TRY_ASSIGN(search::Annotations ann, pipeline::read_triton_kernel(source_text, source));
  std::map<std::string, std::string> overrides;
  for (const auto& d : defines) {
    auto eq = d.find('=');
    if (eq == std::string::npos || eq == 0) return input_error("-D needs NAME=VALUE for a Triton kernel, not '" + d + "'");
    overrides[d.substr(0, eq)] = d.substr(eq + 1);
  }
  KOPT_TRY_ASSIGN(util::Json config, pipeline::triton_baseline_config(ann, {}));
  if (!config_text.empty()) {
    util::Json given;
    try {
      given = util::Json::parse(config_text);
    } catch (const std::exception& e) {
      return input_error("--config is not valid JSON: " + std::string(e.what()));
    }
    if (!given.is_object()) return input_error("--config must be a JSON object such as {\"BLOCK_SIZE\": 1024}");
    for (auto it = given.begin(); it != given.end(); ++it) config[it.key()] = it.value();
  }
  KOPT_TRY_ASSIGN(util::Json from_d, pipeline::triton_baseline_config(search::Annotations{}, overrides));
  for (auto it = from_d.begin(); it != from_d.end(); ++it) config[it.key()] = it.value();
  for (const auto& m : methods) {
    std::string guard = search::guard_macro(m);
    bool declared = false;
    for (const auto& md : ann.methods) declared = declared || md.guard == guard;
    if (declared) config[guard] = 1;
    else std::fprintf(stderr, "kopt sass: note: %s declares no method %s, so no guard is switched on for it\n",
                      source.c_str(), m.c_str());
  }
  return config;
}

}  // namespace

bool names_triton_kernel(const Args& args) {
  for (const auto& a : args)
    if (!a.empty() && a[0] != '-' && ends_with_py(a)) return true;
  return false;
}

int cmd_sass_triton(const Args& args) {
  CLI::App app{"kopt sass KERNEL.py: run a Triton kernel once, read the cubins Triton compiled, show resources and "
               "instruction mix, verify methods in the SASS",
               "kopt sass"};
  std::string source, json_path, signature_file, arch, config_text, out = ".";
  std::vector<std::string> methods, defines, libs, kernels;
  double timeout_s = 300;
  app.add_option("kernel", source, "the Triton kernel (.py exposing setup() and run_kernel())")->required();
  app.add_option("--methods", methods, "methods to verify, comma-separated (a declared method's guard is set to 1)")
      ->delimiter(',');
  app.add_option("--signature", signature_file, "JSON file {\"method-id\": {require_any, require_all, forbid, min_counts}}");
  app.add_option("--config", config_text, "run_kernel configuration as a JSON object (over the annotation defaults)");
  app.add_option("-D,--define", defines, "a run_kernel argument NAME=VALUE (integer; repeatable; over --config)");
  app.add_option("--lib", libs, "read this cubin instead of running the kernel (repeatable; no GPU needed)");
  app.add_option("--kernel-name", kernels, "check only this function (repeatable; default: every function of the cubins)");
  app.add_option("--arch", arch, "only functions of this arch, e.g. sm_90a (default: all)");
  add_json_option(app, json_path, "the report");
  app.add_option("--out-dir", out, "the folder where kopt_runs/ is created for the cubins (default .)")->type_name("DIR");
  add_deprecated_alias(app, "--out", "--out-dir", out);
  app.add_option("--compile-timeout-s", timeout_s,
                 fmt::format("seconds before the compile run is killed (default {})", timeout_s));
  add_deprecated_alias(app, "--timeout", "--compile-timeout-s", timeout_s);
  app.footer("Dimensions for setup() are given as --NAME=VALUE (e.g. --n_rows=16384 --n_cols=4096).");
  Dims dims;
  if (auto rc = parse_args_with_dims(app, args, dims, source); rc) return *rc;
  if (!json_path.empty()) util::set_meta_info(doctor::probe_meta("", ""));
  if (auto st = util::require_regular_file(source, "kernel source"); !st) return fail(st.error());

  auto sigs = method_signatures(methods, signature_file);
  if (!sigs) return fail(sigs.error());
  auto text = util::read_file(source);
  if (!text) return fail(text.error());
  auto config = build_config(*text, source, config_text, defines, methods);
  if (!config) return fail(config.error());

  util::SystemRunner runner;
  std::vector<fs::path> cubins;
  for (const auto& l : libs) {
    if (!fs::is_regular_file(l)) return fail(input_error("no such cubin: " + l));
    cubins.emplace_back(l);
  }
  if (cubins.empty()) {
    auto gpus = device::query_gpus();
    if (!gpus)
      return fail(gate_error("a Triton kernel has no SASS until Triton compiles it, and Triton compiles at the first launch "
                             "(JIT), which needs a GPU (" + gpus.error().message + "). Run this on a GPU machine, or "
                             "give --lib CUBIN (e.g. the cubins/ folder a kopt run on a GPU wrote)."));
    if (dims.empty()) return fail(input_error("give setup()'s dimensions as --NAME=VALUE (e.g. --n_rows=1024)"));
    auto dir = pipeline::make_run_dir(out, "sass");
    if (!dir) return fail(dir.error());
    runner::RunRequest req;
    req.triton_kernel = source;
    req.triton_configs = {*config};
    req.mode = runner::RunMode::kCompile;
    req.triton_dims = dims;
    req.result_json = *dir / "compile.json";
    req.dump_cubin_dir = *dir / "cubins";
    req.timeout_s = timeout_s;
    std::fprintf(stderr, "kopt sass: running %s once with %s to let Triton compile it -> %s\n", source.c_str(),
                 config->dump().c_str(), dir->c_str());
    auto outcome = runner::run_candidate(req, runner);
    if (outcome.status != runner::RunStatus::kOk) {
      ExitCode code = outcome.status == runner::RunStatus::kLoadError ? ExitCode::kInput : ExitCode::kGate;
      return fail({code, std::string(runner::status_name(outcome.status)) + ": " + outcome.message});
    }
    cubins = pipeline::triton_cubins(outcome.details);
    if (cubins.empty())
      return fail(gate_error("Triton left no cubin in its cache for " + source + " (see " + req.result_json.string() + ")"));
  }

  sass::SassReport report;
  report.source = source;
  report.arch = arch;
  report.analysis = sass::analyze_binaries(cubins, kernels, arch, runner);
  if (report.analysis.tool_error.empty())
    for (const auto& c : cubins)
      if (auto usage = sass::dump_resource_usage(c, runner)) {
        auto rows = compile::parse_cuobjdump_resource_usage(*usage);
        report.resources.insert(report.resources.end(), rows.begin(), rows.end());
      }
  if (auto st = check_kernel_names(kernels, report.analysis); !st) return fail(st.error());
  bool any_fail = false;
  for (const auto& [m, s] : *sigs) {
    auto v = sass::verify_method(report.analysis, s);
    if (!v) return fail(v.error());
    any_fail = any_fail || v->status == sass::VerifyStatus::kFail;
    report.methods.push_back({m, std::move(v).value()});
  }
  std::FILE* report_out = util::report_stream(json_path);
  std::fputs(sass::format_text(report).c_str(), report_out);
  if (cubins.size() > 1) {
    std::fprintf(report_out, "\ncubins (%zu):\n", cubins.size());
    for (const auto& c : cubins) std::fprintf(report_out, "  %s\n", c.c_str());
  }
  if (!json_path.empty()) {
    util::Json j = sass::to_json(report);
    j["backend"] = "triton";
    j["config"] = *config;
    j["cubins"] = util::Json::array();
    for (const auto& c : cubins) j["cubins"].push_back(c.string());
    if (auto st = util::write_json_output(json_path, "sass", j); !st) return fail(st.error());
  }
  if (!report.analysis.tool_error.empty()) return to_int(ExitCode::kGate);
  return any_fail ? to_int(ExitCode::kValidation) : 0;
}

}  // namespace kopt::cli
