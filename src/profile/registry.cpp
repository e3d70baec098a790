#include "profile/registry.h"

#include <algorithm>
#include <set>

#include "util/strings.h"

namespace kopt::profile {

std::string_view describe(Direction d) { return d == Direction::kHigherBetter ? "higher_better" : "lower_better"; }

namespace {

constexpr const char* kCpi = "smsp__average_warp_latency_per_inst_issued.ratio";

MetricSpec pct(std::string name, Axis axis, std::string section, std::string description) {
  MetricSpec s;
  s.name = std::move(name);
  s.unit = "%";
  s.axis = axis;
  s.direction = Direction::kHigherBetter;
  s.ideal = 100;
  s.scale = 100;
  s.section = std::move(section);
  s.description = std::move(description);
  return s;
}

// A warp-stall reason: cycles per issued instruction spent in that stall; ideal 0, scaled by the total
// cycles between two issues of a warp (so the distance is the share of latency this stall explains).
MetricSpec stall(const std::string& reason, std::string description) {
  MetricSpec s;
  s.name = "smsp__average_warps_issue_stalled_" + reason + "_per_issue_active.ratio";
  s.unit = "cycle";
  s.axis = Axis::kLatency;
  s.direction = Direction::kLowerBetter;
  s.ideal = 0;
  s.scale_metric = kCpi;
  s.section = "WarpStateStats";
  s.description = std::move(description);
  return s;
}

MetricSpec ratio(std::string name, std::string unit, Axis axis, Direction dir, double ideal, double scale,
                 std::string section, std::string description) {
  MetricSpec s;
  s.name = std::move(name);
  s.unit = std::move(unit);
  s.axis = axis;
  s.direction = dir;
  s.ideal = ideal;
  s.scale = scale;
  s.section = std::move(section);
  s.description = std::move(description);
  return s;
}

std::vector<MetricSpec> build_registry() {
  using enum Axis;
  std::vector<MetricSpec> r;
  // ---- compute
  r.push_back(pct("sm__throughput.avg.pct_of_peak_sustained_elapsed", kCompute, "SpeedOfLight",
                  "Compute (SM) throughput: the busiest SM unit, % of its peak (speed of light)"));
  r.push_back(ratio("sm__inst_executed.avg.per_cycle_active", "inst/cycle", kCompute, Direction::kHigherBetter, 4, 4,
                    "ComputeWorkloadAnalysis",
                    "Executed IPC per SM while active; 4 schedulers issue at most 4 instructions per cycle"));
  {
    auto s = pct("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", kCompute, "ComputeWorkloadAnalysis",
                 "FMA pipe busy, % of active cycles (FP32 math)");
    s.skip_if_zero = true;
    r.push_back(s);
  }
  {
    auto s = pct("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", kCompute, "ComputeWorkloadAnalysis",
                 "Tensor pipe busy, % of active cycles (only ranked when tensor instructions run)");
    s.skip_if_zero = true;
    r.push_back(s);
  }
  r.push_back(ratio("smsp__thread_inst_executed_per_inst_executed.ratio", "thread", kCompute,
                    Direction::kHigherBetter, 32, 32, "WarpStateStats",
                    "Active threads per executed warp instruction (divergence leaves lanes idle)"));
  r.push_back(ratio("smsp__thread_inst_executed_pred_on_per_inst_executed.ratio", "thread", kCompute,
                    Direction::kHigherBetter, 32, 32, "WarpStateStats",
                    "Threads not predicated off per executed warp instruction"));
  // ---- memory
  r.push_back(pct("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", kMemory, "SpeedOfLight",
                  "Memory throughput: the busiest memory unit (DRAM, L2, L1), % of its peak (speed of light)"));
  {
    auto s = pct("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", kMemory, "SpeedOfLight",
                 "DRAM throughput, % of peak");
    s.aliases = {"dram__throughput.avg.pct_of_peak_sustained_elapsed"};
    r.push_back(s);
  }
  r.push_back(pct("lts__t_sector_hit_rate.pct", kMemory, "MemoryWorkloadAnalysis", "L2 sector hit rate"));
  r.push_back(pct("l1tex__t_sector_hit_rate.pct", kMemory, "MemoryWorkloadAnalysis", "L1/TEX sector hit rate"));
  r.push_back(ratio("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio", "byte/sector", kMemory,
                    Direction::kHigherBetter, 32, 32, "MemoryWorkloadAnalysis_Tables",
                    "Bytes used per 32-byte sector of global loads (coalescing: 32 is ideal)"));
  r.push_back(ratio("smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio", "byte/sector", kMemory,
                    Direction::kHigherBetter, 32, 32, "MemoryWorkloadAnalysis_Tables",
                    "Bytes used per 32-byte sector of global stores (coalescing: 32 is ideal)"));
  {
    auto s = ratio("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "", kMemory, Direction::kLowerBetter,
                   0, 0, "MemoryWorkloadAnalysis_Tables",
                   "Shared-memory load bank conflicts, as a share of shared-load wavefronts");
    s.scale_metric = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
    r.push_back(s);
  }
  {
    auto s = ratio("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "", kMemory, Direction::kLowerBetter,
                   0, 0, "MemoryWorkloadAnalysis_Tables",
                   "Shared-memory store bank conflicts, as a share of shared-store wavefronts");
    s.scale_metric = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
    r.push_back(s);
  }
  r.push_back(ratio("derived__local_spilling_requests_pct", "%", kMemory, Direction::kLowerBetter, 0, 100,
                    "MemoryWorkloadAnalysis", "Share of L1 requests that are register spills to local memory"));
  // ---- latency
  r.push_back(pct("sm__warps_active.avg.pct_of_peak_sustained_active", kLatency, "Occupancy",
                  "Achieved occupancy: active warps, % of the SM's maximum"));
  r.push_back(pct("sm__maximum_warps_per_active_cycle_pct", kLatency, "Occupancy",
                  "Theoretical occupancy allowed by registers, shared memory and block size"));
  r.push_back(pct("smsp__issue_active.avg.pct_of_peak_sustained_active", kLatency, "SchedulerStats",
                  "Cycles in which a scheduler issued an instruction"));
  r.push_back(ratio("smsp__warps_eligible.avg.per_cycle_active", "warp", kLatency, Direction::kHigherBetter, 1, 1,
                    "SchedulerStats", "Warps ready to issue per scheduler per cycle (1 keeps the scheduler busy)"));
  r.push_back(stall("long_scoreboard", "Stalled waiting on L1TEX (global, local, texture) data"));
  r.push_back(stall("short_scoreboard", "Stalled waiting on MIO data (shared memory, special math)"));
  r.push_back(stall("barrier", "Stalled at __syncthreads()/barriers"));
  r.push_back(stall("membar", "Stalled on memory barriers"));
  r.push_back(stall("mio_throttle", "Stalled because the MIO queue (shared memory, special math) is full"));
  r.push_back(stall("lg_throttle", "Stalled because the local/global memory queue is full"));
  r.push_back(stall("math_pipe_throttle", "Stalled waiting for a busy math pipe"));
  r.push_back(stall("tex_throttle", "Stalled because the texture queue is full"));
  r.push_back(stall("wait", "Stalled on a fixed-latency dependency"));
  r.push_back(stall("no_instruction", "Stalled waiting for instructions (instruction cache miss)"));
  r.push_back(stall("branch_resolving", "Stalled resolving a branch target"));
  r.push_back(stall("dispatch_stall", "Stalled because the dispatcher could not issue"));
  r.push_back(stall("drain", "Stalled draining memory stores at exit"));
  r.push_back(stall("imc_miss", "Stalled on an immediate constant cache miss"));
  return r;
}

}  // namespace

const std::vector<std::string>& known_sections() {
  static const std::vector<std::string> s = {"SpeedOfLight",          "LaunchStats",
                                             "Occupancy",             "MemoryWorkloadAnalysis",
                                             "MemoryWorkloadAnalysis_Tables", "MemoryWorkloadAnalysis_Chart",
                                             "ComputeWorkloadAnalysis", "InstructionStats",
                                             "WarpStateStats",        "SchedulerStats"};
  return s;
}

const std::vector<MetricSpec>& metric_registry() {
  static const std::vector<MetricSpec> r = build_registry();
  return r;
}

const MetricSpec* find_metric(const std::string& name_or_alias) {
  for (const auto& s : metric_registry()) {
    if (s.name == name_or_alias) return &s;
    for (const auto& a : s.aliases)
      if (a == name_or_alias) return &s;
  }
  return nullptr;
}

std::vector<const MetricSpec*> metrics_for_axis(Axis a) {
  std::vector<const MetricSpec*> out;
  for (const auto& s : metric_registry())
    if (s.axis == a) out.push_back(&s);
  return out;
}

std::vector<std::string> lint_registry(const std::vector<MetricSpec>& registry) {
  static const std::set<std::string> kUnits = {"%", "cycle", "warp", "thread", "byte/sector", "inst/cycle", ""};
  std::vector<std::string> problems;
  std::set<std::string> names;
  for (const auto& s : registry) {
    std::vector<std::string> all = s.aliases;
    all.insert(all.begin(), s.name);
    for (const auto& n : all) {
      if (!names.insert(n).second) problems.push_back(n + ": name or alias listed twice");
      if (n.find("__") == std::string::npos) problems.push_back(n + ": not an ncu metric name (unit__counter)");
    }
    if (!kUnits.count(s.unit)) problems.push_back(s.name + ": unknown unit '" + s.unit + "'");
    if (s.unit == "%" && (s.ideal < 0 || s.ideal > 100)) problems.push_back(s.name + ": ideal outside 0..100 %");
    if (s.description.empty()) problems.push_back(s.name + ": no description");
    if (std::find(known_sections().begin(), known_sections().end(), s.section) == known_sections().end())
      problems.push_back(s.name + ": unknown section '" + s.section + "'");
    if (s.scale_metric.empty() && !(s.scale > 0)) problems.push_back(s.name + ": no positive scale");
    if (!s.scale_metric.empty() && s.scale_metric.find("__") == std::string::npos)
      problems.push_back(s.name + ": scale metric '" + s.scale_metric + "' is not a metric name");
    if (parse_axis(axis_name(s.axis)) != s.axis) problems.push_back(s.name + ": invalid axis");
  }
  return problems;
}

}  // namespace kopt::profile
