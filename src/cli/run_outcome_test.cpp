// The one mapping of how `kopt optimize` ended to the exit code a user sees (cli/run_outcome.h), as a table.
#include "cli/run_outcome.h"

#include <gtest/gtest.h>

#include <optional>

namespace kopt::cli {
namespace {

using loop::RunEnd;
using loop::RunOutcome;

RunOutcome ended(RunEnd end, std::optional<Error> error = std::nullopt) {
  RunOutcome r;
  r.end = end;
  r.error = std::move(error);
  return r;
}

TEST(RunOutcomeExitCode, EachEndAndErrorKindMapsToTheTablesCode) {
  struct Row {
    RunEnd end;
    std::optional<Error> error;
    int code;
  };
  const Row rows[] = {
      {RunEnd::kFinished, std::nullopt, 0},
      {RunEnd::kAlreadyFinished, std::nullopt, 0},
      {RunEnd::kInterrupted, std::nullopt, 130},
      {RunEnd::kHardwareGate, gate_error("no GPU"), 3},
      {RunEnd::kHardwareGate, std::nullopt, 3},
      // The inputs: the kind the failing step said (a contract's validation, a run directory's input error).
      {RunEnd::kInputError, input_error("bad --dims"), 4},
      {RunEnd::kInputError, validation_error("ref.py"), 2},
      {RunEnd::kInputError, internal_error("cannot write"), 1},
      {RunEnd::kInputError, std::nullopt, 4},
      // A gate: its error's kind, as written to stop.json's exit_code.
      {RunEnd::kGateStopped, validation_error("wrong output"), 2},
      {RunEnd::kGateStopped, gate_error("timing unstable"), 3},
      {RunEnd::kGateStopped, input_error("golden data"), 4},
      {RunEnd::kGateStopped, Error{ExitCode::kInterrupted, "interrupted"}, 130},
      {RunEnd::kGateStopped, std::nullopt, 3},
      // The generator and kopt's own failures: never 0, whatever the error says.
      {RunEnd::kGeneratorStopped, input_error("no endpoint"), 4},
      {RunEnd::kGeneratorStopped, Error{ExitCode::kOk, "?"}, 1},
      {RunEnd::kGeneratorStopped, std::nullopt, 1},
      {RunEnd::kFailed, internal_error("disk full"), 1},
      {RunEnd::kFailed, Error{ExitCode::kOk, "?"}, 1},
      {RunEnd::kFailed, gate_error("lost the GPU"), 3},
  };
  for (const auto& row : rows)
    EXPECT_EQ(to_int(exit_code_of(ended(row.end, row.error))), row.code)
        << loop::run_end_name(row.end) << " / " << (row.error ? row.error->message : "no error");
}

TEST(RunOutcomeExitCode, TheReportPrintsTheMessageAsIsThenReturnsTheCode) {
  RunOutcome r = ended(RunEnd::kGateStopped, validation_error("wrong"));
  r.message = "kopt optimize: stopped at the correctness gate: wrong\n  run directory: RUN (stop.json, summary.md)\n";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(report_outcome(r), 2);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), r.message);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(report_outcome(ended(RunEnd::kFinished)), 0);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "a finished run's message is empty: nothing is printed";
}

}  // namespace
}  // namespace kopt::cli
