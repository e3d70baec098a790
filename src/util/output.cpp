#include "util/output.h"

#include "util/fs.h"

namespace kopt::util {

namespace {
std::string& failure_slot() {
  static std::string message;
  return message;
}
bool& stdout_written() {
  static bool written = false;
  return written;
}
}  // namespace

void note_failure(const std::string& message) { failure_slot() = message; }
const std::string& noted_failure() { return failure_slot(); }
bool stdout_document_written() { return stdout_written(); }

// One word per exit code (core/exit_code.h) for machine-readable errors.
std::string_view exit_kind(ExitCode c) {
  switch (c) {
    case ExitCode::kOk: return "ok";
    case ExitCode::kOther: return "internal";
    case ExitCode::kValidation: return "validation";
    case ExitCode::kGate: return "gate";
    case ExitCode::kInput: return "input";
    case ExitCode::kInterrupted: return "interrupted";
  }
  return "unknown";
}

Json failure_json(int exit_code, const std::string& message) {
  const auto code = static_cast<ExitCode>(exit_code);
  std::string kind(exit_kind(code));
  return {{"error", {{"message", message.empty() ? "failed (" + std::string(describe(code)) + "); see stderr" : message},
                     {"kind", kind}}},
          {"exit_code", exit_code}};
}

std::FILE* report_stream(const std::string& json_path, const std::string& csv_path) {
  return is_stdout_path(json_path) || is_stdout_path(csv_path) ? stderr : stdout;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

Status write_text_output(const std::string& path, const std::string& text) {
  if (path.empty()) return ok_status();
  if (is_stdout_path(path)) {
    stdout_written() = true;
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
      return internal_error("cannot write to stdout");
    return ok_status();
  }
  return write_file_atomic(path, text);
}

Status write_json_document(const std::string& path, const Json& document) {
  return write_text_output(path, document.dump(2) + "\n");
}

Status write_json_output(const std::string& path, const std::string& kind, const Json& body) {
  if (path.empty()) return ok_status();
  if (!is_stdout_path(path)) return write_json_atomic(path, kind, body);
  Json out = Json::object();
  out["meta"] = make_meta(kind);
  if (body.is_object()) {
    for (auto it = body.begin(); it != body.end(); ++it) out[it.key()] = it.value();
  } else {
    out["data"] = body;
  }
  return write_json_document(path, out);
}

}  // namespace kopt::util
