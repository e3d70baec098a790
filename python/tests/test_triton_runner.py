"""The Triton runner's protocol and result schema, on the CPU: kernels written with operators numpy arrays and
torch tensors share, run with numpy buffers (device "numpy") and torch CPU tensors (device "cpu"): the same
code paths as on a GPU except the buffers' home and the timer."""

import json
import os
import sys

import numpy as np
import pytest
from triton_support import CORRECT, VECADD_KERNEL, TritonHarness

from kopt_harness import cli, devices, triton_run

RESULT_KEYS = {"status", "message", "mode", "tolerance", "seeds", "meta", "triton"}


@pytest.fixture(params=["numpy", "cpu"])
def th(tmp_path, request):
    """Each protocol test runs with numpy buffers and, where torch is installed, with torch CPU tensors."""
    if request.param == "cpu":
        pytest.importorskip("torch")
    return TritonHarness(tmp_path, device=request.param)


def calls():
    return sys.modules["kopt_kernel"].CALLS


def made(th, behaviour=CORRECT, **golden_kw):
    kernel = th.kernel(behaviour)
    _, golden = th.golden(kernel, **golden_kw)
    return kernel, golden


# --- check mode -------------------------------------------------------------------------------------------

def test_a_correct_kernel_passes_every_seed(th):
    kernel, golden = made(th, seeds=3)
    r, rc = th.run(kernel, golden)
    assert rc == 0 and r["status"] == "ok" and r["message"] == "" and set(r) >= RESULT_KEYS
    assert [s["seed"] for s in r["seeds"]] == [0, 1, 2] and len(calls()) == 3
    s0 = r["seeds"][0]
    assert s0["inputs"] == {"x": {"unchanged": True, "first_changed_index": -1},
                            "y": {"unchanged": True, "first_changed_index": -1}}
    assert s0["outputs"]["out"]["ok"] and s0["outputs"]["out"]["numel"] == 1000
    assert r["tolerance"] == {"atol": 1e-4, "rtol": 1e-4}
    assert r["meta"]["kind"] == "runner_result" and r["meta"]["backend"] == "triton"


def test_the_config_reaches_run_kernel_as_keywords(th):
    kernel, golden = made(th)
    r, _ = th.run(kernel, golden, configs=[{"BLOCK": 64, "KOPT_X": 1, "num_warps": 4}])
    assert r["status"] == "ok"
    assert calls()[0] == {"BLOCK": 64, "KOPT_X": 1, "num_warps": 4}


def test_a_wrong_element_is_a_wrong_result_naming_it(th):
    kernel, golden = made(th, CORRECT + "; out[3] += 1")
    r, rc = th.run(kernel, golden)
    assert rc == 0 and r["status"] == "wrong_result"
    assert r["message"].startswith("output out: MISMATCH 1/1000 elements; first bad index 3 [3]")
    assert r["seeds"][0]["outputs"]["out"]["first_bad_index"] == 3


def test_unwritten_elements_keep_the_poison(th):
    kernel, golden = made(th, "out[:-10] = (alpha * x + y)[:-10]")
    r, _ = th.run(kernel, golden)
    assert r["status"] == "unwritten_output"
    assert r["seeds"][0]["outputs"]["out"]["still_poisoned"] == 10
    assert "10 elements never written" in r["message"]


def test_outputs_are_poisoned_before_every_call(th):
    # Writes only on its first call: a runner that did not re-poison would see the previous seed's output.
    kernel, golden = made(th, "if len(CALLS) == 1:\n        out[:] = alpha * x + y")
    r, _ = th.run(kernel, golden)
    assert r["seeds"][0]["outputs"]["out"]["ok"] and r["status"] == "unwritten_output"
    assert r["seeds"][1]["outputs"]["out"]["still_poisoned"] == 1000


def test_consecutive_seeds_get_buffers_at_other_addresses(th):
    # A kernel that caches by pointer would pass if seed k+1 reused seed k's buffers.
    kernel, golden = made(th, CORRECT + '; CALLS[-1]["addr"] = out.data_ptr() if hasattr(out, "data_ptr") else out.ctypes.data', seeds=3)
    r, _ = th.run(kernel, golden)
    addrs = [c["addr"] for c in calls()]
    assert r["status"] == "ok" and addrs[0] != addrs[1] and addrs[1] != addrs[2]


