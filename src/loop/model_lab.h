#pragma once
// A lab that answers from a model of the kernel instead of a GPU: the optimize loop runs whole, with its real
// generator, selection, ablation, stopping rules and run directory, on a machine without a GPU (the loop's
// tests, and search replays). The model gives a configuration's true time from its -D defines (nullopt: the
// configuration computes a wrong answer); measured samples are that time times a small deterministic noise.
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "loop/lab.h"
#include "roofline/ceilings.h"

namespace kopt::loop {

using Defines = std::map<std::string, std::string>;

struct ModelLabOptions {
  std::function<std::optional<double>(const Defines&)> time_ms;  // the configuration's true median
  std::function<bool(const Defines&)> compiles;                   // false: a compile failure (default: all compile)
  double noise = 0.005;                                           // relative spread of the samples
  roofline::Ceilings ceilings;
  std::map<std::string, double> metrics;                          // what every profile reports (ncu names, base units)
  bool hardware_passes = true;
};

class ModelLab final : public Lab {
 public:
  explicit ModelLab(ModelLabOptions o) : o_(std::move(o)) {}
  HardwareGate hardware() override;
  Result<pipeline::Prepared> prepare(const std::filesystem::path& run_dir, bool resuming, const pipeline::Say& say) override;
  Result<roofline::Ceilings> ceilings(const device::GpuInfo& gpu) override;
  std::vector<compile::CompileResult> compile(const std::vector<compile::CompileRequest>& requests, int jobs,
                                              const compile::ProgressFn& progress) override;
  sass::Analysis analyze_sass(const std::vector<std::filesystem::path>& binaries,
                              const std::vector<std::string>& kernels) override;
  runner::RunOutcome run(const runner::RunRequest& request) override;
  Result<profile::ProfileResult> profile(const profile::ProfileRequest& request, profile::ProfilePlan& plan, int top_n) override;
  void use_job(const pipeline::KernelJob& job) override { kernel = job.kernel; }

  // What the loop asked for, for tests: every compile request's name, and every run's mode.
  std::vector<std::string> compiled;
  std::vector<std::string> runs;
  // Set before prepare(): the kernel, and the job's own defines (the baseline build's).
  std::filesystem::path kernel;
  Defines job_defines;

 private:
  std::vector<double> samples(const std::string& lib, double true_ms, int n);
  ModelLabOptions o_;
  std::map<std::string, Defines> libs_;  // library path -> the defines it was built with
  std::map<std::string, int> calls_;     // per library: samples drawn so far (the noise's sequence)
};

}  // namespace kopt::loop
