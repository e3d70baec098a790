#include "cli/parse.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "cli/parse_messages.h"
#include "core/exit_code.h"
#include "util/fs.h"
#include "util/output.h"

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
    std::string message = reword_parse_error(app, e);
    std::fprintf(stderr, "%s: %s\nRun '%s --help' for the options.\n", app.get_name().c_str(), message.c_str(),
                 app.get_name().c_str());
    util::note_failure(message);
    return to_int(ExitCode::kInput);
  }
  const std::string deprecated = "deprecated: ";
  for (const CLI::Option* o : app.get_options())
    if (o->count() > 0 && o->get_group().empty() && o->get_description().rfind(deprecated, 0) == 0)
      std::fprintf(stderr, "%s: note: --%s is deprecated: it is now %s\n", app.get_name().c_str(),
                   o->get_lnames().empty() ? "?" : o->get_lnames().front().c_str(),  // a hidden option has no get_name()
                   o->get_description().substr(deprecated.size()).c_str());
  return std::nullopt;
}
}  // namespace

std::optional<int> parse_args(CLI::App& app, const std::vector<std::string>& args) { return do_parse(app, args); }

std::optional<int> parse_args_with_dims(CLI::App& app, const std::vector<std::string>& args, Dims& dims,
                                        const std::string& kernel) {
  app.allow_extras();
  DimContext c;
  app.add_option("--dim", c.dim_args,
                 "a dimension (repeatable): the unambiguous form of --NAME=VALUE, for a name that is also an option "
                 "(--dim iterations=3)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  if (auto rc = do_parse(app, args); rc) return rc;
  c.command = app.get_name();
  c.short_args = app.remaining();
  for (const auto* opt : app.get_options()) {
    for (const auto& n : opt->get_lnames()) {
      c.own_options.push_back(n);
      if (opt->count() > 0 && n != "dim")
        c.given_options[n] = {opt->get_description(), opt->results().empty() ? "" : opt->results().front()};
    }
  }
  std::error_code ec;
  if (!kernel.empty() && std::filesystem::is_regular_file(kernel, ec))
    if (auto text = util::read_file(kernel); text)
      c.kernel_names = kernel_dim_names(*text, std::filesystem::path(kernel).extension() == ".py");
  auto parsed = resolve_dims(c);
  if (!parsed) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), parsed.error().message.c_str());
    util::note_failure(parsed.error().message);
    return to_int(ExitCode::kInput);
  }
  dims = std::move(parsed).value();
  return std::nullopt;
}

}  // namespace kopt::cli
