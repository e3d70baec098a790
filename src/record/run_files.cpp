#include "record/run_files.h"

#include "record/fields.h"

namespace kopt::record {

using util::Json;
using namespace fields;

KOPT_RECORD_FIELDS(ChampionFile, file, baseline_file)
KOPT_RECORD_FIELDS(EnvGpu, name)
KOPT_RECORD_FIELDS(EnvRecord, gpus)
KOPT_RECORD_FIELDS(DerivedParam, name, role)
KOPT_RECORD_FIELDS(DerivationRecord, params)
KOPT_RECORD_FIELDS(ComputeTerm, roof)
KOPT_RECORD_FIELDS(FloorRecord, flops, bytes_min, arithmetic_intensity, floor_ms, dram_gbps, binding, dram_roof, compute_terms)
KOPT_RECORD_FIELDS(PlacementRecord, kernel, mode, verdict, efficiency, achieved_tflops, achieved_gbps, utilisation, gaps, bound, floor)
KOPT_RECORD_FIELDS(TopMetric, metric, unit, description, name_used, value, ideal, distance)
KOPT_RECORD_FIELDS(ProfileMetrics, top_metrics, ncu_version, classification)

KOPT_RECORD_JSON(ChampionFile, champion_file_from_json)
KOPT_RECORD_JSON(EnvRecord, env_record_from_json)
KOPT_RECORD_JSON(DerivationRecord, derivation_record_from_json)
KOPT_RECORD_JSON(PlacementRecord, placement_record_from_json)
KOPT_RECORD_JSON(ProfileMetrics, profile_metrics_from_json)

}  // namespace kopt::record
