#include "cli/app.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "core/exit_code.h"
#include "runner/child.h"
#include "runner/sealed.h"
#include "runner/warm.h"
#include "toolchain/tools.h"
#include "util/output.h"
#include "util/process.h"
#include "util/strings.h"

namespace kopt::cli {

const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> table = {
      {"optimize", "run the roofline-guided branch-and-select loop on a kernel", cmd_optimize, true},
      {"check", "check a kernel's contract (solve(), ref.py, dims) without a GPU; the reference on the CPU", cmd_check, true},
      {"bench", "check a kernel's correctness on every seed and time it", cmd_bench, true},
      {"profile", "profile one solve() call with Nsight Compute (adaptive sections)", cmd_profile, true},
      {"sass", "compile a kernel, show its resources and instruction mix, verify methods in SASS", cmd_sass, true},
      {"roofline", "measure device ceilings and place a kernel on the roofline", cmd_roofline, true},
      {"doctor", "check the GPU, drivers and tools kopt needs (the hardware gate)", cmd_doctor, true},
      {"report", "re-render a run directory's summary from its JSON (--html: the page)", cmd_report},
      {"export", "a run's measurements as Kernel Tuner T4 results or CSV", cmd_export, true},
      {"compare", "two runs side by side: time ratios with 95% CIs, and whether they decided alike", cmd_compare, true},
      {"methods", "list the optimization method registry", cmd_methods, true},
      {"annotate", "derive a search space from a kernel without @kopt lines (--write: the annotated copy)", cmd_annotate, true},
      {"db", "the results database: list, query, export and prune every measured configuration", cmd_db, true},
      {"llm-check", "check a language-model endpoint (URL, key, model) for --generator llm", cmd_llm_check},
  };
  return table;
}

std::string help_text() {
  std::string s = fmt::format(
      "kopt {} — makes CUDA, CUTLASS and Triton kernels faster, with evidence.\n\n"
      "Usage: kopt <command> [options]\n       kopt <command> --help   (or: kopt help <command>)\n       kopt --version\n\n"
      "Commands:\n",
      KOPT_VERSION);
  for (const auto& c : subcommands()) s += fmt::format("  {:<10} {}\n", c.name, c.summary);
  s += "\nOptions:\n  -h, --help     this help; kopt <command> --help lists the command's options\n"
       "  -V, --version  print kopt's version\n";
  s += "\nOutput: --json FILE|- and --csv FILE|- mean the same in every command ('-' is stdout; the human report\n"
       "then goes to stderr). Progress goes to stderr; --quiet silences it.\n";
  s += "\nDimensions are given as --NAME=VALUE, e.g. kopt bench k.cu --ref ref.py --M=4096 --N=4096 --K=4096, or as\n"
       "--dim NAME=VALUE where NAME is also one of the command's options (--dim iterations=3)\n"
       "\nExit codes:\n";
  for (ExitCode c : {ExitCode::kOk, ExitCode::kOther, ExitCode::kValidation, ExitCode::kGate, ExitCode::kInput,
                     ExitCode::kInterrupted})
    s += fmt::format("  {:<4} {}\n", to_int(c), describe(c));
  return s;
}

std::string suggest_subcommand(std::string_view typed) {
  std::string best;
  size_t best_d = 3;  // suggest only within distance 2
  for (const auto& c : subcommands()) {
    size_t d = util::edit_distance(typed, c.name);
    if (d < best_d || (d <= 2 && util::starts_with(c.name, typed) && typed.size() >= 3)) {
      best_d = d;
      best = std::string(c.name);
    }
  }
  if (best.empty()) {  // a unique prefix also counts ("opt" -> optimize)
    for (const auto& c : subcommands())
      if (typed.size() >= 3 && util::starts_with(c.name, typed)) return std::string(c.name);
  }
  return best;
}

int not_available(const std::string& name, const std::string& where) {
  std::fprintf(stderr, "kopt %s: not available yet in this version of kopt (%s).\n", name.c_str(), where.c_str());
  return to_int(ExitCode::kOther);
}

bool json_to_stdout(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json=-") return true;
    if (args[i] == "--json" && i + 1 < args.size() && args[i + 1] == util::kStdoutPath) return true;
  }
  return false;
}

int run_subcommand(const Subcommand& c, const std::vector<std::string>& args) {
  int rc = c.handler(args);
  if (rc != 0 && c.takes_json && json_to_stdout(args) && !util::stdout_document_written()) {
    std::fflush(stderr);
    (void)util::write_json_document(util::kStdoutPath, util::failure_json(rc, util::noted_failure()));
  }
  return rc;
}

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 2 && args[0] == "help") {  // kopt help CMD: that command's own help
    for (const auto& c : subcommands())
      if (c.name == args[1]) return c.handler({"--help"});
    std::string hint = suggest_subcommand(args[1]);
    std::fprintf(stderr, "kopt help: unknown command '%s'.%s Run 'kopt --help' for the list.\n", args[1].c_str(),
                 hint.empty() ? "" : (" Did you mean '" + hint + "'?").c_str());
    return to_int(ExitCode::kInput);
  }
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(help_text().c_str(), stdout);
    return args.empty() ? to_int(ExitCode::kInput) : 0;
  }
  if (args[0] == "--version" || args[0] == "-V") {
    std::printf("kopt %s\n", KOPT_VERSION);
    return 0;
  }
  util::install_interrupt_handler();
  (void)toolchain::keep_python_bytecode_in_cache();  // before any Python child (tools.h says why)
  const std::string& name = args[0];
  if (name == "__runner") {  // internal: the measuring child process (not listed in --help)
    return runner::child_main(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (name == "__judge") {  // internal: holds the sealed seed's expected outputs for a measuring process (runner/sealed.h)
    // `__judge --ephemeral-fd N`: the ephemeral seed's memfd at N serves in the sealed seed's place.
    return runner::judge_main(args.size() > 2 && args[1] == "--ephemeral-fd" ? std::atoi(args[2].c_str()) : -1);
  }
  if (name == "__worker") {  // internal: the long-lived measuring worker of optimize (runner/worker.h)
    return runner::worker_main(args.size() > 1 && args[1] == "--one-shot-verdicts");
  }
  if (name == "__bench-server") {  // internal: the warm bench worker's server, started by kopt bench (runner/warm.h)
    return runner::bench_server_main(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (name == "__search-replay") {  // internal: scripts/perf/search_efficiency.sh (not listed in --help)
    return cmd_search_replay(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  for (const auto& c : subcommands()) {
    if (c.name == name) return run_subcommand(c, std::vector<std::string>(args.begin() + 1, args.end()));
  }
  std::string hint = suggest_subcommand(name);
  if (!hint.empty()) {
    std::fprintf(stderr, "kopt: unknown command '%s'. Did you mean '%s'?\n", name.c_str(), hint.c_str());
  } else {
    std::fprintf(stderr, "kopt: unknown command '%s'. Run 'kopt --help' for the list.\n", name.c_str());
  }
  return to_int(ExitCode::kInput);
}

}  // namespace kopt::cli
