"""The torch backend (skipped where torch is missing); CUDA tests skip where torch sees no GPU."""

import os

import numpy as np
import pytest
from conftest import MATMUL, VECADD, P, S

from kopt_harness import draw, dtypes, store
from kopt_harness.errors import UsageError

torch = pytest.importorskip("torch")
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device")

TORCH_SETUP = """
import torch

def setup(*, seed, M, N, K):
    g = torch.Generator().manual_seed(seed)
    return {"A": torch.randn(M, K, generator=g), "B": torch.randn(K, N, generator=g), "C": torch.empty(M, N)}

def reference(*, A, B, C, M, N, K):
    assert isinstance(A, torch.Tensor) and A.device == C.device
    C.copy_(A @ B)
"""


def test_setup_with_torch_tensors(harness):
    summary, m, seeds = harness.generate(TORCH_SETUP, MATMUL, {"M": 8, "N": 4, "K": 16}, seeds=2, device="cpu")
    assert summary["backend"] == "torch" and m["backend"] == "torch" and m["device"] == "cpu"
    assert m["meta"]["torch"] == torch.__version__
    g = torch.Generator().manual_seed(1)
    np.testing.assert_array_equal(seeds[1]["in.A"], torch.randn(8, 16, generator=g).numpy())
    for t in seeds:
        np.testing.assert_allclose(t["out.C"], t["in.A"] @ t["in.B"], rtol=1e-5, atol=1e-5)


def test_torch_dtype_disagreeing_with_signature_names_both(harness):
    text = TORCH_SETUP.replace("torch.randn(M, K, generator=g)", "torch.randn(M, K, generator=g, dtype=torch.float64)")
    with pytest.raises(UsageError, match="'A' as float64, but solve\\(\\) declares it float32"):
        harness.generate(text, MATMUL, {"M": 2, "N": 2, "K": 2}, device="cpu")


def test_numpy_setup_values_become_tensors_when_ref_uses_torch(harness):
    text = """
    import numpy as np
    import torch.nn.functional as F   # a torch submodule is enough to mean torch

    def setup(*, seed, n):
        return {"a": np.arange(n, dtype=np.float32) + 1, "b": np.ones(n, np.float32), "c": np.zeros(n, np.float32)}

    def reference(*, a, b, c, n):
        import torch
        assert isinstance(a, torch.Tensor)
        c.copy_(F.relu(a - 2 * b))
    """
    _, m, seeds = harness.generate(text, VECADD, {"n": 6}, seeds=1, device="cpu")
    assert m["backend"] == "torch"
    np.testing.assert_array_equal(seeds[0]["out.c"], [0, 0, 1, 2, 3, 4])


def test_drawn_values_are_the_same_as_with_numpy(harness):
    text = "import torch\nshapes = {'x': ('n',), 'y': ('n',)}\ndef reference(*, x, y, n):\n    y.copy_(x)\n"
    params = [P("x", "float16"), P("y", "float16", const=False), S("n")]
    _, m, seeds = harness.generate(text, params, {"n": 50}, seeds=1, device="cpu")
    assert m["backend"] == "torch"
    np.testing.assert_array_equal(seeds[0]["in.x"], draw.draw(dtypes.lookup("float16"), (50,), 0, "x"))


def test_bfloat16_buffers(harness):
    text = "import torch\nshapes = {'x': ('n',), 'y': ('n',)}\ndef reference(*, x, y, n):\n    return x * 2\n"
    params = [P("x", "bfloat16"), P("y", "bfloat16", const=False), S("n")]
    out = harness.out("bf16")
    _, m, seeds = harness.generate(text, params, {"n": 4096}, seeds=2, device="cpu", out=out)
    assert m["buffers"][0]["nbytes"] == 8192 and m["tolerances"]["atol"] == 2e-2
    header, _, _ = store.read_header(os.path.join(out, "seed_0.safetensors"))
    assert header["in.x"]["dtype"] == "BF16" and header["out.y"]["dtype"] == "BF16"
    x = seeds[0]["in.x"]  # our numpy reader widens bfloat16 to float32 exactly
    assert x.min() >= -1 and x.max() < 1 and np.any(x != 0)
    np.testing.assert_array_equal(seeds[0]["out.y"], x * 2)
    from safetensors.torch import load_file

    theirs = load_file(os.path.join(out, "seed_0.safetensors"))
    assert theirs["in.x"].dtype == torch.bfloat16
    np.testing.assert_array_equal(theirs["in.x"].float().numpy(), x)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "bool", "float64"])
def test_other_dtypes_with_torch(harness, dtype):
    text = "import torch\nshapes = {'x': ('n',), 'y': ('n',)}\ndef reference(*, x, y, n):\n    y.copy_(x.flip(0))\n"
    params = [P("x", dtype), P("y", dtype, const=False), S("n")]
    _, _, seeds = harness.generate(text, params, {"n": 21}, seeds=1, device="cpu")
    assert seeds[0]["in.x"].dtype == np.dtype(dtype)
    np.testing.assert_array_equal(seeds[0]["out.y"], seeds[0]["in.x"][::-1])


