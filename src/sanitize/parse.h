#pragma once
// compute-sanitizer's text report as data (issue 18): each tool's findings with their kind, kernel (the device
// function the report names), source file and line (when the code has -lineinfo), address, thread and block,
// and count. Pure: the tool's console output in, a report out; tested on output captured on an H200
// (tests/data/sanitize/compute-sanitizer-<version>/).
//
// The text format (every line of the tool starts with "========= "; the program's own output has no prefix):
// a record starts with a non-indented line ("Invalid __global__ write of size 4 bytes", "Error: Race reported
// between Write access at f()+0x90 in k.cu:12", "Uninitialized __global__ memory read of size 4 bytes",
// "Barrier error detected. Divergent thread(s) in warp", "Program hit cudaErrorLaunchFailure (error 719) ...");
// indented lines that follow belong to it ("at f(int)+0x70 in k.cu:12", "by thread (31,0,0) in block (3,0,0)",
// "Access to 0x7f.. is out of bounds", "and Read access at ... [4000 hazards]", "Write Thread (32,0,0) at ...",
// host/device backtrace frames); "ERROR SUMMARY: N errors" and "RACECHECK SUMMARY: ..." end the report.
// Identical findings (same tool, kind, function, file, line, access and hazard) are merged and counted (only
// the printed records: --print-limit stops printing; the summary lines still count everything).
// A head line the parser does not know becomes a finding of kind "other" (never dropped).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/json_io.h"

namespace kopt::sanitize {

enum class Tool { kMemcheck, kRacecheck, kSynccheck, kInitcheck };
inline constexpr Tool kAllTools[] = {Tool::kMemcheck, Tool::kRacecheck, Tool::kSynccheck, Tool::kInitcheck};
std::string_view tool_name(Tool t);  // "memcheck", ...
std::optional<Tool> parse_tool(std::string_view name);

enum class FindingKind {
  kOutOfBounds,         // memcheck: invalid __global__/__shared__/__local__ read or write
  kMisaligned,          // memcheck: the same, at a misaligned address
  kHardwareException,   // memcheck: a device exception (illegal address, illegal instruction, ...)
  kRaceHazard,          // racecheck: RAW/WAR/WAW hazard on shared memory
  kUninitializedRead,   // initcheck: a read of device memory never written
  kUnusedMemory,        // initcheck --track-unused-memory: allocation bytes never used
  kBarrierError,        // synccheck: a barrier not reached by every thread it expects, or misused
  kCudaApiError,        // any tool: a CUDA API call returned an error ("Program hit ...")
  kLeak,                // memcheck --leak-check full
  kOther                // a record the parser does not know
};
std::string_view kind_name(FindingKind k);      // snake_case, for JSON
std::string_view describe(FindingKind k);       // a phrase, for reasons
bool rejects(FindingKind k, bool is_warning);   // the gate's table (sanitizer.h): what rejects a candidate
std::optional<FindingKind> parse_kind(std::string_view name);

struct Finding {
  Tool tool = Tool::kMemcheck;
  FindingKind kind = FindingKind::kOther;
  bool warning = false;         // racecheck's "Warning:" level (an "Error:" otherwise)
  std::string head;             // the record's first line, as printed
  std::string memory_space;     // "__global__", "__shared__", "__local__", ... when named
  std::string access;           // "read", "write", "atomic", "Read/Write" (racecheck pairs), ...
  std::string hazard;           // racecheck: "RAW", "WAR", "WAW" (hazard mode), else empty
  int access_size_bytes = 0;
  std::string function;         // the device function the report names ("twice(const float *, float *, int)")
  std::string file;             // with -lineinfo
  int line = 0;
  std::optional<uint64_t> address;
  std::string thread, block;    // "(31,0,0)"
  std::string detail;           // e.g. "is out of bounds; and is 4 bytes after the nearest allocation ..."
  int64_t count = 1;            // merged records, or racecheck's "[N hazards]"
  std::string kernel() const;   // `function` up to its argument list ("twice")
  std::string text() const;     // one line: "invalid __global__ write of 4 bytes (out of bounds) in twice at kernel.cu:10, x24"
};

struct Report {
  Tool tool = Tool::kMemcheck;
  std::vector<Finding> findings;
  std::optional<int64_t> error_summary;  // "ERROR SUMMARY: N errors"
  std::optional<int64_t> errors_not_printed;  // "ERROR SUMMARY: N errors were not printed" (past --print-limit)
  std::optional<int64_t> race_hazards, race_errors, race_warnings;  // "RACECHECK SUMMARY: ..."
  std::vector<std::string> notes;        // the tool's other messages (target exit status, internal errors)
  int64_t program_lines = 0;             // lines without the prefix (the program's own output)
  bool finished() const { return error_summary.has_value() || race_hazards.has_value(); }
  int64_t rejecting() const;             // findings that reject (count summed)
};

Report parse_text(Tool tool, std::string_view output);

util::Json to_json(const Finding& f);
util::Json to_json(const Report& r);

}  // namespace kopt::sanitize
