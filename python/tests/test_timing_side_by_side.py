"""scripts/device/timing_side_by_side.py without a GPU: golden data read as the ctypes caller needs it, Nsight
Compute's CSV (the header of a real ncu 2025.3.1 capture) grouped per call, nvbench's JSON, the table."""

import importlib.util
import json
import os

import numpy as np
import pytest
from conftest import PYTHON_DIR

from kopt_harness import store

ROOT = os.path.dirname(PYTHON_DIR)
SCRIPT = os.path.join(ROOT, "scripts", "device", "timing_side_by_side.py")
spec = importlib.util.spec_from_file_location("timing_side_by_side", SCRIPT)
sbs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sbs)

NCU_HEADER = open(os.path.join(ROOT, "tests", "data", "profile", "ncu-2025.3.1", "twok_pass1_details.csv"),
                  encoding="utf-8").readline().strip()


def ncu_row(i, kernel, value, unit="ns"):
    return (f'"{i}","963","python3","127.0.0.1","{kernel}","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0",'
            f'"Command line profiler metrics","gpu__time_duration.sum","{unit}","{value}",')


def test_ncu_kernels_are_grouped_per_call_and_summed():
    lines = ["==PROF== Connected to process 963", NCU_HEADER]
    i = 0
    for call in range(3):  # two kernels per solve(): first (2,000 ns) and second (3,1xx ns)
        lines.append(ncu_row(i, "first(const float *, float *, int)", "2,000"))
        lines.append(ncu_row(i + 1, "second(...)", f"3,{100 + call}"))
        i += 2
    lines.append("==PROF== Disconnected from process 963")
    per_call = sbs.ncu_per_call_ms("\n".join(lines), 3)
    assert per_call == pytest.approx([0.0051, 0.005101, 0.005102])
    assert sbs.median_or_none(per_call) == pytest.approx(0.005101)


def test_the_keep_busy_kernel_is_not_counted_in_a_call():
    # calls --keep-busy-us: if ncu profiled the spin kernel too (no --kernel-name), its rows are left out.
    lines = [NCU_HEADER]
    for call in range(2):
        lines.append(ncu_row(2 * call, "kopt_keep_busy", "50,000"))
        lines.append(ncu_row(2 * call + 1, "softmax_rows(const float *, float *, int)", f"{13000 + call}"))
    assert sbs.ncu_per_call_ms("\n".join(lines), 2) == pytest.approx([0.013, 0.013001])


