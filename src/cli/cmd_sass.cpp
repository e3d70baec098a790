#include <CLI/CLI.hpp>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdio>

#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/output_options.h"
#include "cli/parse.h"
#include "cli/sass_methods.h"
#include "cli/sass_triton.h"
#include "compile/cutlass.h"
#include "compile/pool.h"
#include "compile/resources.h"
#include "doctor/doctor.h"
#include "pipeline/prepare.h"
#include "sass/dump.h"
#include "sass/report.h"
#include "sass/signature_lookup.h"
#include "toolchain/cutlass.h"
#include "util/fs.h"
#include "util/input_file.h"
#include "util/output.h"
#include "util/strings.h"

namespace kopt::cli {

namespace {

int fail(const Error& e) { return report_failure("sass", e); }

}  // namespace

int cmd_sass(const Args& args) {
  if (names_triton_kernel(args)) return cmd_sass_triton(args);  // KERNEL.py: cli/sass_triton.h
  CLI::App app{"kopt sass: compile a kernel, show its resources and instruction mix, verify methods in its SASS",
               "kopt sass"};
  std::string source, lib, json_path, signature_file, cache_dir, arch = pipeline::KernelJob{}.arch;
  std::vector<std::string> methods, defines, includes, kernels, nvcc_flags;
  app.add_option("kernel", source, "the kernel source (.cu); its __global__ functions are the ones checked (a Triton "
                 ".py has its own options: kopt sass KERNEL.py --help)");
  app.add_option("--methods", methods, "methods to verify, comma-separated (each is also compiled with -DKOPT_<ID>=1)")
      ->delimiter(',');
  app.add_option("--signature", signature_file, "JSON file {\"method-id\": {require_any, require_all, forbid, min_counts}}");
  app.add_option("--arch", arch,
                 fmt::format("target, e.g. sm_90 or sm_90a (default {}); with --lib, only functions of this arch", arch))
      ->capture_default_str();
  app.add_option("-D,--define", defines, "a define for nvcc, NAME=VALUE (repeatable)");
  app.add_option("-I,--include", includes, "an include directory for nvcc (repeatable)");
  app.add_option("--nvcc-flag", nvcc_flags, "an extra nvcc flag, e.g. --nvcc-flag=-maxrregcount=32 (repeatable)");
  std::vector<std::string> cutlass_includes;
  app.add_option("--cutlass-include", cutlass_includes,
                 "CUTLASS headers (the folder holding cutlass/ and cute/); a CUTLASS compile even when the source "
                 "does not include <cutlass/..> (default: $CUTLASS_PATH/include, else the nvidia-cutlass wheel)")
      ->check([](const std::string& dir) {
        return toolchain::cutlass_include_dir_of(dir).empty() ? dir + " holds no cutlass/cutlass.h" : std::string();
      });
  app.add_option("--kernel-name", kernels, "check this kernel function (name, qualified name or mangled; repeatable)");
  app.add_option("--lib", lib, "read this shared library or cubin instead of compiling");
  add_json_option(app, json_path, "the report");
  app.add_option("--cache-dir", cache_dir, "build cache folder (default $XDG_CACHE_HOME/kopt/build)");
  bool compile_only = false;
  app.add_flag("--compile-only", compile_only,
               "only compile into the build cache and print `library: PATH` (no SASS analysis; --json gets the "
               "compile result)");
  if (auto rc = parse_args(app, args); rc) return *rc;
  if (!json_path.empty()) util::set_meta_info(doctor::probe_meta("", ""));  // the JSON names the nvcc that built it
  bool arch_given = app.count("--arch") > 0;

  if (source.empty() && lib.empty()) return fail(input_error("give a kernel source (KERNEL.cu) or --lib FILE"));
  if (compile_only && !lib.empty()) return fail(input_error("--compile-only compiles a kernel source; it does not take --lib"));
  if (!source.empty())
    if (auto st = util::require_regular_file(source, "kernel source"); !st) return fail(st.error());

  // Signatures first: a bad file or an unknown method stops before any compile.
  auto found = method_signatures(methods, signature_file);
  if (!found) return fail(found.error());
  const auto& sigs = *found;

  sass::SassReport report;
  report.source = source;
  report.arch = lib.empty() || arch_given ? arch : "";
  util::SystemRunner runner;
  std::filesystem::path binary = lib;
  if (lib.empty()) {
    compile::CompileRequest req;
    req.name = std::filesystem::path(source).stem().string();
    req.source = source;
    req.arch = arch;
    req.include_dirs = includes;
    req.extra_flags = nvcc_flags;
    req.cache_dir = cache_dir;
    for (const auto& d : defines) {
      auto eq = d.find('=');
      req.defines[d.substr(0, eq)] = eq == std::string::npos ? "" : d.substr(eq + 1);
    }
    for (const auto& [m, s] : sigs) req.defines[compile::method_guard(m)] = "1";
    for (const auto& d : cutlass_includes) req.include_dirs.push_back(toolchain::cutlass_include_dir_of(d));
    compile::configure_cutlass(req, !cutlass_includes.empty());
    report.arch = req.arch;  // a CUTLASS compile targets sm_90a
    auto res = compile::compile_batch({req}, {1, ""}, runner).at(0);
    if (!res.ok()) {
      std::fputs(res.log_text.c_str(), stderr);
      // A compile into the cache keeps no log of a failure: kept here instead, so the message can name it.
      std::filesystem::path log = res.log_path;
      if (log.empty()) {
        log = std::filesystem::temp_directory_path() / ("kopt-sass-" + req.name + "-" + std::to_string(::getpid()) + ".log");
        if (!util::write_file_atomic(log, res.log_text)) log.clear();
      }
      const std::string where = log.empty() ? "" : " in " + log.string();
      return fail({res.status == compile::CompileStatus::kFailed ? ExitCode::kInput : ExitCode::kGate,
                   "compile " + std::string(compile::to_string(res.status)) + ": " +
                       std::string(compile::describe(res.status)) + where});
    }
    binary = res.library;
    if (compile_only) {
      std::fprintf(util::report_stream(json_path), "library: %s\n", binary.c_str());
      util::Json j = {{"source", source}, {"arch", req.arch}, {"library", binary.string()}, {"compile", compile::to_json(res)}};
      if (auto st = util::write_json_output(json_path, "sass_compile", j); !st) return fail(st.error());
      return 0;
    }
    report.resources = res.resources;
    report.compile = std::move(res);
  } else if (!std::filesystem::is_regular_file(lib)) {
    return fail(input_error("no such library: " + lib));
  }

  std::vector<std::string> names = kernels;
  if (names.empty() && !source.empty()) names = sass::kernel_names_from_source(source, !cutlass_includes.empty());
  report.analysis = sass::analyze(binary, names, report.arch, runner);
  if (!report.compile && report.analysis.tool_error.empty()) {
    if (auto text = sass::dump_resource_usage(binary, runner)) report.resources = compile::parse_cuobjdump_resource_usage(*text);
  }

  if (auto st = check_kernel_names(kernels, report.analysis); !st) return fail(st.error());
  bool any_fail = false;
  for (const auto& [m, s] : sigs) {
    auto v = sass::verify_method(report.analysis, s);
    if (!v) return fail(v.error());
    any_fail = any_fail || v->status == sass::VerifyStatus::kFail;
    report.methods.push_back({m, std::move(v).value()});
  }

  std::fputs(sass::format_text(report).c_str(), util::report_stream(json_path));
  if (auto st = util::write_json_output(json_path, "sass", sass::to_json(report)); !st) return fail(st.error());
  if (!report.analysis.tool_error.empty()) return to_int(ExitCode::kGate);
  return any_fail ? to_int(ExitCode::kValidation) : 0;
}

}  // namespace kopt::cli
