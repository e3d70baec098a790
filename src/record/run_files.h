#pragma once
// The run directory's other files the report reads, as run records (record/run_record.h's rules: strict about types,
// tolerant of absence): the champion's champion.json, env.json's GPUs, the derivation's parameter roles, each
// iteration's roofline.json and the Nsight Compute metrics of its profile. Figures are kept as written (Number: an
// integer stays one), so the page shows them unchanged.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/json_io.h"

namespace kopt::record {

struct Number {  // a JSON number as written (the page shows 68719476736 FLOPs as such, not 68719476736.0)
  using kept_number = void;
  util::Json value;
  double get() const { return value.get<double>(); }
  bool operator==(const Number&) const = default;
};

struct ChampionFile {  // champion/champion.json
  std::string file;
  std::optional<std::string> baseline_file;  // null before kopt wrote the baseline beside it
  bool operator==(const ChampionFile&) const = default;
};

struct EnvGpu {
  std::string name;
  bool operator==(const EnvGpu&) const = default;
};
struct EnvRecord {  // env.json
  std::vector<EnvGpu> gpus;
  bool operator==(const EnvRecord&) const = default;
};

struct DerivedParam {
  std::string name, role;  // role: what the derivation found the parameter to be ("block_threads", "tile", ...)
  bool operator==(const DerivedParam&) const = default;
};
struct DerivationRecord {  // derived/derivation.json
  std::vector<DerivedParam> params;
  bool operator==(const DerivationRecord&) const = default;
};

struct ComputeTerm {
  std::string roof;
  bool operator==(const ComputeTerm&) const = default;
};
struct FloorRecord {  // roofline.json's floor: the workload model's figures
  std::optional<Number> flops, bytes_min, arithmetic_intensity, floor_ms, dram_gbps;
  std::string binding, dram_roof;
  std::vector<ComputeTerm> compute_terms;
  bool operator==(const FloorRecord&) const = default;
};
struct PlacementRecord {  // iter_*/roofline.json
  std::string kernel, mode, verdict;
  std::optional<Number> efficiency, achieved_tflops, achieved_gbps;
  std::optional<util::Json> utilisation, gaps, bound;  // per axis, shown as written
  std::optional<FloorRecord> floor;
  bool operator==(const PlacementRecord&) const = default;
};

struct TopMetric {
  std::string metric, unit, description;
  std::optional<std::string> name_used;  // the name this ncu version has (else `metric`)
  std::optional<Number> value, ideal, distance;
  bool operator==(const TopMetric&) const = default;
};
struct ProfileMetrics {  // iter_*/profile/*_metrics.json
  std::map<std::string, std::vector<TopMetric>> top_metrics;  // axis -> furthest from their ideal
  std::string ncu_version;
  std::optional<util::Json> classification;
  bool operator==(const ProfileMetrics&) const = default;
};

util::Json to_json(const ChampionFile& c);
util::Json to_json(const EnvRecord& e);
util::Json to_json(const DerivationRecord& d);
util::Json to_json(const PlacementRecord& p);
util::Json to_json(const ProfileMetrics& p);
ChampionFile champion_file_from_json(const util::Json& j, const std::string& where = "");
EnvRecord env_record_from_json(const util::Json& j, const std::string& where = "");
DerivationRecord derivation_record_from_json(const util::Json& j, const std::string& where = "");
PlacementRecord placement_record_from_json(const util::Json& j, const std::string& where = "");
ProfileMetrics profile_metrics_from_json(const util::Json& j, const std::string& where = "");

}  // namespace kopt::record
