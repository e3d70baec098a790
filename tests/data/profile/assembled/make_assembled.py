#!/usr/bin/env python3
"""Builds the assembled fixtures from the real ncu 2025.3.1 H200 captures (../ncu-2025.3.1/).

They stand in for captures we do not have yet (see README.md) and are regenerated with:
    python3 make_assembled.py
"""
import csv, io, re, pathlib

here = pathlib.Path(__file__).parent
real = here.parent / "ncu-2025.3.1"

# --- raw page with three kernels: the real saxpy row, plus two rows copied from it with edited values.
lines = (real / "ncu_raw.csv").read_text().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
header, units, row = list(csv.reader(lines[start:start + 3]))
col = {n: i for i, n in enumerate(header)}

def edited(kid, name, duration_ns, edits):
    r = list(row)
    r[col["ID"]] = str(kid)
    r[col["Kernel Name"]] = name
    for m in ("gpu__time_duration.sum", "gpu__time_duration.avg", "gpu__time_duration.max", "gpu__time_duration.min"):
        r[col[m]] = f"{duration_ns:,}"
    for m, v in edits.items():
        r[col[m]] = v
    return r

rows = [row,
        edited(1, "scale_kernel(float *, int)", 692736, {
            "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": "10.00",
            "sm__throughput.avg.pct_of_peak_sustained_elapsed": "90.00",
            "lts__t_sector_hit_rate.pct": "n/a",
            "dram__bytes_read.sum": "1,000"}),
        edited(2, "tail_kernel()", 1000, {"launch__grid_size": "1"})]
out = io.StringIO()
out.write("==PROF== Connected to process 696 (/tmp/k)\n==PROF== Disconnected from process 696\n")
w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
w.writerow(header); w.writerow(units)
for r in rows: w.writerow(r)
(here / "raw_three_kernels.csv").write_text(out.getvalue())

# --- details page CSV in the column layout of ncu 2023+ ("Rule Name", "Rule Type", "Rule Description",
# "Estimated Speedup Type", "Estimated Speedup"), carrying the real rule messages of the text page, with
# ncu's @section/@url markup as the .ncu-rep stores it.
prefix = ["0", "749", "k", "127.0.0.1", "saxpy(int, float, const float *, float *)", "1", "7", "(256, 1, 1)",
          "(262144, 1, 1)", "0", "9.0"]
dheader = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
           "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value", "Rule Name",
           "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup"]
metric_rows = [("GPU Speed Of Light Throughput", "Elapsed Cycles", "cycle", "456,703"),
               ("GPU Speed Of Light Throughput", "Memory Throughput", "%", "70.89"),
               ("GPU Speed Of Light Throughput", "Compute (SM) Throughput", "%", "34.87"),
               ("Occupancy", "Achieved Occupancy", "%", "74.23")]
rule_rows = [
    ("SpeedOfLight", "SOLBottleneck", "OPT",
     "Memory is more heavily utilized than Compute: Look at the @section:MemoryWorkloadAnalysis:Memory Workload "
     "Analysis@ section to identify the DRAM bottleneck. Check memory replay (coalescing) metrics to make sure "
     "you're efficiently utilizing the bytes transferred. Also consider whether it is possible to do more work per "
     "memory access (kernel fusion) or whether there are values you can (re)compute.", "", ""),
    ("WarpStateStats", "CPIStall", "OPT",
     "On average, each warp of this workload spends 59.8 cycles being stalled waiting for a scoreboard dependency "
     "on a L1TEX (local, global, surface, texture) operation. Find the instruction producing the data being waited "
     "upon to identify the culprit.", "local", "85.36"),
    ("Occupancy", "AchievedOccupancy", "OPT",
     "The difference between calculated theoretical (100.0%) and measured achieved occupancy (74.2%) can be the "
     "result of warp scheduling overheads or workload imbalances during the kernel execution. See the "
     "@url:CUDA Best Practices Guide:https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/index.html#occupancy@ "
     "for more details on optimizing occupancy.", "local", "25.77"),
    ("SpeedOfLight_RooflineChart", "SOLFPRoofline", "INF",
     "The ratio of peak float (FP32) to double (FP64) performance on this device is 2:1.", "", ""),
]
out = io.StringIO()
w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
w.writerow(dheader)
for s, n, u, v in metric_rows: w.writerow(prefix + [s, n, u, v, "", "", "", "", ""])
for s, rn, rt, msg, spt, sp in rule_rows: w.writerow(prefix + [s, "", "", "", rn, rt, msg, spt, sp])
(here / "details_saxpy.csv").write_text(out.getvalue())
