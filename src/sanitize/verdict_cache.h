#pragma once
// The sanitizer cache (issue 36; docs/GATES.md "The sanitizer cache"): compute-sanitizer's four tools and the
// shared-memory fill cost 2-5 s a gate on the H200, and a second run of the same kernel asks them the same question
// twice (the baseline before the search, the final champion after it). What they judge is the code on one set of
// inputs: the same library bytes (or Triton source and configuration), the same golden data at the sanitizer's case,
// the same tools and check child, the same GPU model and driver give the same verdict. A complete verdict that
// rejected nothing is kept under a key of all of these; a rejection, a tool that did not finish and a fill that
// decided nothing are never kept (they run again, with their findings in full). KOPT_EVIDENCE_CACHE=off runs every
// gate (loop/lab.h: Lab::evidence_cache_dir).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "sanitize/sanitizer.h"

namespace kopt::sanitize {

// What a verdict was judged on. Every field is required: one left empty makes no key (nothing is kept or found).
struct VerdictSubject {
  std::string code;                 // a hash of the library's bytes, or of the Triton kernel's source and configuration
  std::string golden;               // contract::golden_identity of the golden data at the sanitizer's case
  std::filesystem::path sanitizer;  // compute-sanitizer (its path, size and modification time are keyed)
  std::filesystem::path checker;    // the check child's executable (kopt itself, or the Triton runner's Python)
  std::string gpu, driver;          // the GPU's model and the driver's version
};
// The key of a request's verdict: the subject, the tools, whether the fill runs and kopt's KOPT_* environment (the check
// child reads it). Empty: nothing to key on.
std::string verdict_key(const VerdictSubject& subject, const Request& request);

// A verdict worth keeping: every tool finished, nothing rejected, the fill clean or not asked.
bool keepable(const Verdict& v);

// The verdict kept under key in dir, with from_cache set (the entry, when and by which run it was made); nullopt when
// there is none or it cannot be read.
std::optional<Verdict> find_verdict(const std::filesystem::path& dir, const std::string& key);
// Keeps v under key in dir (atomically), when keepable: true when kept.
Result<bool> keep_verdict(const std::filesystem::path& dir, const std::string& key, const Verdict& v, const std::string& run_dir);

}  // namespace kopt::sanitize
