#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/commands.h"
#include "cli/fail.h"
#include "cli/output_options.h"
#include "cli/parse.h"
#include "search/method_table.h"
#include "search/registry.h"
#include "util/json_io.h"
#include "util/output.h"
#include "util/strings.h"

namespace kopt::cli {

int cmd_methods(const Args& args) {
  CLI::App app{"kopt methods: list the optimization method registry (data/methods.json)", "kopt methods"};
  std::string id, axis, backend, numerics, json, csv;
  app.add_option("id", id, "show one method in full");
  app.add_option("--axis", axis, "only this axis: compute, memory or latency");
  app.add_option("--backend", backend, "only methods for this backend: cuda, cutlass or triton");
  app.add_option("--numerics", numerics, "only methods this numerics mode admits: strict, reference or approximate");
  add_json_option(app, json, "the methods");
  add_csv_option(app, csv, "the table (one row per method)");
  if (auto rc = parse_args(app, args); rc) return *rc;

  auto fail = [](const std::string& msg) { return report_failure("methods", input_error(msg)); };
  auto reg = search::registry();
  if (!reg) return fail(reg.error().message);
  const search::Registry& r = reg.value();

  search::MethodFilter f;
  if (!axis.empty() && !(f.axis = parse_axis(axis))) return fail("--axis must be compute, memory or latency, not '" + axis + "'");
  if (!backend.empty() && !(f.backend = search::parse_backend(backend)))
    return fail("--backend must be cuda, cutlass or triton, not '" + backend + "'");
  if (!numerics.empty() && !(f.numerics = search::parse_numerics_mode(numerics)))
    return fail("--numerics must be strict, reference or approximate, not '" + numerics + "'");

  std::vector<const search::Method*> list;
  if (!id.empty()) {
    const search::Method* m = r.find(id);
    if (!m) {
      std::string best;
      size_t best_d = 4;
      for (const auto& c : r.methods())
        if (size_t d = util::edit_distance(id, c.id); d < best_d) best_d = d, best = c.id;
      return fail("unknown method '" + id + "'" + (best.empty() ? "" : "; did you mean '" + best + "'?"));
    }
    list.push_back(m);
  } else {
    list = search::filter_methods(r, f);
  }

  if (util::is_stdout_path(json) && util::is_stdout_path(csv)) return fail("--json - and --csv - cannot both print to stdout");
  if (!json.empty()) {
    util::Json out = {{"source", search::methods_json_path().string()}, {"methods", util::Json::array()}};
    for (const auto* m : list) out["methods"].push_back(search::to_json(*m));
    if (auto st = util::write_json_output(json, "methods", out); !st) return fail(st.error().message);
  }
  if (auto st = util::write_text_output(csv, search::format_method_csv(list)); !st) return fail(st.error().message);
  if (util::is_stdout_path(json) || util::is_stdout_path(csv)) return 0;  // stdout carries the document alone
  if (!id.empty()) {
    std::fputs(search::format_method_card(*list.front()).c_str(), stdout);
  } else {
    std::fputs(search::format_method_table(list).c_str(), stdout);
  }
  return 0;
}

}  // namespace kopt::cli
