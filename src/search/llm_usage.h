#pragma once
// What the language model cost and did, for the summary: requests, retries, repairs, tokens and wall time,
// from the llm_usage.json that `--generator llm` writes into each iteration directory.
#include <filesystem>
#include <string>

#include "util/json_io.h"

namespace kopt::search {

// The totals of one iteration's record ({"requests": [...], "conversations": [...]}): requests, http_attempts,
// retries, repair_requests, reused_requests, prompt_tokens, completion_tokens, requests_without_usage,
// request_wall_s, accepted, failed, no_candidate, repaired (accepted after at least one repair).
util::Json llm_usage_totals(const util::Json& usage);

// The summary fragment of a run: {"endpoint", "totals" (over the iterations), "iterations": [{iteration, ...totals}]};
// null when no iteration used a language model.
util::Json llm_usage_summary(const std::filesystem::path& run_dir);

// The fragment as a Markdown section for summary.md ("" for null).
std::string render_llm_usage_markdown(const util::Json& summary);

}  // namespace kopt::search