def test_writing_an_input_is_detected(th):
    kernel, golden = made(th, CORRECT + "; x[7] = 123.0")
    r, _ = th.run(kernel, golden)
    assert r["status"] == "input_modified"
    assert r["seeds"][0]["inputs"]["x"] == {"unchanged": False, "first_changed_index": 7}
    assert r["message"] == "input x was modified by the kernel (first changed element 7)"


def test_an_exception_is_a_load_error_and_a_cuda_error_is_recognised(th, capsys):
    kernel, golden = made(th, "raise ZeroDivisionError('boom')")
    r, rc = th.run(kernel, golden)
    assert rc == 4 and r["status"] == "load_error" and "run_kernel() raised ZeroDivisionError: boom" in r["message"]
    assert "Traceback" in capsys.readouterr().err
    kernel, golden = made(th, "raise RuntimeError('CUDA error: an illegal memory access was encountered')")
    r, rc = th.run(kernel, golden)
    assert rc == 3 and r["status"] == "cuda_error" and "illegal memory access" in r["message"]


def test_a_config_that_shadows_an_input_is_a_load_error(th):
    kernel, golden = made(th)
    r, rc = th.run(kernel, golden, configs=[{"alpha": 3}])
    assert rc == 4 and r["status"] == "load_error" and "both a configuration value and an input" in r["message"]


def test_golden_data_of_a_cuda_kernel_is_refused(th, tmp_path):
    kernel, golden = made(th)
    m = th.read(os.path.join(golden, "manifest.json"))
    del m["kernel"]
    with open(os.path.join(golden, "manifest.json"), "w") as f:
        json.dump(m, f)
    r, rc = th.run(kernel, golden)
    assert rc == 4 and r["status"] == "load_error" and "not made for a Triton kernel" in r["message"]


def test_a_broken_kernel_file_is_a_load_error(th):
    _, golden = made(th)
    r, rc = th.run(th.kernel(text="def setup(**kw):\n    pass\n"), golden)
    assert rc == 4 and r["status"] == "load_error" and "defines no function run_kernel" in r["message"]


# --- time mode --------------------------------------------------------------------------------------------

def test_time_mode_returns_samples_only_and_rechecks(th):
    kernel, golden = made(th)
    r, rc = th.run(kernel, golden, mode="time", min_samples=5, max_time_s=0.5)
    assert rc == 0 and r["status"] == "ok"
    # Samples only: kopt computes the statistics (runner::interpret); one call sample per GPU sample.
    assert "timing" not in r and "call" not in r
    n = len(r["samples_ms"])
    assert n >= 5 and len(r["call_samples_ms"]) == n and all(x > 0 for x in r["samples_ms"] + r["call_samples_ms"])
    assert r["timing_method"] == "perf_counter" and r["l2"] == "cold"
    info = r["timing_info"]
    assert info["stop_reason"] in ("ci_reached", "time_budget", "max_samples")
    assert info["warmup_calls"] >= 3 and info["timing_method"] == "perf_counter" and not info["launch_excluded"]
    assert info["flush_bytes"] == devices.FLUSH_BYTES
    assert {"probe_event_median_ms", "probe_enqueue_median_ms", "probe_residual_median_ms"} <= set(info)
    assert r["recheck"]["outputs"]["out"]["ok"]
    # the seeds, warm-up, the probe, the samples (a timed call and a call sample each) and the re-check
    assert len(calls()) == 2 + info["warmup_calls"] + triton_run.PROBE_SAMPLES + 2 * n + 1


def test_warm_l2_skips_the_flush(th):
    kernel, golden = made(th)
    r, rc = th.run(kernel, golden, mode="time", min_samples=5, max_time_s=0.2, l2="warm")
    assert rc == 0 and r["l2"] == "warm" and r["timing_info"]["flush_bytes"] == 0


def test_a_kernel_that_goes_wrong_later_fails_the_recheck(th):
    kernel, golden = made(th, CORRECT + "\n    if len(CALLS) > 12:\n        out[0] = 99.0")
    r, _ = th.run(kernel, golden, mode="time", min_samples=5, max_time_s=0.3)
    assert r["status"] == "wrong_result" and r["message"].startswith("after timing: output out: MISMATCH")
    assert not r["recheck"]["outputs"]["out"]["ok"]


