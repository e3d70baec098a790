#include "profile/profiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "profile/gate.h"
#include "profile/metric_names.h"
#include "profile/query_metrics.h"
#include "profile/report.h"
#include "toolchain/tools.h"
#include "util/strings.h"

namespace kopt::profile {

namespace fs = std::filesystem;

Pass1Evidence evidence_of(const std::function<std::optional<double>(const std::string&)>& lookup) {
  Pass1Evidence e;
  e.compute_sol_pct = lookup(std::string(metric::kComputeSol));
  e.memory_sol_pct = lookup(std::string(metric::kMemorySol));
  e.achieved_occupancy_pct = lookup(std::string(metric::kAchievedOccupancy));
  e.issue_active_pct = lookup(std::string(metric::kIssueActive));
  return e;
}

ProfileResult analyse(const RawPage& page, const std::vector<RuleResult>& rules, const ProfilePlan& plan, int top_n) {
  ProfileResult r;
  r.plan = plan;
  r.top_n = top_n;
  for (const auto& k : page.kernels) {
    KernelProfile kp;
    kp.record = k;
    kp.duration_ns = duration_ns(k);
    for (const auto& rule : rules)
      if (rule.kernel_id == k.id) kp.rules.push_back(rule);
    kp.classification = classify(evidence_of([&](const std::string& m) { return k.number(m); }));
    r.kernels.push_back(std::move(kp));
  }
  r.aggregate = aggregate_kernels(page.kernels);
  MetricLookup lookup = [&](const std::string& m) { return r.aggregate.number(m); };
  r.classification = classify(evidence_of(lookup));
  for (Axis a : kAllAxes) r.top[static_cast<size_t>(a)] = rank_axis(a, lookup, top_n, rules);
  // Registry metrics of the plan's axes the report has no value for (the chip's missing ones are already
  // listed by profile_call as "query-metrics").
  std::set<std::string> unavailable(plan.unavailable.begin(), plan.unavailable.end());
  for (Axis a : plan.axes)
    for (const MetricSpec* s : metrics_for_axis(a))
      if (!lookup_spec(*s, lookup) && !unavailable.count(s->name)) r.missing.push_back({s->name, "report"});
  return r;
}

namespace {

struct Attempt {
  RawPage page;
  fs::path report;
};

class Session {
 public:
  Session(const ProfileRequest& req, util::CommandRunner& runner) : req_(req), runner_(runner) {}

  util::ProcessResult run(const std::vector<std::string>& argv, double timeout_s) {
    util::ProcessSpec spec;
    spec.argv = argv;
    spec.env = req_.env;
    spec.timeout_s = timeout_s;
    util::ProcessResult r = runner_.run(spec);
    wall_ms += r.wall_ms;
    return r;
  }

  // Profiles with these sections, reads the raw page (printed by the run itself, or imported from its report when
  // this ncu prints nothing beside -o) and applies the gate.
  Result<Attempt> attempt(const std::vector<std::string>& sections, const std::vector<std::string>& metrics,
                          const std::string& suffix, double timeout_s) {
    Attempt a;
    fs::path base = req_.out_dir / (req_.name + suffix);
    a.report = base.string() + ".ncu-rep";
    util::ProcessResult run_result = run(ncu_profile_command({req_.ncu_path, sections, metrics, req_.cache_control,
                                                              base.string(), req_.target_argv}),
                                         timeout_s);
    KOPT_TRY(ncu_gate({req_.ncu_path, &run_result, nullptr, {}}));
    // With an empty range ncu warns "No kernels were profiled." and writes no report.
    if ((run_result.stdout_text + run_result.stderr_text).find("No kernels were profiled") != std::string::npos) {
      RawPage empty;
      return ncu_gate({req_.ncu_path, nullptr, &empty, {}}).error();
    }
    auto printed = parse_raw_page(run_result.stdout_text);
    if (printed && !printed->kernels.empty()) {
      a.page = std::move(printed).value();
    } else {
      util::ProcessResult raw = run(ncu_import_command(req_.ncu_path, a.report.string(), "raw", true), 600);
      if (!raw.success())
        return gate_error(fmt::format("NCU gate: ncu could not read its report {} ({}): {}", a.report.string(),
                                      raw.describe(), raw.stdout_text.substr(0, 400) + raw.stderr_text.substr(0, 400)));
      auto page = parse_raw_page(raw.stdout_text);
      if (!page) return page.error();
      a.page = std::move(page).value();
    }
    KOPT_TRY(ncu_gate({req_.ncu_path, nullptr, &a.page, required_metrics()}));
    return a;
  }

  double wall_ms = 0;