def test_torch_reference_modifying_an_input_is_an_error(harness):
    text = "import torch\nshapes = {'a': ('n',), 'b': ('n',), 'c': ('n',)}\n" \
           "def reference(*, a, b, c, n):\n    a.mul_(2)\n    c.copy_(a)\n"
    with pytest.raises(UsageError, match="modified 'a'"):
        harness.generate(text, VECADD, {"n": 8}, device="cpu")


def test_torch_reference_returning_a_dict_with_inout(harness):
    text = """
    import torch
    inout = ["d"]
    shapes = {"x": ("n",), "s": ("n",), "d": ("n",)}
    def reference(*, x, s, d, n):
        return {"s": torch.cumsum(x, 0), "d": d - x}
    """
    params = [P("x"), P("s", const=False), P("d", const=False), S("n")]
    _, _, seeds = harness.generate(text, params, {"n": 9}, device="cpu")
    for t in seeds:
        np.testing.assert_allclose(t["out.s"], np.cumsum(t["in.x"]), rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(t["out.d"], t["in.d"] - t["in.x"])


def test_time_reference_on_torch_cpu(harness):
    text = "import torch\nshapes = {'a': ('n',), 'b': ('n',), 'c': ('n',)}\n" \
           "def reference(*, a, b, c, n):\n    torch.add(a, b, out=c)\n"
    _, m, _ = harness.generate(text, VECADD, {"n": 1024}, seeds=1, device="cpu", time_reference=True,
                               time_budget_s=0.5)
    t = m["reference_timing"]
    assert t["device"] == "cpu" and t["timer"] == "perf_counter" and t["samples"] >= 10


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_device_cuda_without_a_gpu_is_an_error(harness):
    with pytest.raises(UsageError, match="no CUDA device"):
        harness.generate(TORCH_SETUP, MATMUL, {"M": 2, "N": 2, "K": 2}, device="cuda")


@needs_cuda
@pytest.mark.parametrize("change", ["a.mul_(2)", "a[-1] = -a[-1]", "a.view(torch.int32)[3] ^= 1"])
def test_cuda_reference_modifying_an_input_is_an_error_to_the_last_bit(harness, change):
    # On CUDA an input is compared with a device snapshot taken before the reference (no copy back to the host).
    text = "import torch\nshapes = {'a': ('n',), 'b': ('n',), 'c': ('n',)}\n" \
           f"def reference(*, a, b, c, n):\n    assert a.is_cuda\n    c.copy_(a + b)\n    {change}\n"
    with pytest.raises(UsageError, match="modified 'a'"):
        harness.generate(text, VECADD, {"n": 4099}, device="cuda")


@needs_cuda
def test_cuda_snapshot_is_bitwise_and_left_to_the_host_past_an_eighth_of_free_memory(monkeypatch):
    from kopt_harness import arrays
    bk = arrays.TorchBackend("cuda")
    x = torch.tensor([0.0, float("nan"), 1.0], device="cuda")
    snap = bk.snapshot(x)
    assert snap is not None and bk.same_as_snapshot(x, snap), "NaN equals itself bit for bit"
    x[0] = -0.0  # equal as floats, not as bits
    assert not bk.same_as_snapshot(x, snap)
    assert arrays.TorchBackend("cpu").snapshot(x.cpu()) is None
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda *a: (8 * x.numel() * x.element_size() - 1, 1 << 40))
    assert bk.snapshot(x) is None, "the host comparison where a copy would take over an eighth of the free memory"
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda *a: (1 << 40, 1 << 40))
    monkeypatch.setattr(arrays, "SNAPSHOT_MAX_BYTES", x.numel() * x.element_size() - 1)
    assert bk.snapshot(x) is None, "and past SNAPSHOT_MAX_BYTES"


@needs_cuda
def test_cuda_reference_matches_cpu_and_is_timed_with_events(harness):
    text = "import torch\nshapes = {'a': ('n',), 'b': ('n',), 'c': ('n',)}\n" \
           "def reference(*, a, b, c, n):\n    assert a.is_cuda\n    torch.add(a, b, out=c)\n"
    _, mg, gpu = harness.generate(text, VECADD, {"n": 1 << 20}, seeds=2, device="auto", time_reference=True,
                                  time_budget_s=2.0)
    _, mc, cpu = harness.generate(text.replace("assert a.is_cuda", "pass"), VECADD, {"n": 1 << 20}, seeds=2,
                                  device="cpu")
    assert mg["device"] == "cuda" and mc["device"] == "cpu"
    for g, c in zip(gpu, cpu):
        for k in g:
            np.testing.assert_array_equal(g[k], c[k])
    t = mg["reference_timing"]
    assert t["timer"] == "cuda_events" and t["device"].startswith("cuda:") and t["samples"] >= 10
    assert t["flush_bytes"] >= 256 << 20 and 0 < t["min_ms"] <= t["median_ms"]
    assert "gpu" in mg["meta"] and mg["meta"]["torch_allow_tf32_matmul"] is False
