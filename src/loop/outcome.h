#pragma once
// How `kopt optimize` ended, as the loop hands it back: the command line (cli/cmd_optimize.cpp) prints a finished
// run's summary, then (report_outcome) its message, and exits with its code, from the one exit-code table
// (core/exit_code.h). The loop prints none of these itself.
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "core/exit_code.h"
#include "util/json_io.h"

namespace kopt::loop {

enum class RunEnd {
  kFinished,          // the loop stopped by its rules: the champion, the summary (exit 0)
  kAlreadyFinished,   // --resume of a finished run: nothing was done (exit 0)
  kInputError,        // the inputs, or the run directory --resume names, are unusable: nothing was written
  kHardwareGate,      // the hardware gate failed before anything was written (a resumed run stays resumable)
  kGateStopped,       // a gate stopped the run: stop.json, summary.md (not resumable)
  kGeneratorStopped,  // the generator failed: resumable
  kInterrupted,       // interrupted (SIGINT): resumable
  kFailed,            // kopt itself failed (a file it cannot write): resumable
};
std::string_view run_end_name(RunEnd e);

struct RunOutcome {
  RunEnd end = RunEnd::kFinished;
  ExitCode code = ExitCode::kOk;
  // What the command line prints on stderr, as is (each line ends in '\n'); empty: nothing.
  std::string message;
  // The run directory: empty before one is made (or named by --resume).
  std::filesystem::path run_dir;
  // A finished run's summary (summary.json's document), which the command line prints as markdown
  // (report::render_markdown) unless --quiet; null for every other end.
  util::Json summary;

  int exit_code() const { return to_int(code); }
};

// Where the loop's progress lines go (one line each, without its '\n').
using ProgressSink = std::function<void(const std::string&)>;

// What the command line does with an outcome: its message on stderr, then its exit code.
int report_outcome(const RunOutcome& r);

}  // namespace kopt::loop