def test_the_spin_kernel_and_kopts_read_pass_assemble_for_sm_90(tmp_path):
    # --flush memset_then_read loads kopt's own module (src/runner/blocker_ptx.cpp), not a copy of its read pass.
    import shutil  # noqa: PLC0415
    import subprocess  # noqa: PLC0415

    ptxas = shutil.which("ptxas") or ("/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
    if not ptxas:
        pytest.skip("no ptxas")
    for name, ptx in (("kopt_keep_busy", sbs.KEEP_BUSY_PTX), ("kopt_l2_clean_read", sbs.kopt_ptx_module())):
        src = tmp_path / f"{name}.ptx"
        src.write_text(ptx)
        r = subprocess.run([ptxas, "-arch=sm_90", str(src), "-o", str(tmp_path / f"{name}.cubin")], capture_output=True,
                           text=True)
        assert r.returncode == 0, f"{name}: {r.stderr}"
        assert f".entry {name}(" in ptx
    assert ".entry kopt_l2_discard(" in sbs.kopt_ptx_module()  # --flush memset_then_discard's pass, same module
    assert "discard.global.L2" in sbs.kopt_ptx_module()
    assert "%globaltimer" in sbs.KEEP_BUSY_PTX  # bounded in time, not in iterations


def test_ncu_units_and_a_count_that_does_not_divide():
    text = "\n".join([NCU_HEADER, ncu_row(0, "k", "5.18", "us"), ncu_row(1, "k", "0.00518", "ms")])
    assert sbs.ncu_per_call_ms(text, 2) == pytest.approx([0.00518, 0.00518])
    with pytest.raises(ValueError, match="not a multiple of 3"):
        sbs.ncu_per_call_ms(text, 3)
    with pytest.raises(ValueError, match="unknown unit"):
        sbs.ncu_per_call_ms("\n".join([NCU_HEADER, ncu_row(0, "k", "1", "furlong")]), 1)


def nvbench_doc(name, median_s, mean_s, n):
    summ = lambda tag, v: {"tag": tag, "data": [{"name": "value", "type": "float64", "value": repr(v)}]}  # noqa: E731
    return {"benchmarks": [{"name": name, "states": [{"name": "Device=0", "is_skipped": False, "summaries": [
        summ("nv/cold/sample_size", n), summ("nv/cold/time/gpu/mean", mean_s),
        summ("nv/cold/time/gpu/median", median_s), summ("nv/cold/time/gpu/stdev/relative", 0.004)]}]}]}


def test_nvbench_json_gives_the_cold_median_in_ms():
    figs = sbs.nvbench_figures(nvbench_doc("axpb_1m", 5.2e-6, 5.3e-6, 812))
    assert figs["axpb_1m"]["gpu_median_ms"] == pytest.approx(0.0052)
    assert figs["axpb_1m"]["gpu_mean_ms"] == pytest.approx(0.0053) and figs["axpb_1m"]["samples"] == 812


def golden_dir(tmp_path):
    sig = {"signature": {"params": [{"name": "x", "kind": "pointer", "dtype": "float32", "const": True},
                                    {"name": "y", "kind": "pointer", "dtype": "float32", "const": False},
                                    {"name": "n", "kind": "scalar", "dtype": "int32", "const": False}]}}
    (tmp_path / "signature.json").write_text(json.dumps(sig))
    m = {"seeds": [7], "buffers": [{"name": "x", "role": "input", "dtype": "float32", "shape": [4], "nbytes": 16},
                                   {"name": "y", "role": "output", "dtype": "float32", "shape": [4], "nbytes": 16}],
         "scalars": {"n": 4}, "tolerances": {"atol": 0, "rtol": 0}}
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    x = np.array([1.5, -2.0, 3.25, 0.5], dtype=np.float32)
    store.write_atomic(str(tmp_path / "seed_7.safetensors"),
                       _safetensors({"in.x": x, "out.y": 2 * x + 1}))
    return str(tmp_path)


def _safetensors(tensors):
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        b = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    return len(h).to_bytes(8, "little") + h + b"".join(blobs)


def test_golden_data_gives_params_buffers_scalars_and_the_first_seed(tmp_path):
    params, buffers, scalars, inputs = sbs.load_golden(golden_dir(tmp_path))
    assert params == [("x", "pointer", "float32"), ("y", "pointer", "float32"), ("n", "scalar", "int32")]
    assert buffers["y"] == ("output", 16, "float32") and scalars == {"n": 4}
    assert set(inputs) == {"x"} and np.frombuffer(inputs["x"], np.float32).tolist() == [1.5, -2.0, 3.25, 0.5]
    assert sbs.poison_byte("float32") == 0xFF and sbs.poison_byte("int32") == 0xA5


def test_rows_and_the_table(tmp_path):
    bench = tmp_path / "b.json"
    bench.write_text(json.dumps({"outcome": {"status": "ok", "timing_method": "events_blocked",
                                             "timing": {"median_ms": 0.0052, "robust_cv": 0.012},
                                             "call": {"median_ms": 0.0121}}}))
    ncu = tmp_path / "n.csv"
    ncu.write_text("\n".join([NCU_HEADER] + [ncu_row(i, "k", "5,100") for i in range(15)]))
    nv = tmp_path / "nv.json"
    nv.write_text(json.dumps(nvbench_doc("axpb_1m", 5.15e-6, 5.2e-6, 900)))
    rows = tmp_path / "rows.json"
    sbs.main(["row", "--rows", str(rows), "--name", "axpb_1m", "--bench", str(bench), "--ncu", str(ncu),
              "--calls", "15", "--nvbench", str(nv)])
    sbs.main(["row", "--rows", str(rows), "--name", "failed", "--bench", str(tmp_path / "absent.json")])
    r = json.loads(rows.read_text())
    assert r[0]["kopt"]["gpu_ms"] == 0.0052 and r[0]["ncu_ms"] == pytest.approx(0.0051)
    assert r[0]["nvbench_ms"] == pytest.approx(0.00515) and r[1]["kopt"] is None
    text = sbs.table(r)
    head, _, first, second = text.splitlines()
    assert "kopt/ncu" in head and "kopt/nvbench" in head
    assert "0.0052" in first and "1.20%" in first and "events_blocked" in first and "1.020" in first
    assert second.split()[0] == "failed" and second.count("-") >= 6
    assert r[0]["kopt"]["clock"] == "events" and r[0]["kopt"]["event_ms"] == 0.0052  # a result from before


def test_the_kernel_clock_and_the_event_median_side_by_side(tmp_path):
    bench = tmp_path / "b.json"
    bench.write_text(json.dumps({"gpu_clock": "cupti_activity", "outcome": {
        "status": "ok", "timing_method": "events_blocked", "timing": {"median_ms": 0.0049, "robust_cv": 0.01},
        "call": {"median_ms": 0.0121},
        "details": {"timing_info": {"gpu_clock": "cupti_activity", "event_median_ms": 0.0070}}}}))
    k = sbs.kopt_figures(str(bench))
    assert k["clock"] == "cupti_activity" and k["gpu_ms"] == 0.0049 and k["event_ms"] == 0.0070
    head, _, first = sbs.table([{"name": "axpb_1m", "kopt": k, "ncu_ms": 0.0049, "nvbench_ms": 0.0074}]).splitlines()
    assert "kopt event_ms" in head and "clock" in head
    assert "cupti_activity" in first and "0.0070" in first and "1.000" in first


def test_ncu_metric_medians_of_a_stored_h200_capture():
    # check37's softmax run with ncu's own cache control (2026-12-02): 25 calls, 13.056 us, the clocks it saw.
    path = os.path.join(ROOT, "tests", "data", "perf", "h200-2026-12-02", "timing_probe", "softmax_ncu_idle.ncu.csv")
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    m = sbs.ncu_metric_medians(text)
    assert m["gpu__time_duration.sum"] == (pytest.approx(13056.0), 25)
    assert 1.9e9 < m["gpc__cycles_elapsed.avg.per_second"][0] < 2.0e9
    assert sbs.median_or_none(sbs.ncu_per_call_ms(text, 25)) == pytest.approx(0.013056)