def test_phases_account_for_the_childs_time(th):
    # The first call's phase holds the JIT compile; a kernel that sleeps 0.2 s on its first call shows it there.
    kernel, golden = made(th, "import time\n    if len(CALLS) == 1:\n        time.sleep(0.2)\n    out[:] = alpha * x + y",
                          seeds=3)
    r, rc = th.run(kernel, golden, mode="time", min_samples=5, max_time_s=0.2)
    assert rc == 0 and r["status"] == "ok"
    ph = r["phases_ms"]
    assert {"harness_imports", "golden_load", "kernel_import", "device_init", "bind", "first_call", "verify",
            "timing", "other", "total"} <= set(ph)
    assert all(v >= 0 for v in ph.values())
    assert 200 <= ph["first_call"] < 2000 and ph["first_call"] >= r["triton"]["first_call_ms"] - 1
    assert ph["timing"] >= 100  # max_time_s 0.2 (at least half is spent sampling)
    named = sum(v for k, v in ph.items() if k != "total")
    assert ph["total"] == pytest.approx(named, abs=1.0)


def test_time_mode_skips_timing_when_the_check_failed(th):
    kernel, golden = made(th, CORRECT + "; out[0] = 5")
    r, _ = th.run(kernel, golden, mode="time")
    assert r["status"] == "wrong_result" and "timing" not in r and len(calls()) == 2


# --- the other cases, checked in the timed child (--also-check) ---------------------------------------------

def test_the_other_cases_are_checked_in_the_timed_child_after_its_timing(th):
    kernel, golden = made(th)
    _, small = th.golden(kernel, dims={"n": 700}, seeds=2)
    _, smaller = th.golden(kernel, dims={"n": 300}, seeds=2)
    r, rc = th.run(kernel, golden, mode="time", min_samples=5, max_time_s=0.2, also_check=[small, smaller])
    assert rc == 0 and r["status"] == "ok", r["message"]
    assert [c["golden"] for c in r["cases"]] == [os.path.abspath(small), os.path.abspath(smaller)]
    for c in r["cases"]:
        assert c["status"] == "ok" and c["message"] == ""
        assert [s["seed"] for s in c["seeds"]] == [0, 1] and all(s["outputs"]["out"]["ok"] for s in c["seeds"])
        ph = c["phases_ms"]
        assert {"golden_load", "bind", "verify"} <= set(ph) and "harness_imports" not in ph  # the case's own time only
        assert ph["total"] == pytest.approx(sum(v for k, v in ph.items() if k != "total"), abs=1.0)
    # Each case's seeds were called after the timed run's calls, in this process (one import of the kernel): the
    # timed run's (seeds, warm-up, probe, samples, re-check), then two seeds a case.
    n, info = len(r["samples_ms"]), r["timing_info"]
    assert len(calls()) == 2 + info["warmup_calls"] + triton_run.PROBE_SAMPLES + 2 * n + 1 + 2 * 2


def test_a_case_the_kernel_is_wrong_at_stops_the_checks_and_leaves_the_timing_alone(th):
    # Right at the timed case (n = 1000), wrong elsewhere: the first other case says so, the next is not checked.
    kernel, golden = made(th, "out[:] = alpha * x + y\n    if n != 1000:\n        out[3] = 7.0")
    _, small = th.golden(kernel, dims={"n": 700})
    _, smaller = th.golden(kernel, dims={"n": 300})
    r, rc = th.run(kernel, golden, mode="time", min_samples=5, max_time_s=0.2, also_check=[small, smaller])
    assert rc == 0 and r["status"] == "ok" and r["samples_ms"]
    assert len(r["cases"]) == 1
    assert r["cases"][0]["status"] == "wrong_result" and "first bad index 3" in r["cases"][0]["message"]


def test_a_case_whose_golden_data_cannot_be_read_is_that_cases_load_error(th, tmp_path):
    kernel, golden = made(th)
    r, rc = th.run(kernel, golden, mode="time", min_samples=5, max_time_s=0.2, also_check=[str(tmp_path / "absent")])
    assert rc == 0 and r["status"] == "ok"
    assert r["cases"][0]["status"] == "load_error" and "absent" in r["cases"][0]["message"]


def test_no_case_is_checked_when_the_timed_run_failed(th):
    kernel, golden = made(th, CORRECT + "; out[0] = 5")
    _, small = th.golden(kernel, dims={"n": 700})
    r, _ = th.run(kernel, golden, mode="time", also_check=[small])
    assert r["status"] == "wrong_result" and "cases" not in r


