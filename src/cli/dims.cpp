#include "cli/dims.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "contract/signature.h"
#include "search/source_scan.h"
#include "util/strings.h"

namespace kopt::cli {

namespace {

// One dimension NAME=VALUE; `as_given` is the argument as typed, for the messages.
Status parse_one(const std::string& name, const std::string& value, const std::string& as_given, Dims& dims) {
  if (!util::is_identifier(name)) {
    return input_error("bad dimension name '" + name + "' in '" + as_given +
                       "': a name is an identifier (letters, digits, _; not starting with a digit)");
  }
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || ptr != value.data() + value.size()) {
    if (ec == std::errc::result_out_of_range)
      return input_error("dimension " + name + "=" + value + " is too large for a 64-bit integer");
    return input_error("dimension " + name + "='" + value + "' is not an integer (write --" + name + "=4096)");
  }
  if (v <= 0) return input_error("dimension " + name + "=" + value + " must be positive");
  if (dims.count(name)) return input_error("dimension " + name + " is given twice");
  dims[name] = v;
  return ok_status();
}

// The short form's NAME, or an error when the argument is not --NAME=VALUE at all.
Result<std::string> short_name(const std::string& arg) {
  if (!util::starts_with(arg, "--"))
    return input_error("unexpected argument '" + arg + "': dimensions are given as --NAME=VALUE (e.g. --M=4096) or --dim NAME=VALUE");
  auto eq = arg.find('=');
  return arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
}

std::string near_miss(const std::string& name, const std::vector<std::string>& known_options) {
  for (const auto& opt : known_options)
    if (name != opt && name.size() > 3 && util::edit_distance(name, opt) <= 2) return opt;
  return "";
}

Status parse_short(const std::string& arg, const std::string& name, Dims& dims) {
  auto eq = arg.find('=');
  if (eq == std::string::npos)
    return input_error("unknown option '" + arg + "' (a dimension needs a value: --" + name + "=VALUE)");
  return parse_one(name, arg.substr(eq + 1), arg, dims);
}

// Both meanings of --NAME and the unambiguous form of the dimension (`tail`: what else to say).
std::string ambiguity(const std::string& name, const std::string& kernel_meaning, const std::string& option_meaning,
                      const std::string& value, const std::string& tail = "") {
  return fmt::format("--{} is ambiguous: it is {} '{}' (a dimension) and {}. Give the dimension as --dim {}={}{} "
                     "(README.md, Use)",
                     name, kernel_meaning, name, option_meaning, name, value.empty() ? "VALUE" : value, tail);
}

}  // namespace

Result<Dims> parse_dims(const std::vector<std::string>& args, const std::vector<std::string>& known_options) {
  Dims dims;
  for (const auto& arg : args) {
    KOPT_TRY_ASSIGN(std::string name, short_name(arg));
    if (auto opt = near_miss(name, known_options); !opt.empty())
      return input_error("unknown option '--" + name + "': did you mean '--" + opt + "'?");
    KOPT_TRY(parse_short(arg, name, dims));
  }
  return dims;
}

Result<Dims> resolve_dims(const DimContext& c) {
  Dims dims;
  std::set<std::string> explicit_names;
  for (const auto& a : c.dim_args) {
    auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      return input_error("--dim needs NAME=VALUE (e.g. --dim M=4096), not '" + a + "'");
    KOPT_TRY(parse_one(a.substr(0, eq), a.substr(eq + 1), "--dim " + a, dims));
    explicit_names.insert(a.substr(0, eq));
  }
  const auto& words = kernel_command_words();
  for (const auto& arg : c.short_args) {
    KOPT_TRY_ASSIGN(std::string name, short_name(arg));
    auto kernel = c.kernel_names.find(name);
    auto word = words.find(name);
    if (kernel != c.kernel_names.end() && word != words.end()) {
      auto eq = arg.find('=');
      return input_error(ambiguity(name, kernel->second, "an option of kopt " + word->second + ", which reads it as its own",
                                   eq == std::string::npos ? "" : arg.substr(eq + 1), " in every command"));
    }
    // A name the kernel takes is a dimension, however close it is to an option's name.
    if (kernel == c.kernel_names.end())
      if (auto opt = near_miss(name, c.own_options); !opt.empty())
        return input_error("unknown option '--" + name + "': did you mean '--" + opt + "'?");
    KOPT_TRY(parse_short(arg, name, dims));
  }
  for (const auto& [name, given] : c.given_options) {
    auto kernel = c.kernel_names.find(name);
    if (kernel == c.kernel_names.end() || explicit_names.count(name)) continue;
    const auto& [help, value] = given;
    return input_error(ambiguity(name, kernel->second, fmt::format("{}'s own option --{} ({}), which took it", c.command, name, help),
                                 value, fmt::format(" and {}'s option as --{} VALUE", c.command, name)));
  }
  return dims;
}

const std::map<std::string, std::string>& kernel_command_words() {
  static const std::map<std::string, std::string> words = [] {
    const std::string every = "check, bench, profile, roofline and optimize";
    std::map<std::string, std::string> w;
    for (const char* n : {"ref", "seeds", "atol", "rtol", "arch", "timeout", "out", "json", "dim", "help"}) w[n] = every;
    w["quiet"] = "bench, profile, roofline and optimize";
    w["static"] = "check";
    w["l2"] = "bench";
    w["db"] = "bench and optimize";
    w["gpu"] = w["quick"] = w["remeasure"] = w["svg"] = "roofline";
    for (const char* n : {"iterations", "branches", "generator", "finalists", "patience", "seed", "shapes", "sanitize",
                          "dispatch", "gpus", "ray", "resume"})
      w[n] = "optimize";
    return w;
  }();
  return words;
}

std::map<std::string, std::string> kernel_dim_names(const std::string& source_text, bool triton) {
  std::map<std::string, std::string> names;
  if (!triton) {
    auto sig = contract::parse_solve_signature(source_text);
    if (!sig) return names;
    for (const auto& p : sig->params)
      if (p.kind == contract::ParamKind::kScalar) names[p.name] = "solve()'s scalar parameter";
    return names;
  }
  auto entry = search::extract_entry_signature(source_text, search::SourceLanguage::kPython);
  if (!entry || !util::starts_with(*entry, "setup(")) return names;
  // setup(seed, n_rows, n_cols: int = 4, *, eps=1e-5); run_kernel(...): the top-level names of setup's list.
  std::string params, current;
  int depth = 0;
  for (size_t i = 6; i < entry->size(); ++i) {
    char ch = (*entry)[i];
    if (ch == ')' && depth == 0) break;
    if (ch == '(' || ch == '[' || ch == '{') ++depth;
    if (ch == ')' || ch == ']' || ch == '}') --depth;
    params += depth == 0 && ch == ',' ? '\n' : ch;
  }
  for (const auto& raw : util::split_lines(params)) {
    std::string p = util::trim(raw);
    p = p.substr(0, std::min(p.find(':'), p.find('=')));
    p = util::trim(p);
    if (p.empty() || p[0] == '*' || p == "seed" || p == "/" || !util::is_identifier(p)) continue;
    names[p] = "setup()'s argument";
  }
  return names;
}

}  // namespace kopt::cli
