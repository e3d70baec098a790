#pragma once
// summary.md rendered from summary.json (schema "kopt.summary/1"): a pure function, so `kopt report RUN_DIR`
// re-renders exactly what the run wrote.
#include <string>

#include "core/result.h"
#include "record/summary_record.h"
#include "util/json_io.h"

namespace kopt::report {

inline constexpr const char* kSummarySchema = "kopt.summary/1";

// Renders the Markdown summary. Missing optional parts are shown as "n/a", never invented. The JSON form reads it as
// the run record first (throws record::RecordError on a field of a wrong type: the loop's own summary has none).
std::string render_markdown(const record::SummaryRecord& summary);
std::string render_markdown(const util::Json& summary);
// The sections of issue 18's gates (cases, held-out shapes, safety), part of render_markdown; empty when absent.
std::string render_gates_markdown(const record::SummarySections& summary);

// Reads RUN_DIR/summary.json, validates its schema, writes RUN_DIR/summary.md atomically.
Result<std::string> rerender(const std::string& run_dir);

}  // namespace kopt::report