def test_also_check_is_for_time_mode_only(th):
    kernel, golden = made(th)
    with pytest.raises(triton_run.UsageError, match="--also-check is for --mode time"):
        th.run(kernel, golden, mode="check", also_check=[golden])


# --- paired and profile ---------------------------------------------------------------------------------

def test_paired_mode_interleaves_the_configurations(th):
    kernel, golden = made(th)
    configs = [{"BLOCK": 64}, {"BLOCK": 128}]
    r, rc = th.run(kernel, golden, mode="paired", configs=configs, rounds=12, max_time_s=0.01)
    assert rc == 0 and r["status"] == "ok" and r["rounds"] >= 10
    assert [lib["config"] for lib in r["libs"]] == configs
    assert r["timing_method"] == "perf_counter"
    for lib in r["libs"]:
        assert len(lib["samples_ms"]) == r["rounds"] and lib["check"]["outputs"]["out"]["ok"] and "timing" not in lib
    blocks = [c["BLOCK"] for c in calls()]
    assert blocks.count(64) == blocks.count(128)


def test_paired_mode_reports_a_wrong_configuration(th):
    kernel, golden = made(th, CORRECT + "\n    if BLOCK == 64:\n        out[1] = 0.5")
    r, _ = th.run(kernel, golden, mode="paired", configs=[{"BLOCK": 128}, {"BLOCK": 64}], rounds=10)
    assert r["status"] == "wrong_result" and r["message"].startswith("configuration 1 {'BLOCK': 64}: output out")


def test_profile_mode_profiles_exactly_one_call_after_a_warm_up(th, monkeypatch):
    events = []

    class Recording(devices.NumpyOps):
        def profiler_start(self):
            events.append(("start", len(calls())))

        def profiler_stop(self):
            events.append(("stop", len(calls())))

    monkeypatch.setattr(devices, "make", lambda device: Recording())
    kernel, golden = made(th, seeds=3)
    r, rc = th.run(kernel, golden, mode="profile")
    assert rc == 0 and r["status"] == "ok" and r["profiled_calls"] == 1
    assert len(r["seeds"]) == 1  # one seed is checked
    (_, before), (_, after) = events
    assert before == 2 and after == 3  # the check call and a warm-up, then exactly one call in the range


# --- cubins ---------------------------------------------------------------------------------------------

FAKE_CACHE_KERNEL = VECADD_KERNEL.replace("BEHAVIOUR", CORRECT + """
    import os, json
    d = os.path.join(os.environ["TRITON_CACHE_DIR"], "HASH123")
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "vadd_kernel.cubin"), "wb").write(b"\\x7fELF fake cubin")
    json.dump({"name": "vadd_kernel", "num_warps": 4, "num_stages": 3, "shared": 0,
               "target": {"backend": "cuda", "arch": 90, "warp_size": 32}},
              open(os.path.join(d, "vadd_kernel.json"), "w"))""")


def test_cubins_come_from_a_fresh_triton_cache_dir(th, tmp_path):
    kernel = th.kernel(text=FAKE_CACHE_KERNEL)
    _, golden = th.golden(kernel)
    dump = str(tmp_path / "cubins")
    before = os.environ.get("TRITON_CACHE_DIR")
    r, rc = th.run(kernel, golden, dump_cubin=dump)
    cache = os.environ.get("TRITON_CACHE_DIR")
    assert rc == 0 and r["status"] == "ok" and cache != before and not os.path.exists(cache)  # removed after
    (c,) = r["cubins"]
    assert c["kernel"] == "vadd_kernel" and c["source"] == "triton_cache_dir" and os.path.dirname(c["file"]) == dump
    assert c["metadata"] == {"name": "vadd_kernel", "num_warps": 4, "num_stages": 3, "shared": 0, "arch": 90}
    assert open(c["file"], "rb").read() == b"\x7fELF fake cubin"
    assert th.read(os.path.join(dump, "cubins.json"))["cubins"][0]["sha256"] == c["sha256"]


