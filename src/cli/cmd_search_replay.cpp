// `kopt __search-replay`: replays kopt's built-in search against an exhaustively measured space
// (search/replay.h), for scripts/perf/search_efficiency.sh. Internal: not listed in `kopt --help`.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>

#include "cli/output_options.h"
#include "cli/commands.h"
#include "cli/parse.h"
#include "cli/replay_warm_start.h"
#include "search/annotations.h"
#include "search/replay.h"
#include "util/fs.h"
#include "util/strings.h"
#include "util/output.h"

namespace kopt::cli {

namespace {

// --evidence: "all" (every offered method's evidence fires), "none" (no metric), or a JSON file of
// {metric: value} (or a run's state.json, whose "metrics" are the champion's last profile).
Result<std::map<std::string, double>> evidence_metrics(const std::string& what, const search::Registry& reg,
                                                       const search::SearchSpace& space) {
  if (what == "all") return search::metrics_firing(reg, space.offered_methods());
  if (what == "none") return std::map<std::string, double>{};
  KOPT_TRY_ASSIGN(auto j, util::read_json(what));
  const util::Json& m = j.contains("metrics") ? j["metrics"] : j;
  std::map<std::string, double> out;
  if (!m.is_object()) return input_error("--evidence " + what + ": expected a JSON object of metric name -> number");
  for (auto it = m.begin(); it != m.end(); ++it)
    if (it.value().is_number()) out[it.key()] = it.value().get<double>();
  return out;
}

// --warm-from TABLE (repeatable), each with its --warm-from-dims, and --dims: the warm start's suggestions into `o`.
Status plan_warm_start(const std::vector<std::string>& tables, const std::vector<std::string>& table_dims,
                       const std::string& dims_text, const search::SearchSpace& space, const search::Registry& reg,
                       search::ReplayOptions& o) {
  if (tables.empty()) {
    if (!table_dims.empty()) return input_error("--warm-from-dims without --warm-from: give the table measured at those dims");
    return ok_status();
  }
  if (dims_text.empty())
    return input_error("--warm-from needs --dims: the shape --table was measured at (e.g. --dims M=2048,N=2048,K=2048)");
  if (table_dims.size() != tables.size())
    return input_error(fmt::format("--warm-from needs one --warm-from-dims per table, in the same order (the shape each "
                                   "was measured at, e.g. --warm-from-dims M=4096,N=4096,K=4096): {} table(s), {} dims",
                                   tables.size(), table_dims.size()));
  KOPT_TRY_ASSIGN(Dims dims, parse_dims_list(dims_text, "--dims"));
  std::vector<WarmFromTable> from;
  for (size_t i = 0; i < tables.size(); ++i) {
    WarmFromTable f;
    f.path = tables[i];
    KOPT_TRY_ASSIGN(f.dims, parse_dims_list(table_dims[i], "--warm-from-dims"));
    KOPT_TRY_ASSIGN(std::string csv, util::read_file(f.path));
    KOPT_TRY_ASSIGN(f.table, search::parse_measured_table(csv, f.path));
    from.push_back(std::move(f));
  }
  KOPT_TRY_ASSIGN(auto points, replay_warm_start(from, dims, space, reg));
  if (points.empty())
    return input_error("--warm-from: no configuration of those tables maps into the space of --kernel (every param value "
                       "one it declares, every constraint kept)");
  o.suggested = loop::suggestions(points);
  std::vector<std::string> sources;
  for (const auto& f : from) sources.push_back(fmt::format("{} at {}", f.path, loop::dims_text(f.dims)));
  o.suggested_source = util::join(sources, "; ") + " (record N: line N of its table)";
  return ok_status();
}

}  // namespace

int cmd_search_replay(const Args& args) {
  CLI::App app{"kopt __search-replay: replay kopt's built-in search against a measured table of a kernel's space "
               "(internal; docs/PERFORMANCE.md)", "kopt __search-replay"};
  std::string kernel, table_path, json_path, policy = "loop", evidence = "all", dims_text;
  std::vector<std::string> warm_from, warm_from_dims;
  search::ReplayOptions o;
  const search::ReplayOptions d;  // the defaults, written once (search/replay.h)
  app.add_option("--kernel", kernel, "the kernel whose @kopt annotations declare the space")->required();
  app.add_option("--table", table_path, "measurements.csv (scripts/perf/search_efficiency.sh)")->required();
  app.add_option("--runs", o.runs, fmt::format("seeds to replay (default {})", d.runs));
  app.add_option("--iterations", o.iterations, fmt::format("iterations per run, at most (default {})", d.iterations));
  app.add_option("--branches", o.branches,
                 fmt::format("candidates per iteration (default {}, as optimize with the built-in generator)", d.branches));
  app.add_option("--within", o.within_pct,
                 fmt::format("target: within this many percent of the best (default {})", d.within_pct));
  app.add_option("--target-share", o.target_share_pct,
                 fmt::format("success: the target within this share of the space, in percent (default {})", d.target_share_pct));
  app.add_flag("--param-ablation", o.param_ablation,
               "ablate the new champion's parameters too, each reverted alone to the baseline's value, as the live loop "
               "does (default: its methods only, as the replay's published figures)");
  app.add_flag("!--no-promote-ablations", o.promote_ablations,
               "keep the champion when its ablation measured a faster variant (the loop before 2026-12-01's seventh session)");
  app.add_option(
      "--patience", o.patience,
      fmt::format("stop a run after this many iterations without a faster champion (default {}; 0: never)", d.patience));
  app.add_option("--explore-patience", o.explore_patience,
                 fmt::format("stop a run after this many iterations in a row beyond the evidence's picks without a "
                             "faster champion (default {}, as optimize; 0: never)",
                             d.explore_patience));
  app.add_option("--seed", o.first_seed,
                 fmt::format("the first run's seed (optimize's --search-seed; default {})", d.first_seed));
  app.add_option("--policy", policy, "loop: the built-in generator; free: its parameter strategy over every dimension");
  std::string flag_methods = "off";
  app.add_option("--flag-methods", flag_methods,
                 "off (default): the space without compiler-flag methods, as the table; neutral: with them, as the live "
                 "loop offers them, each costing an evaluation and changing no time");
  app.add_option("--evidence", evidence, "the fixed profile for method selection: all (default), none, or a metrics JSON file");
  app.add_option("--dims", dims_text, "the shape --table was measured at, e.g. M=2048,N=2048,K=2048 (needed by --warm-from)");
  app.add_option("--warm-from", warm_from,
                 "warm start: the measured table of another shape (repeatable); its best configurations are measured "
                 "first, taken as a run's warm start takes them from the results database (docs/DATABASE.md)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--warm-from-dims", warm_from_dims,
                 "the shape each --warm-from table was measured at, in the same order, e.g. M=4096,N=4096,K=4096")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add_json_option(app, json_path, "the result");
  if (auto rc = parse_args(app, args); rc) return *rc;
  auto fail = [](const Error& e) {
    std::fprintf(stderr, "kopt __search-replay: %s\n", e.message.c_str());
    return to_int(e.code);
  };
  auto p = search::parse_replay_policy(policy);
  if (!p) return fail(input_error("--policy must be loop or free, not '" + policy + "'"));
  o.policy = *p;

  auto reg = search::registry();
  if (!reg) return fail(reg.error());
  auto text = util::read_file(kernel);
  if (!text) return fail(text.error());
  auto ann = search::parse_annotations(*text, kernel);
  if (!ann) return fail(ann.error());
  if (flag_methods != "off" && flag_methods != "neutral")
    return fail(input_error("--flag-methods must be off or neutral, not '" + flag_methods + "'"));
  o.flag_methods_neutral = flag_methods == "neutral";
  search::SpaceOptions so;
  so.offer_flag_methods = o.flag_methods_neutral;  // the measured table has none (search/replay.h): neutral spreads it
  auto space = search::build_space(*ann, reg->get(), so);
  if (!space) return fail(space.error());
  auto csv = util::read_file(table_path);
  if (!csv) return fail(csv.error());
  auto parsed = search::parse_measured_table(*csv, table_path);
  if (!parsed) return fail(parsed.error());
  auto table = search::map_onto_space(*parsed, *space, table_path);
  if (!table) return fail(table.error());
  if (o.flag_methods_neutral) search::spread_over_flags(*table, *space);
  auto metrics = evidence_metrics(evidence, reg->get(), *space);
  if (!metrics) return fail(metrics.error());
  o.metrics = *metrics;
  if (auto st = plan_warm_start(warm_from, warm_from_dims, dims_text, *space, reg->get(), o); !st) return fail(st.error());
  o.metrics_source = evidence == "all"    ? "made so that every declared method's evidence fires"
                     : evidence == "none" ? "empty (no method is ever picked)"
                                          : "fixed, from " + evidence;

  search::ReplayInput in{&*space, &reg->get(), kernel, &*table, o};
  auto res = search::replay_search(in);
  if (!res) return fail(res.error());
  std::fputs(search::format_replay(*res, o).c_str(), util::report_stream(json_path));
  if (!json_path.empty()) {
    util::Json j = search::to_json(*res, o);
    j["kernel"] = kernel;
    j["table"] = table_path;
    j["dims"] = dims_text;
    if (auto st = util::write_json_output(json_path, "search_replay", j); !st) return fail(st.error());
  }
  return 0;
}

}  // namespace kopt::cli
