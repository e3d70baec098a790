#include "cli/parse.h"

#include <algorithm>
#include <cstdio>

#include "cli/parse_messages.h"
#include "core/exit_code.h"

namespace kopt::cli {

namespace {
std::optional<int> do_parse(CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
  } catch (const CLI::CallForHelp& e) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s\nRun '%s --help' for the options.\n", app.get_name().c_str(),
                 reword_parse_error(app, e).c_str(), app.get_name().c_str());
    return to_int(ExitCode::kInput);
  }
  return std::nullopt;
}
}  // namespace

std::optional<int> parse_args(CLI::App& app, const std::vector<std::string>& args) { return do_parse(app, args); }

std::optional<int> parse_args_with_dims(CLI::App& app, const std::vector<std::string>& args, Dims& dims) {
  app.allow_extras();
  if (auto rc = do_parse(app, args); rc) return rc;
  std::vector<std::string> known;
  for (const auto* opt : app.get_options()) {
    for (const auto& n : opt->get_lnames()) known.push_back(n);
  }
  auto parsed = parse_dims(app.remaining(), known);
  if (!parsed) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), parsed.error().message.c_str());
    return to_int(ExitCode::kInput);
  }
  dims = std::move(parsed).value();
  return std::nullopt;
}

}  // namespace kopt::cli
