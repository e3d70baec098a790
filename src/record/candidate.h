#pragma once
// The search's candidate (search::Candidate) as the run record's CandidateConfig and back: how the loop writes and
// reads state.json's candidates through the record.
#include "record/run_record.h"
#include "search/candidate.h"

namespace kopt::record {

// Every field set, as search::to_json writes them (config null when the candidate has no point in the space).
CandidateConfig config_of(const search::Candidate& c);
// Absent fields empty; RecordError when the id or the source is absent, or config is not a point of the space.
search::Candidate candidate_of(const CandidateConfig& c, const std::string& where = "candidate");

}  // namespace kopt::record