def test_a_given_triton_cache_is_used_and_kept_and_its_cubins_dumped(th, tmp_path, monkeypatch):
    # --triton-cache (kopt's compile-mode child, then the measuring child of the same candidate): that folder, not a
    # fresh one, and it stays for the next child.
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "before"))  # restored after the test
    kernel = th.kernel(text=FAKE_CACHE_KERNEL)
    _, golden = th.golden(kernel)
    cache, dump = str(tmp_path / "cand" / "triton_cache"), str(tmp_path / "cubins")
    r, rc = th.run(kernel, golden, dump_cubin=dump, triton_cache=cache)
    assert rc == 0 and r["status"] == "ok"
    assert os.environ.get("TRITON_CACHE_DIR") == cache and os.path.isfile(os.path.join(cache, "HASH123", "vadd_kernel.cubin"))
    (c,) = r["cubins"]
    assert c["kernel"] == "vadd_kernel" and os.path.dirname(c["file"]) == dump
    opts = triton_run.RunOptions(kernel=kernel, out=str(tmp_path / "r.json"), mode="compile", dims={"n": 16},
                                 device="numpy", triton_cache=cache)
    triton_run.check_options(opts)
    r, rc = triton_run.run(opts)
    assert rc == 0 and r["status"] == "ok" and os.path.isdir(cache)


FAKE_JIT_KERNEL = """
import numpy as np
from collections import namedtuple

Meta = namedtuple("Meta", "name num_warps num_stages shared")

class Compiled:
    def __init__(self, name, data):
        self.name, self.asm, self.metadata = name, {"cubin": data}, Meta(name, 8, 2, 1024)

class FakeJit:  # what triton 3.6's JITFunction keeps: device -> (kernel_cache, target, backend, binder)
    def __init__(self):
        self.device_caches = {0: ({}, None, None, None)}

class Autotuned:  # wrappers keep the JIT function in .fn
    def __init__(self, fn):
        self.fn = fn

scale_kernel = Autotuned(FakeJit())

def setup(*, seed, n):
    return {"inputs": {"x": np.random.default_rng(seed).standard_normal(n).astype(np.float32) + 3,
                       "out": np.empty(n, np.float32)}, "outputs": ["out"]}

def run_kernel(*, x, out, BLOCK=1):
    scale_kernel.fn.device_caches[0][0][f"key{BLOCK}"] = Compiled("scale_kernel", b"cubin-" + bytes([BLOCK]))
    out[:] = 2 * x
"""


def test_compile_mode_falls_back_to_the_jit_caches(th, tmp_path):
    kernel = th.kernel(text=FAKE_JIT_KERNEL)
    dump = str(tmp_path / "cubins")
    opts = triton_run.RunOptions(kernel=kernel, out=str(tmp_path / "r.json"), mode="compile", dims={"n": 16},
                                 device="numpy", dump_cubin=dump, configs=[{"BLOCK": 7}])
    triton_run.check_options(opts)
    r, rc = triton_run.run(opts)
    assert rc == 0 and r["status"] == "ok" and r["mode"] == "compile"
    (c,) = r["cubins"]
    assert c["kernel"] == "scale_kernel" and c["source"] == "jit_cache"
    assert c["metadata"] == {"name": "scale_kernel", "num_warps": 8, "num_stages": 2, "shared": 1024}
    assert open(c["file"], "rb").read() == b"cubin-\x07"


def test_compile_mode_given_several_dims_launches_at_each(th, tmp_path):
    # A dimension the kernel takes as tl.constexpr compiles a kernel a value: kopt's compile-mode child gets every
    # case's dims, so the timed child's checks of the other cases find theirs compiled too.
    kernel = th.kernel(text=FAKE_JIT_KERNEL.replace('f"key{BLOCK}"', 'f"key{BLOCK}-n{x.size}"'))
    opts = triton_run.RunOptions(kernel=kernel, out=str(tmp_path / "r.json"), mode="compile",
                                 dims=[{"n": 16}, {"n": 12}, {"n": 8}], device="numpy", configs=[{"BLOCK": 3}])
    triton_run.check_options(opts)
    r, rc = triton_run.run(opts)
    assert rc == 0 and r["status"] == "ok" and len(r["first_calls_ms"]) == 3 and r["first_call_ms"] == r["first_calls_ms"][0]
    mod = next(m for m in sys.modules.values() if getattr(m, "__file__", None) == os.path.abspath(kernel))
    assert sorted(mod.scale_kernel.fn.device_caches[0][0]) == ["key3-n12", "key3-n16", "key3-n8"]
    with pytest.raises(triton_run.UsageError, match="array is for --mode compile"):
        triton_run.check_options(triton_run.RunOptions(kernel=kernel, out="r.json", mode="check", golden="g",
                                                       dims=[{"n": 16}]))
    with pytest.raises(triton_run.UsageError, match="empty array"):
        cli._dims_list("[]")
    assert cli._dims_list('[{"n": 4}, {"n": 2}]') == [{"n": 4}, {"n": 2}] and cli._dims_list('{"n": 4}') == {"n": 4}


