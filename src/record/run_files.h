#pragma once
// The run directory's other files the report reads, as run records (record/run_record.h's rules: strict about types,
// tolerant of absence): the champion's champion.json, env.json's GPUs, the derivation's parameter roles, each
// iteration's roofline.json and the Nsight Compute metrics of its profile. Figures are kept as written (Number: an
// integer stays one), so the page shows them unchanged. Each struct's fields are named once, beside it.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "record/fields.h"
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
KOPT_RECORD_FIELDS(ChampionFile, file, baseline_file)

struct EnvGpu {
  std::string name;
  bool operator==(const EnvGpu&) const = default;
};
KOPT_RECORD_FIELDS(EnvGpu, name)
struct EnvRecord {  // env.json
  std::vector<EnvGpu> gpus;
  bool operator==(const EnvRecord&) const = default;
};
KOPT_RECORD_FIELDS(EnvRecord, gpus)

struct DerivedParam {
  std::string name, role;  // role: what the derivation found the parameter to be ("block_threads", "tile", ...)
  bool operator==(const DerivedParam&) const = default;
};
KOPT_RECORD_FIELDS(DerivedParam, name, role)
struct DerivationRecord {  // derived/derivation.json
  std::vector<DerivedParam> params;
  bool operator==(const DerivationRecord&) const = default;
};
KOPT_RECORD_FIELDS(DerivationRecord, params)

struct ComputeTerm {
  std::string roof;
  bool operator==(const ComputeTerm&) const = default;
};
KOPT_RECORD_FIELDS(ComputeTerm, roof)
struct FloorRecord {  // roofline.json's floor: the workload model's figures
  std::optional<Number> flops, bytes_min, arithmetic_intensity, floor_ms, dram_gbps;
  std::string binding, dram_roof;
  std::vector<ComputeTerm> compute_terms;
  bool operator==(const FloorRecord&) const = default;
};
KOPT_RECORD_FIELDS(FloorRecord, flops, bytes_min, arithmetic_intensity, floor_ms, dram_gbps, binding, dram_roof, compute_terms)
struct PlacementRecord {  // iter_*/roofline.json
  std::string kernel, mode, verdict;
  std::optional<Number> efficiency, achieved_tflops, achieved_gbps;
  std::optional<util::Json> utilisation, gaps, bound;  // per axis, shown as written
  std::optional<FloorRecord> floor;
  bool operator==(const PlacementRecord&) const = default;
};
KOPT_RECORD_FIELDS(PlacementRecord, kernel, mode, verdict, efficiency, achieved_tflops, achieved_gbps, utilisation, gaps, bound, floor)

struct TopMetric {
  std::string metric, unit, description;
  std::optional<std::string> name_used;  // the name this ncu version has (else `metric`)
  std::optional<Number> value, ideal, distance;
  bool operator==(const TopMetric&) const = default;
};
KOPT_RECORD_FIELDS(TopMetric, metric, unit, description, name_used, value, ideal, distance)
struct ProfileMetrics {  // iter_*/profile/*_metrics.json
  std::map<std::string, std::vector<TopMetric>> top_metrics;  // axis -> furthest from their ideal
  std::string ncu_version;
  std::optional<util::Json> classification;
  bool operator==(const ProfileMetrics&) const = default;
};
KOPT_RECORD_FIELDS(ProfileMetrics, top_metrics, ncu_version, classification)

// Each is written and read by record::write_record / read_record<T> (record/fields.h).

}  // namespace kopt::record
