"""Drawing, the signature, dims, and the workload model's validation as plain functions."""

import numpy as np
import pytest

from kopt_harness import draw, dtypes, plan, signature, workload
from kopt_harness.errors import UsageError


@pytest.mark.parametrize("name", ["float32", "float64", "float16"])
def test_floats_are_uniform_in_minus_one_one(name):
    x = draw.draw(dtypes.lookup(name), (20000,), seed=0, name="x")
    assert x.dtype == np.dtype(name)
    assert x.min() >= -1.0 and x.max() < 1.0
    assert abs(float(x.mean())) < 0.03 and 0.56 < float(x.std()) < 0.59  # uniform [-1, 1): std 2/sqrt(12)
    assert float(np.mean(x < 0)) == pytest.approx(0.5, abs=0.02)


def test_bfloat16_draws_stay_below_one_after_rounding():
    x = draw.draw(dtypes.lookup("bfloat16"), (50000,), seed=1, name="x")
    assert x.dtype == np.float32 and x.max() <= dtypes.float_ceiling(dtypes.lookup("bfloat16"))
    # round to nearest even at 7 mantissa bits, as torch does: never reaches 1.0
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32).view(np.float32)
    assert rounded.max() < 1.0 and rounded.min() >= -1.0


@pytest.mark.parametrize("name,lo,hi", [("int8", -64, 63), ("int32", -64, 63), ("int64", -64, 63),
                                        ("uint8", 0, 63), ("uint64", 0, 63)])
def test_integers_cover_their_range(name, lo, hi):
    x = draw.draw(dtypes.lookup(name), (5000,), seed=2, name="x")
    assert x.dtype == np.dtype(name) and int(x.min()) == lo and int(x.max()) == hi


def test_bools_are_random():
    x = draw.draw(dtypes.lookup("bool"), (1000,), seed=3, name="x")
    assert x.dtype == np.bool_ and 400 < int(x.sum()) < 600


def test_tiny_buffers_are_never_all_zero():
    for seed in range(300):
        assert draw.draw(dtypes.lookup("bool"), (1,), seed, "flag")[0]
        assert draw.draw(dtypes.lookup("uint8"), (1,), seed, "u")[0] != 0


def test_an_all_zero_generator_is_rejected(monkeypatch):
    monkeypatch.setattr(draw, "_draw_once", lambda rng, d, shape: np.zeros(shape, np.float32))
    with pytest.raises(UsageError, match="all zeros"):
        draw.draw(dtypes.lookup("float32"), (4,), 0, "x")


def test_draws_depend_on_seed_and_name_only():
    f = dtypes.lookup("float32")
    a = draw.draw(f, (64,), 5, "A")
    np.testing.assert_array_equal(a, draw.draw(f, (64,), 5, "A"))
    assert not np.array_equal(a, draw.draw(f, (64,), 6, "A"))
    assert not np.array_equal(a, draw.draw(f, (64,), 5, "B"))


def test_signature_parsing_errors_name_the_problem():
    ok = signature.parse({"params": [{"name": "A", "kind": "pointer", "dtype": "float32", "const": True},
                                     {"name": "n", "kind": "scalar", "dtype": "int64"}]})
    assert ok[0].is_pointer and ok[0].const and not ok[1].is_pointer and not ok[1].const
    cases = [({"params": [{"name": "A", "kind": "pointer", "dtype": "float"}]}, "dtype 'float'"),
             ({"params": [{"name": "A", "kind": "array", "dtype": "float32"}]}, "kind 'array'"),
             ({"params": [{"name": "A", "kind": "pointer", "dtype": "int8"}] * 2}, "appears twice"),
             ({"params": [{"name": "n", "kind": "scalar", "dtype": "int32"}]}, "no pointer"),
             ({"params": [{"name": "1x", "kind": "pointer", "dtype": "int8"}]}, "no valid name"),
             ([], "expected an object")]
    for obj, match in cases:
        with pytest.raises(UsageError, match=match):
            signature.parse(obj)


