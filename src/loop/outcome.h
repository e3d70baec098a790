#pragma once
// How `kopt optimize` ended, in the loop's own terms: the end, the error that caused it, the message. The command
// line (cli/cmd_optimize.cpp) prints a finished run's summary, then its message, and maps the end to an exit code
// (cli/run_outcome.h, from the one table, core/exit_code.h). The loop prints none of these and decides no exit code.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "util/json_io.h"

namespace kopt::loop {

enum class RunEnd {
  kFinished,          // the loop stopped by its rules: the champion, the summary
  kAlreadyFinished,   // --resume of a finished run: nothing was done
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
  // What ended the run, as the step that failed returned it (its kind: input, gate, validation, other): set for
  // kInputError, kHardwareGate, kGateStopped, kGeneratorStopped and kFailed; empty for the others, which say it all.
  std::optional<Error> error;
  // What the command line prints on stderr, as is (each line ends in '\n'); empty: nothing.
  std::string message;
  // The run directory: empty before one is made (or named by --resume).
  std::filesystem::path run_dir;
  // A finished run's summary (summary.json's document), which the command line prints as markdown
  // (report::render_markdown) unless --quiet; null for every other end.
  util::Json summary;
};

// Where the loop's progress lines go (one line each, without its '\n').
using ProgressSink = std::function<void(const std::string&)>;

}  // namespace kopt::loop
