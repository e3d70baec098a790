#include "sass/report.h"

#include <fmt/format.h>

#include "sass/demangle.h"
#include "sass/mix.h"
#include "util/strings.h"

namespace kopt::sass {

namespace {

const compile::KernelResources* resources_of(const SassReport& r, const SassFunction& f) {
  for (const auto& k : r.resources)
    if (k.name == f.mangled && (k.arch.empty() || f.arch.empty() || k.arch == f.arch)) return &k;
  return nullptr;
}

std::string bytes(const std::optional<int64_t>& v) { return v ? fmt::format("{} B", *v) : "?"; }

std::string resources_line(const compile::KernelResources& k) {
  std::vector<std::string> parts;
  parts.push_back(k.registers ? fmt::format("{} registers", *k.registers) : "registers ?");
  if (k.barriers) parts.push_back(fmt::format("{} barriers", *k.barriers));
  parts.push_back("shared " + bytes(k.shared_bytes));
  parts.push_back("stack " + bytes(k.stack_frame_bytes));
  if (k.spill_store_bytes || k.spill_load_bytes)
    parts.push_back(fmt::format("spills {} stored / {} loaded{}", bytes(k.spill_store_bytes), bytes(k.spill_load_bytes),
                                k.spills() ? "  <- SPILLS" : ""));
  if (k.local_bytes) parts.push_back("local " + bytes(k.local_bytes));
  return util::join(parts, ", ");
}

}  // namespace

std::vector<const SassFunction*> shown_functions(const SassReport& r) {
  if (!r.analysis.wanted.empty()) return r.analysis.selected_functions();
  std::vector<const SassFunction*> all;
  for (const auto& f : r.analysis.functions) all.push_back(&f);
  return all;
}

std::string format_text(const SassReport& r) {
  std::string s;
  s += fmt::format("kopt sass: {}{}\n", r.source.empty() ? r.analysis.binary.string() : r.source,
                   r.arch.empty() ? "" : " (" + r.arch + ")");
  if (r.compile) {
    s += fmt::format("  compile: {} in {:.2f} s ({})\n", compile::to_string(r.compile->status),
                     r.compile->compile_ms / 1000.0, r.compile->cache_hit ? "build cache hit" : "compiled");
  }
  s += fmt::format("  library: {}\n", r.analysis.binary.string());
  if (!r.analysis.wanted.empty())
    s += fmt::format("  kernels looked for: {}{}\n", util::join(r.analysis.wanted, ", "),
                     r.analysis.unmatched.empty() ? "" : "  (not found: " + util::join(r.analysis.unmatched, ", ") + ")");
  if (!r.analysis.tool_error.empty()) s += "  cuobjdump: " + r.analysis.tool_error + "\n";

  for (const auto* f : shown_functions(r)) {
    s += fmt::format("\nkernel {}  [{}]\n", f->demangled, f->arch);
    if (const auto* k = resources_of(r, *f)) s += "  resources: " + resources_line(*k) + "\n";
    auto mix = instruction_mix(*f);
    s += fmt::format("  instructions: {} (NOP and never-executed excluded)\n", mix.total);
    const auto& cls = mix_classes();
    for (size_t i = 0; i < cls.size(); ++i)
      if (mix.counts[i] > 0) s += fmt::format("    {:<10} {:>6}   {}\n", cls[i].name, mix.counts[i], cls[i].description);
  }

  if (!r.methods.empty()) {
    s += "\nmethods\n";
    for (const auto& m : r.methods) {
      const auto& v = m.verification;
      s += fmt::format("  {:<16} {:<14} {}\n", m.method, to_string(v.status), v.message);
      bool any_ok = false;  // require_any passes as a rule when one of its patterns is found
      for (const auto& c : v.checks) any_ok = any_ok || (c.rule == "require_any" && c.ok);
      for (const auto& c : v.checks) {
        std::string mark = c.ok ? "ok" : (c.rule == "require_any" && any_ok) ? "--" : "NO";
        std::string count = c.rule == "min_count" ? fmt::format("x{} (need {})", c.count, c.min_count)
                                                  : fmt::format("x{}", c.count);
        std::string first;
        if (!c.examples.empty())
          first = fmt::format("{} /*{:04x}*/ {}", base_name(c.examples[0].function), c.examples[0].address,
                              c.examples[0].instruction);
        std::string row = fmt::format("      {:<3} {:<12} {:<18} {:<12} {}", mark, c.rule, c.pattern, count, first);
        s += util::trim(row).empty() ? "\n" : row.substr(0, row.find_last_not_of(' ') + 1) + "\n";
      }
    }
  }
  return s;
}

util::Json to_json(const SassReport& r) {
  util::Json kernels = util::Json::array();
  for (const auto* f : shown_functions(r)) {
    util::Json k = {{"name", f->demangled}, {"mangled", f->mangled}, {"arch", f->arch},
                    {"instruction_mix", to_json(instruction_mix(*f))}};
    const auto* res = resources_of(r, *f);
    k["resources"] = res ? compile::to_json(*res) : util::Json(nullptr);
    kernels.push_back(std::move(k));
  }
  util::Json methods = util::Json::object();
  for (const auto& m : r.methods) methods[m.method] = to_json(m.verification);
  util::Json j = {{"source", r.source},
                  {"arch", r.arch},
                  {"library", r.analysis.binary.string()},
                  {"kernels_wanted", r.analysis.wanted},
                  {"kernels_not_found", r.analysis.unmatched},
                  {"cuobjdump_error", r.analysis.tool_error},
                  {"kernels", kernels},
                  {"methods", methods}};
  j["compile"] = r.compile ? compile::to_json(*r.compile) : util::Json(nullptr);
  return j;
}

}  // namespace kopt::sass
