#include "loop/options.h"

#include <string_view>
#include <utility>

#include "record/options_record.h"
#include "record/run_record.h"

namespace kopt::loop {

namespace fs = std::filesystem;

namespace {
constexpr std::pair<GeneratorKind, std::string_view> kGeneratorNames[] = {
    {GeneratorKind::kBuiltin, "builtin"}, {GeneratorKind::kLlm, "llm"}, {GeneratorKind::kManual, "manual"}};
}  // namespace

std::string generator_text(const GeneratorChoice& g) {
  for (const auto& [k, name] : kGeneratorNames)
    if (k == g.kind) return std::string(name);
  return g.command;
}

Result<GeneratorChoice> parse_generator(std::string_view text) {
  for (const auto& [k, name] : kGeneratorNames)
    if (name == text) return GeneratorChoice{k, ""};
  if (text.find_first_not_of(" \t") == std::string_view::npos)
    return input_error("--generator is empty: give builtin, llm, manual or a command line (docs/GENERATORS.md)");
  return GeneratorChoice{GeneratorKind::kCommand, std::string(text)};
}

util::Json options_to_json(const OptimizeOptions& o) {
  namespace key = record::options_key;  // the keys the report reads: named once, with the record that reads them
  const auto& j = o.job;
  util::Json out = {{key::kKernel, fs::absolute(j.kernel).string()}, {key::kRef, fs::absolute(j.ref).string()},
          {key::kDims, j.dims}, {key::kSeeds, j.seeds}, {"ptr_size", j.ptr_size},
          {key::kNumerics, search::numerics_mode_name(j.numerics)},
          {key::kAtol, j.atol ? util::Json(*j.atol) : util::Json(nullptr)},
          {key::kRtol, j.rtol ? util::Json(*j.rtol) : util::Json(nullptr)},
          {key::kArch, j.arch}, {key::kNvccFlags, j.nvcc_flags}, {key::kIncludeDirs, j.include_dirs}, {key::kDefines, j.defines},
          {"compile_jobs", j.compile_jobs}, {"run_timeout_s", j.run_timeout_s}, {"time_budget_s", o.time_budget_s},
          {"iterations", o.iterations},
          {"branches", o.branches}, {"ncu_num", o.ncu_num}, {"finalists", o.finalists}, {"patience", o.patience},
          {"budget_total", o.budget_total}, {"budget_per_axis", o.budget_per_axis},
          {"near_peak_efficiency", o.near_peak_efficiency}, {key::kGenerator, generator_text(o.generator)},
          {key::kMaxTimeS, o.max_time_s}, {"paired_rounds", o.paired_rounds}, {"seed", o.seed}};
  add_to_json(o.gates, out);
  out["llm"] = search::to_json(o.llm);
  out["manual_timeout_s"] = o.manual_timeout_s;
  out["gpus"] = o.gpus.text();
  out["ray_address"] = o.ray_address;
  out["remeasure"] = o.remeasure;
  out["warm_start"] = o.warm_start;
  out["strategy_memory"] = o.strategy_memory;
  return out;
}

Result<OptimizeOptions> options_from_json(const util::Json& j) {
  const OptimizeOptions d;  // the defaults, for keys an older options.json lacks
  OptimizeOptions o;
  // The keys the report reads too, through their record (strict about types: a wrong one names the field).
  KOPT_TRY_ASSIGN(const record::OptionsRecord r,
                  record::parse_file<record::OptionsRecord>(j, "options.json", record::options_record_from_json));
  if (!r.kernel || !r.ref || !r.dims) return input_error("options.json is malformed: it needs kernel, ref and dims");
  o.job.kernel = *r.kernel;
  o.job.ref = *r.ref;
  o.job.dims = *r.dims;
  o.job.seeds = static_cast<int>(r.seeds.value_or(d.job.seeds));
  auto mode = search::parse_numerics_mode(r.numerics.value_or(std::string(search::numerics_mode_name(d.job.numerics))));
  if (!mode) return input_error("options.json: bad numerics mode");
  o.job.numerics = *mode;
  o.job.atol = r.atol;
  o.job.rtol = r.rtol;
  o.job.arch = r.arch.value_or(d.job.arch);
  o.job.nvcc_flags = r.nvcc_flags.value_or(d.job.nvcc_flags);
  o.job.include_dirs = r.include_dirs.value_or(d.job.include_dirs);
  o.job.defines = r.defines.value_or(d.job.defines);
  auto generator = parse_generator(r.generator.value_or(generator_text(d.generator)));
  if (!generator) return input_error("options.json: " + generator.error().message);
  o.generator = *generator;
  o.max_time_s = r.max_time_s.value_or(d.max_time_s);
  try {
    o.job.ptr_size = j.value("ptr_size", d.job.ptr_size);
    o.job.compile_jobs = j.value("compile_jobs", d.job.compile_jobs);
    o.job.run_timeout_s = j.value("run_timeout_s", d.job.run_timeout_s);
    o.time_budget_s = j.value("time_budget_s", 0.0);  // runs started before the budget existed had none
    o.iterations = j.value("iterations", d.iterations);
    o.branches = j.value("branches", d.branches);
    o.ncu_num = j.value("ncu_num", d.ncu_num);
    o.finalists = j.value("finalists", d.finalists);
    o.patience = j.value("patience", d.patience);
    o.budget_total = j.value("budget_total", d.budget_total);
    o.budget_per_axis = j.value("budget_per_axis", d.budget_per_axis);
    o.near_peak_efficiency = j.value("near_peak_efficiency", d.near_peak_efficiency);
    o.paired_rounds = j.value("paired_rounds", d.paired_rounds);
    o.seed = j.value("seed", d.seed);
    o.remeasure = j.value("remeasure", d.remeasure);
    o.warm_start = j.value("warm_start", d.warm_start);
    o.strategy_memory = j.value("strategy_memory", d.strategy_memory);
    KOPT_TRY_ASSIGN(o.gates, gate_options_from_json(j));
    if (j.contains("llm")) {
      KOPT_TRY_ASSIGN(o.llm, search::llm_options_from_json(j["llm"]));
    }
    o.manual_timeout_s = j.value("manual_timeout_s", d.manual_timeout_s);
    o.ray_address = j.value("ray_address", std::string());
    KOPT_TRY_ASSIGN(o.gpus, dispatch::parse_gpus(j.value("gpus", std::string()), !o.ray_address.empty()));
  } catch (const std::exception& e) {
    return input_error(std::string("options.json is malformed: ") + e.what());
  }
  return o;
}

int branches_for(const OptimizeOptions& o) {
  if (o.branches > 0) return o.branches;
  return o.generator.kind == GeneratorKind::kBuiltin ? kAutoBranchesBuiltin : kAutoBranchesCommand;
}

int patience_for(const OptimizeOptions& o) {
  if (o.patience > 0) return o.patience;
  return o.generator.kind == GeneratorKind::kBuiltin ? 0 : kAutoPatienceCommand;
}

Result<double> parse_duration_s(const std::string& text) {
  if (text == "none") return 0.0;
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  double scale = unit.empty() || unit == "s" ? 1 : unit == "m" || unit == "min" ? 60 : unit == "h" ? 3600 : -1;
  if (used == 0 || scale < 0 || !(v >= 0) || v > 1e7)
    return input_error("'" + text + "' is not a duration: write seconds (300 or 300s), minutes (5m) or hours (1h); 0 or none for no limit");
  return v * scale;
}

Status validate_options(const OptimizeOptions& o) {
  if (o.iterations < 0) return input_error("--iterations must be >= 0");
  if (o.branches < 0) return input_error("--branches must be >= 1, or 0 for auto");
  if (o.patience < 0) return input_error("--patience must be >= 1, or 0 for auto");
  if (o.time_budget_s < 0) return input_error("--time-budget must be a duration >= 0");
  if (o.ncu_num < 1) return input_error("--ncu-num must be >= 1");
  if (o.finalists < 1) return input_error("--finalists must be >= 1");
  if (o.max_time_s <= 0) return input_error("--measure-budget-s must be > 0");
  return ok_status();
}

}  // namespace kopt::loop
