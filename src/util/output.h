#pragma once
// Where a command's machine-readable result goes: `--json FILE|-` and `--csv FILE|-` mean one thing in every
// command. A path is written atomically; "-" is stdout, and then the human report moves to stderr so that
// stdout carries the document alone.
#include <cstdio>
#include <string>

#include "core/result.h"
#include "util/json_io.h"

namespace kopt::util {

inline constexpr const char* kStdoutPath = "-";
inline bool is_stdout_path(const std::string& path) { return path == kStdoutPath; }

// Where the human-readable report goes: stderr when any of the outputs is "-", else stdout.
std::FILE* report_stream(const std::string& json_path, const std::string& csv_path = "");

// Writes {"meta": ..., <body>} (write_json_atomic's document) to `path` or stdout. No-op for an empty path.
Status write_json_output(const std::string& path, const std::string& kind, const Json& body);
// Writes a JSON document that already carries its meta block as is.
Status write_json_document(const std::string& path, const Json& document);
// One CSV cell (RFC 4180): quoted when it holds a comma, a quote or a line break.
std::string csv_cell(const std::string& s);

// Writes text (a CSV table) to `path` or stdout. No-op for an empty path.
Status write_text_output(const std::string& path, const std::string& text);

// `--json -` on a failure: stdout gets {"error": {"message": ..., "kind": ...}, "exit_code": N} unless the command
// already wrote its own document there (one document on stdout, always). The command layer notes each failure it
// reports; cli/app.cpp prints the object once the command returns.
void note_failure(const std::string& message);
const std::string& noted_failure();  // the last noted; empty if none
bool stdout_document_written();      // whether write_text_output (or a JSON writer above) wrote to stdout
// The error object itself. `message` empty: a generic one naming the exit code.
Json failure_json(int exit_code, const std::string& message);

}  // namespace kopt::util