def test_compile_mode_checks_the_setup_contract(th, tmp_path):
    kernel = th.kernel(text="def setup(*, seed, n):\n    return {'inputs': {}}\ndef run_kernel(**kw):\n    pass\n")
    opts = triton_run.RunOptions(kernel=kernel, out=str(tmp_path / "r.json"), mode="compile", dims={"n": 4},
                                 device="numpy")
    r, rc = triton_run.run(opts)
    assert rc == 4 and r["status"] == "load_error" and "lacks 'outputs'" in r["message"]


# --- the command line ------------------------------------------------------------------------------------

def test_cli_writes_the_result_with_a_meta_block_and_exit_codes(th, tmp_path):
    kernel, golden = made(th)
    out = str(tmp_path / "cli.json")
    ok = th.cli("triton-run", "--kernel", kernel, "--golden", golden, "--out", out, "--device", "numpy",
                "--config", '{"BLOCK": 64}')
    assert ok.returncode == 0, ok.stderr
    r = th.read(out)
    assert list(r)[0] == "meta" and r["status"] == "ok" and r["triton"]["configs"] == [{"BLOCK": 64}]
    bad = th.cli("triton-run", "--kernel", kernel, "--golden", golden, "--out", out, "--device", "numpy",
                 "--config", '{"alpha": 1}')
    assert bad.returncode == 4 and th.read(out)["status"] == "load_error"


def test_cli_device_default_comes_from_the_environment(th, tmp_path):
    kernel, golden = made(th)
    out = str(tmp_path / "env.json")
    r = th.cli("triton-run", "--kernel", kernel, "--golden", golden, "--out", out,
               env={"KOPT_TRITON_DEVICE": "numpy"})
    assert r.returncode == 0, r.stderr
    assert th.read(out)["meta"]["device"] == "cpu (numpy)"


@pytest.mark.parametrize("args,match", [
    (["--mode", "time", "--config", "{}", "--config", "{}"], "only --mode paired takes several"),
    (["--mode", "compile"], "needs --dims"),
    (["--config", "{not json"], "not valid JSON"),
    (["--min-samples", "0"], "must be positive"),
])
def test_cli_usage_errors_exit_4_without_a_result(th, tmp_path, args, match):
    kernel, golden = made(th)
    out = str(tmp_path / "none.json")
    r = th.cli("triton-run", "--kernel", kernel, "--golden", golden, "--out", out, "--device", "numpy", *args)
    assert r.returncode == 4 and match in r.stderr and not os.path.exists(out)


# --- torch on the CPU (skipped without torch) -------------------------------------------------------------

TORCH_KERNEL = """
import torch

def setup(*, seed, n):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g, dtype=torch.bfloat16)
    return {"inputs": {"x": x, "out": torch.empty(n, dtype=torch.bfloat16), "n": n}, "outputs": ["out"]}

def run_kernel(*, x, out, n, WRONG=0):
    out.copy_(x * 2)
    if WRONG:
        out[5] = 1000.0
"""

TORCH_REF = "def reference(*, x, out, **_):\n    out.copy_(x * 2)\n"


def test_torch_cpu_buffers_with_bfloat16(th):
    pytest.importorskip("torch")
    kernel = th.kernel(text=TORCH_KERNEL)
    _, golden = th.golden(kernel, ref_text=TORCH_REF, dims={"n": 64}, device="cpu")
    r, rc = th.run(kernel, golden, device="cpu")
    assert rc == 0 and r["status"] == "ok" and r["seeds"][0]["outputs"]["out"]["bitwise_equal"]
    r, _ = th.run(kernel, golden, device="cpu", configs=[{"WRONG": 1}])
    assert r["status"] == "wrong_result" and r["seeds"][0]["outputs"]["out"]["first_bad_index"] == 5
    assert np.isclose(r["seeds"][0]["outputs"]["out"]["actual_at_first_bad"], 1000.0)
