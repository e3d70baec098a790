#pragma once
// The options of `kopt optimize`. Each default is defined once, here, as a member initializer: the command
// line's help text and options.json's reader take theirs from a default-constructed OptimizeOptions.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "core/result.h"
#include "dispatch/gpus.h"
#include "loop/gate_options.h"
#include "pipeline/prepare.h"
#include "search/llm_generator.h"
#include "util/json_io.h"

namespace kopt::loop {

// --generator: who writes the candidates (docs/GENERATORS.md). The names are strings only on the command line and
// in options.json (generator_text, parse_generator).
enum class GeneratorKind {
  kBuiltin,  // builtin: the built-in search over the annotated space
  kLlm,      // llm: a language model behind --llm-url
  kManual,   // manual: kopt writes the brief and waits for the person's manifest.json
  kCommand,  // any other text: a command line run each iteration
};
struct GeneratorChoice {
  GeneratorKind kind = GeneratorKind::kBuiltin;
  std::string command;  // kCommand: the command line
  bool operator==(const GeneratorChoice&) const = default;
};
// "builtin", "llm", "manual", or the command line.
std::string generator_text(const GeneratorChoice& g);
// The reverse: the three names, else a command line; an empty text is an input error.
Result<GeneratorChoice> parse_generator(std::string_view text);

struct OptimizeOptions {
  pipeline::KernelJob job;
  // The command line's check of ref.py against the contract (cli: check_contract_first), run beside the hardware
  // gate and the early golden data; its error ends the run before a run directory is made. Unset: none.
  std::function<Status()> contract_check;
  double time_budget_s = 300;  // the search's wall budget from the end of the gates (the main limit); 0: none
  int iterations = 20;       // a cap on iterations (the seed's N)
  int branches = 0;          // candidates per iteration (K); 0: auto (branches_for)
  int ncu_num = 5;           // top Nsight Compute metrics per axis
  int finalists = 2;         // re-timed in paired rounds against the incumbent
  int patience = 0;          // iterations without a significant gain before stopping; 0: auto (patience_for)
  int budget_total = 3, budget_per_axis = 2;
  double near_peak_efficiency = 0.80;  // floor / time at or above which the champion is near peak (docs/ROOFLINE.md)
  GeneratorChoice generator;           // default: builtin
  double generator_timeout_s = 1800;
  search::LlmOptions llm;             // --generator llm (the key is read from the environment, never stored)
  double manual_timeout_s = 3600;     // --generator manual: how long to wait for manifest.json (0: no limit)
  double max_time_s = 2;     // timing budget per candidate (s)
  int paired_rounds = 30;
  std::filesystem::path out = ".";
  std::optional<std::filesystem::path> resume;
  bool quiet = false;
  std::string json_out;      // --json FILE|-: where the summary JSON also goes (util/output.h); empty: nowhere
  uint64_t seed = 1;
  GateOptions gates;         // the workload matrix, shapes files, regressions, working set, sanitizer (issue 18)
  // Where candidates are measured (issue 21, docs/MULTI_GPU.md): --gpus all|LIST of this host (default: the first
  // GPU), or with --ray ADDRESS that many slots of a Ray cluster, one measuring worker each.
  dispatch::GpuSelection gpus;
  std::string ray_address;
  // The results database (docs/DATABASE.md): --db PATH (empty: KOPT_DB, else the cache root's) and --no-db. Per
  // invocation: not in options.json.
  std::string db_path;
  bool no_db = false;
  // --remeasure: every configuration is measured, none reused from the results database (docs/DATABASE.md "Reuse").
  // Kept in options.json, so a resumed run measures as it started.
  bool remeasure = false;
  // --no-warm-start: the first design starts from this run's space alone, not from the nearest shapes' measurements
  // (issue 39 item 2(b), docs/DATABASE.md "Warm start"); --no-strategy-memory: the method budget's ordering ignores
  // past runs (item 2(c), docs/SEARCH.md "Strategy memory"). Kept in options.json.
  bool warm_start = true;
  bool strategy_memory = true;
};

// The options a run directory was started with (options.json), for --resume.
util::Json options_to_json(const OptimizeOptions& o);
Result<OptimizeOptions> options_from_json(const util::Json& j);

// K when --branches is auto: cheap built-in candidates come in larger batches than a command's. The one place these
// defaults are written (the command line's help reads them).
inline constexpr int kAutoBranchesBuiltin = 12;
inline constexpr int kAutoBranchesCommand = 4;
int branches_for(const OptimizeOptions& o);
// The patience when --patience is auto: none for the built-in generator, whose model of the space decides when
// nothing is left to gain (decisions.h: predicts_no_gain); kAutoPatienceCommand for any other, which has no such
// model. The one place these defaults are written (the command line's help reads them).
inline constexpr int kAutoPatienceCommand = 2;
int patience_for(const OptimizeOptions& o);

// A duration as the command line gives it: "300", "300s", "5m", "1.5h"; "0" or "none": no limit. Seconds.
Result<double> parse_duration_s(const std::string& text);

// Ranges the loop needs (iterations >= 0, branches >= 1, ...); an input error naming the option otherwise.
Status validate_options(const OptimizeOptions& o);

}  // namespace kopt::loop
