"""Writes vectors.json: output comparisons (expected and actual bytes of one dtype and shape, tolerances) and the
comparison's every field (runner/compare.cpp's to_json). The C++ comparison (runner/compare_test.cpp,
Compare.SharedTestVectors) and the Python harness's twin (python/tests/test_triton_compare.py) are both checked
against this file, so neither can drift from the other. Run from the repository root:
    PYTHONPATH=python python3 tests/data/compare/make_vectors.py
The figures are the Python twin's; a case is kept only if the C++ test agrees with them."""

import json
import os

import numpy as np

from kopt_harness import compare

HERE = os.path.dirname(os.path.abspath(__file__))


def f32(xs):
    return np.array(xs, dtype=np.float32)


def poisoned(a, index, byte=0xFF):
    raw = bytearray(a.tobytes())
    item = a.dtype.itemsize
    raw[index * item:(index + 1) * item] = bytes([byte]) * item
    return bytes(raw)


def bf16(xs):  # float32 -> bfloat16 bytes by truncation (exact for these values)
    return (np.array(xs, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16).tobytes()


NAN, INF = float("nan"), float("inf")
CASES = [
    ("identical_f32", "float32", [2, 3], f32(range(6)).tobytes(), f32(range(6)).tobytes(), 1e-4, 1e-4),
    ("within_tolerance_f32", "float32", [4], f32([1, 2, 3, 4]).tobytes(), f32([1.00001, 2, 2.99999, 4]).tobytes(),
     1e-4, 1e-4),
    ("one_mismatch_2d_f32", "float32", [2, 4], f32(range(8)).tobytes(), f32([0, 1, 2, 3, 4, 5.5, 6, 7]).tobytes(),
     1e-4, 1e-4),
    ("nan_and_inf_f32", "float32", [6], f32([NAN, INF, -INF, 1, NAN, INF]).tobytes(),
     f32([NAN, INF, INF, 1, 0, NAN]).tobytes(), 1e-4, 1e-4),
    ("never_written_f32", "float32", [5], f32([1, 2, 3, 4, 5]).tobytes(), poisoned(f32([1, 2, 3, 4, 9]), 1),
     1e-4, 1e-4),
    ("relative_tolerance_f32", "float32", [3], f32([1000, -2000, 0]).tobytes(), f32([1000.5, -2001.5, 1e-6]).tobytes(),
     1e-5, 1e-3),
    ("zeros_f32", "float32", [4], f32([0, 0, 0, 0]).tobytes(), f32([0, 0, 0, 0]).tobytes(), 0.0, 0.0),
    ("half_f16", "float16", [4], np.array([0.5, 1.5, -2, 65504], np.float16).tobytes(),
     np.array([0.5, 1.5, -2.5, 65504], np.float16).tobytes(), 1e-2, 1e-2),
    ("bfloat16", "bfloat16", [3], bf16([1.0, 2.0, 3.0]), bf16([1.0, 2.0078125, 3.5]), 2e-2, 2e-2),
    ("int32_exact", "int32", [2, 2], np.array([1, -2, 3, 4], np.int32).tobytes(),
     poisoned(np.array([1, -2, 30, 4], np.int32), 3, 0xA5), 0.0, 0.0),
    ("float64", "float64", [3], np.array([1e-300, 1.0, 3.0], np.float64).tobytes(),
     np.array([1e-300, 1.0 + 1e-9, 3.0], np.float64).tobytes(), 1e-8, 1e-7),
]


def main():
    cases = []
    for name, dtype, shape, expected, actual, atol, rtol in CASES:
        r = compare.compare(dtype, shape, np.frombuffer(expected, np.uint8), np.frombuffer(actual, np.uint8), atol, rtol)
        cases.append({"name": name, "dtype": dtype, "shape": shape, "atol": atol, "rtol": rtol,
                      "expected_hex": expected.hex(), "actual_hex": actual.hex(), "result": r.to_json()})
    out = {"about": "Output comparisons and their results (runner/compare.cpp's to_json); see make_vectors.py.",
           "cases": cases}
    with open(os.path.join(HERE, "vectors.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