def test_dims_must_be_positive_integers():
    assert plan.parse_dims({"M": 4}) == {"M": 4}
    for bad in ({"M": 0}, {"M": 1.5}, {"M": True}, {"M": "4"}, [4], {"1M": 4}):
        with pytest.raises(UsageError, match="--dims"):
            plan.parse_dims(bad)


def test_workload_model_validation():
    assert workload.validate({"flops": 2.0, "bytes_min": 12}) == {"flops": 2, "bytes_min": 12}
    assert workload.validate({"flops": 1.5e3, "bytes_min": np.int64(8)}) == {"flops": 1500, "bytes_min": 8}
    assert workload.validate({"flops": {"float16": 10, "float32": 2}, "bytes_min": 4, "dtype": "float16"}) == \
        {"flops": {"float16": 10, "float32": 2}, "bytes_min": 4, "dtype": "float16"}
    # The read/write split: bytes_min is their sum, given or not; a reduction writes (almost) nothing.
    assert workload.validate({"flops": 1, "bytes_read_min": 8, "bytes_written_min": 4}) == \
        {"flops": 1, "bytes_min": 12, "bytes_read_min": 8, "bytes_written_min": 4}
    assert workload.validate({"flops": 1, "bytes_min": 8, "bytes_read_min": 8, "bytes_written_min": 0}) == \
        {"flops": 1, "bytes_min": 8, "bytes_read_min": 8, "bytes_written_min": 0}
    cases = [({"flops": -1, "bytes_min": 1}, "flops = -1"),
             ({"flops": 1, "bytes_min": float("nan")}, "bytes_min = nan"),
             ({"flops": True, "bytes_min": 1}, "flops = True"),
             ({"flops": 1}, "no 'bytes_min'"),
             ({"flops": 1, "bytes_min": 1, "byte_min": 2}, "unknown key"),
             ({"flops": {"fp16": 1}, "bytes_min": 1}, "dtype 'fp16'"),
             ({"flops": {"float16": 0}, "bytes_min": 1}, "flops\\['float16'\\] = 0"),
             ({"flops": 1, "bytes_min": 1, "dtype": "half"}, "dtype 'half'"),
             ({"flops": 1, "bytes_read_min": 8}, "without 'bytes_written_min'"),
             ({"flops": 1, "bytes_min": 9, "bytes_read_min": 8, "bytes_written_min": 4}, "must agree"),
             ({"flops": 1, "bytes_read_min": -8, "bytes_written_min": 4}, "bytes_read_min = -8"),
             ({"flops": 1, "bytes_read_min": 0, "bytes_written_min": 0}, "bytes_read_min \\+ bytes_written_min = 0"),
             ([1, 2], "must return a dict")]
    for obj, match in cases:
        with pytest.raises(UsageError, match=match):
            workload.validate(obj)


def test_signature_accepts_kopts_wrapped_form():
    from kopt_harness import signature
    inner = {"params": [{"name": "x", "kind": "pointer", "dtype": "float32", "const": True}]}
    wrapped = {"meta": {"kind": "signature"}, "signature": inner}
    assert [p.name for p in signature.parse(wrapped)] == [p.name for p in signature.parse(inner)] == ["x"]


def test_same_bytes_finds_a_difference_in_any_byte_whatever_the_size():
    from kopt_harness import arrays

    for n in (1, 7, 8, 9, 64, 1001, 4096):
        a = np.arange(n, dtype=np.uint8)
        assert arrays.same_bytes(a, a.copy())
        for at in {0, n // 2, n - 1}:
            b = a.copy()
            b[at] ^= 0x40
            assert not arrays.same_bytes(a, b), (n, at)
        assert not arrays.same_bytes(a, a[: n - 1])
    odd = np.arange(17, dtype=np.uint8)[1:]  # 16 bytes at an odd address
    assert arrays.same_bytes(odd, odd.copy())