 private:
  const ProfileRequest& req_;
  util::CommandRunner& runner_;
};

std::string axes_text(const std::vector<Axis>& axes) {
  std::vector<std::string> names;
  for (Axis a : axes) names.emplace_back(axis_name(a));
  return util::join(names, ", ");
}

std::vector<std::string> all_requested_metrics() {
  std::vector<std::string> out = required_metrics();
  for (const auto& m : registry_metrics_for({Axis::kCompute, Axis::kMemory, Axis::kLatency}))
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  return out;
}

}  // namespace

void add_known_ncu_outputs(ProfileRequest& req) {
  if (req.ncu_path.empty()) return;
  if (req.ncu_version_text.empty()) req.ncu_version_text = toolchain::version_output(req.ncu_path, 60);
  if (req.query_metrics_text.empty() && !req.chip.empty()) {
    const auto argv = ncu_query_metrics_command(req.ncu_path, req.chip);
    req.query_metrics_text = toolchain::tool_output(req.ncu_path, {argv.begin() + 1, argv.end()}, 120);
  }
}

Result<ProfileResult> profile_call(const ProfileRequest& req, ProfilePlan& plan, util::CommandRunner& runner,
                                   int top_n) {
  if (req.target_argv.empty()) return input_error("profile: no target command to run under ncu");
  KOPT_TRY(ncu_gate({req.ncu_path, nullptr, nullptr, {}}));
  std::error_code ec;
  fs::create_directories(req.out_dir, ec);
  if (ec) return input_error("profile: cannot create " + req.out_dir.string() + ": " + ec.message());

  Session s(req, runner);
  auto version = toolchain::parse_ncu_version(req.ncu_version_text);  // the caller's, when it knows it
  if (!version) {
    util::ProcessResult ver = s.run(ncu_version_command(req.ncu_path), 60);
    version = toolchain::parse_ncu_version(ver.stdout_text);
    if (!version)
      return gate_error("NCU gate: cannot read the version of " + req.ncu_path + " (" + ver.describe() +
                        "); check that it is Nsight Compute's ncu");
  }

  std::vector<std::string> notes;
  ProfilePlan working = plan;
  Attempt chosen;

  if (!plan.fixed) {
    // Which requested metrics exist on this chip.
    std::vector<std::string> available;
    bool checked = false;
    if (!req.chip.empty()) {
      std::set<std::string> chip_metrics = parse_query_metrics(req.query_metrics_text);
      util::ProcessResult q;
      if (chip_metrics.empty()) {
        q = s.run(ncu_query_metrics_command(req.ncu_path, req.chip), 120);
        if (q.success()) chip_metrics = parse_query_metrics(q.stdout_text);
      }
      if (chip_metrics.empty()) {
        notes.push_back("ncu --query-metrics --chip " + req.chip + " listed no metric (" + q.describe() +
                        "): requested metrics were not checked and only sections are collected");
      } else {
        checked = true;
        MetricCheck c = check_metrics(all_requested_metrics(), chip_metrics);
        available = c.available;
        working.unavailable = c.missing;
      }
    } else {
      notes.push_back("no chip given: requested metrics were not checked with --query-metrics");
    }

    auto extra_for = [&](const std::vector<Axis>& axes) {
      std::vector<std::string> extra;
      if (checked)
        for (const auto& m : registry_metrics_for(axes))
          if (std::find(available.begin(), available.end(), m) != available.end()) extra.push_back(m);
      return extra;
    };
    auto same_axes = [](std::vector<Axis> a, std::vector<Axis> b) {
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      return a == b;
    };
    // Pass 1, or pass 1 and the expected axes' pass 2 at once (req.expected_axes): kept as the report when pass 1's
    // classification, read from it, names exactly those axes, the run then being the one pass 2 would have made.
    std::optional<Attempt> pass1;
    std::vector<std::string> pass1_sections_run = pass1_sections(), pass1_metrics_run;
    Classification c1;
    if (!req.expected_axes.empty()) {
      const std::vector<std::string> sections = sections_for(req.expected_axes, PlanLevel::kFull);
      const std::vector<std::string> metrics = extra_for(req.expected_axes);
      auto a = s.attempt(sections, metrics, "_pass1", req.pass2_budget_s);
      if (a) {
        Aggregate agg = aggregate_kernels(a->page.kernels);
        c1 = classify(evidence_of([&](const std::string& m) { return agg.number(m); }));
        // Kept when it collected every binding axis's sections: the expected axes exactly (the plan pass 2 would
        // have fixed), or more of them (compute-bound sgemm expected to bind {compute, memory} and binding compute
        // alone): the plan is then what ran, so that every later profile of the run has the same sections.
        const bool exact = same_axes(c1.binding, req.expected_axes);
        const bool covered = !c1.binding.empty() && std::all_of(c1.binding.begin(), c1.binding.end(), [&](Axis x) {
          return std::find(req.expected_axes.begin(), req.expected_axes.end(), x) != req.expected_axes.end();
        });
        if (exact || covered) {
          working.axes = c1.binding;
          working.level = PlanLevel::kFull;
          working.sections = exact ? sections_for(c1.binding, PlanLevel::kFull) : sections;
          working.metrics = exact ? extra_for(c1.binding) : metrics;
          chosen = std::move(a).value();
          // The report a pass 2 would have written, under pass 2's name.
          const fs::path named = req.out_dir / (req.name + ".ncu-rep");
          std::error_code rename_ec;
          fs::rename(chosen.report, named, rename_ec);
          if (!rename_ec) chosen.report = named;
          notes.push_back(
              exact
                  ? "pass 1 and pass 2 in one run: the expected axes (" + axes_text(req.expected_axes) + ") were the binding ones"
                  : "pass 1 and pass 2 in one run: the expected axes (" + axes_text(req.expected_axes) +
                        ") cover the binding ones (" + axes_text(c1.binding) + "); the plan keeps every section that ran");
          working.reason = c1.reason + fmt::format("; level {}", describe(working.level));
          working.fixed = true;
        } else {
          notes.push_back("pass 1 run with the expected axes' sections (" + axes_text(req.expected_axes) + "): " +
                          axes_text(c1.binding) + " bind, so pass 2 runs for them");
          pass1 = std::move(a).value();
          pass1_sections_run = sections;
          pass1_metrics_run = metrics;
        }
      } else {
        notes.push_back("pass 1 with the expected axes' sections failed (" + a.error().message + "): pass 1 alone");
      }
    }
    if (!working.fixed) {
      if (!pass1) {
        KOPT_TRY_ASSIGN(Attempt p1, s.attempt(pass1_sections(), {}, "_pass1", req.pass1_timeout_s));
        Aggregate agg1 = aggregate_kernels(p1.page.kernels);
        c1 = classify(evidence_of([&](const std::string& m) { return agg1.number(m); }));
        pass1 = std::move(p1);
      }
      working.axes = c1.binding;
      const std::vector<std::string> extra = extra_for(working.axes);
      bool done = false;
      for (PlanLevel level : {PlanLevel::kFull, PlanLevel::kLight}) {
        std::vector<std::string> sections = sections_for(working.axes, level);
        std::vector<std::string> metrics = level == PlanLevel::kFull ? extra : std::vector<std::string>{};
        auto a = s.attempt(sections, metrics, level == PlanLevel::kFull ? "" : "_light", req.pass2_budget_s);
        if (a) {
          chosen = std::move(a).value();
          working.level = level;
          working.sections = sections;
          working.metrics = metrics;
          done = true;
          break;
        }
        notes.push_back(fmt::format("pass 2 ({}) failed within its {:.0f} s budget: {}", describe(level),
                                    req.pass2_budget_s, a.error().message));
      }
      if (!done) {
        chosen = std::move(*pass1);
        working.level = PlanLevel::kBase;
        working.sections = pass1_sections_run;
        working.metrics = pass1_metrics_run;
        notes.push_back("using the pass-1 report (" + util::join(pass1_sections_run, ", ") + ") for this run");
      }
      working.reason = c1.reason + fmt::format("; level {}", describe(working.level));
      working.fixed = true;
    }
  } else {
    auto a = s.attempt(plan.sections, plan.metrics, "", req.pass1_timeout_s);
    if (!a)
      return Error{a.error().code, a.error().message + " (with the run's fixed plan: sections " +
                                       util::join(plan.sections, ",") + ")"};
    chosen = std::move(a).value();
  }

  // Rule messages: the details CSV; the text page when this ncu's CSV has no rule columns.
  std::vector<RuleResult> rules;
  util::ProcessResult d = s.run(ncu_import_command(req.ncu_path, chosen.report.string(), "details", true), 600);
  DetailsRules dr = d.success() ? parse_details_csv(d.stdout_text) : DetailsRules{};
  if (dr.has_rule_columns) {
    rules = std::move(dr.rules);
  } else {
    util::ProcessResult t = s.run(ncu_import_command(req.ncu_path, chosen.report.string(), "details", false), 600);
    if (t.success()) {
      rules = parse_details_text(t.stdout_text);
      for (auto& r : rules)  // the text page numbers kernels by position
        if (r.kernel_id >= 0 && r.kernel_id < static_cast<int>(chosen.page.kernels.size()))
          r.kernel_id = chosen.page.kernels[r.kernel_id].id;
      notes.push_back("rule messages read from the text details page (the CSV had no rule columns)");
    } else {
      notes.push_back("ncu could not print the details page (" + t.describe() + "): no rule messages");
    }
  }

  ProfileResult result = analyse(chosen.page, rules, working, top_n);
  std::vector<MissingMetric> on_chip;
  for (const auto& m : working.unavailable) on_chip.push_back({m, "query-metrics"});
  result.missing.insert(result.missing.begin(), on_chip.begin(), on_chip.end());
  result.notes = notes;
  result.ncu_version = version->text;
  result.cache_control = std::string(describe(req.cache_control));
  result.report_path = chosen.report;
  result.profiling_wall_ms = s.wall_ms;
  result.json_path = metrics_json_path(req.out_dir, req.name);
  result.summary_path = req.out_dir / (req.name + "_summary.txt");
  KOPT_TRY(write_profile_outputs(result));
  plan = working;
  return result;
}

}  // namespace kopt::profile
