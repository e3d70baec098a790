"""The runner's result vocabulary, shared with the C++ runner: status names (src/runner/outcome.cpp) and the
`timing` block (the fields of src/runner/stats.cpp's to_json), so `runner::interpret` reads a Triton runner's
result.json unchanged. Pure Python."""

from . import stats

OK = "ok"
WRONG_RESULT = "wrong_result"
UNWRITTEN_OUTPUT = "unwritten_output"
INPUT_MODIFIED = "input_modified"
CUDA_ERROR = "cuda_error"
CRASHED = "crashed"
TIMED_OUT = "timed_out"
LOAD_ERROR = "load_error"
INTERRUPTED = "interrupted"
INTERNAL_ERROR = "internal_error"

# In the order of outcome.cpp's table (and its RunStatus enum).
STATUSES = (OK, WRONG_RESULT, UNWRITTEN_OUTPUT, INPUT_MODIFIED, CUDA_ERROR, CRASHED, TIMED_OUT, LOAD_ERROR,
            INTERRUPTED, INTERNAL_ERROR)

# The child's exit code for a failure that ended it (as `kopt __runner`): 4 when the kernel or the golden data
# could not be loaded, 3 otherwise. A finished check (correct or not) exits 0.
def exit_code_for(status):
    if status in (OK, WRONG_RESULT, UNWRITTEN_OUTPUT, INPUT_MODIFIED):
        return 0
    return 4 if status == LOAD_ERROR else 3


class Fatal(Exception):
    """A failure that ends the run: written into the result with its status."""

    def __init__(self, status, message):
        super().__init__(message)
        assert status in STATUSES, status
        self.status = status
        self.message = message


# Stability thresholds of src/runner/stats.cpp (docs/RUNNER.md).
STABLE_CV, STABLE_CI, BORDERLINE_CV = 0.02, 0.01, 0.05


def stability(samples, robust_cv, ci_rel_halfwidth):
    if samples < 5:
        return "unstable"
    if robust_cv <= STABLE_CV and ci_rel_halfwidth <= STABLE_CI:
        return "stable"
    if robust_cv <= BORDERLINE_CV:
        return "borderline"
    return "unstable"


def timing_json(samples_ms):
    """The `timing` block: every field of runner/stats.cpp's to_json (its median CI from stats.py's exact
    order statistics), plus `ci_coverage`."""
    n = len(samples_ms)
    if n == 0:
        return {"samples": 0, "median_ms": 0.0, "mean_ms": 0.0, "min_ms": 0.0, "max_ms": 0.0, "p10_ms": 0.0,
                "p90_ms": 0.0, "mad_ms": 0.0, "robust_cv": 0.0, "ci95_low_ms": 0.0, "ci95_high_ms": 0.0,
                "ci95_rel_halfwidth": 0.0, "stability": "unstable", "ci_coverage": 0.0}
    med = stats.median(samples_ms)
    mad = stats.mad(samples_ms)
    cv = stats.MAD_TO_SIGMA * mad / med if med > 0 else 0.0
    lo, hi, coverage = stats.median_ci(samples_ms)
    half = (hi - lo) / 2.0 / med if med > 0 else 0.0
    return {"samples": n, "median_ms": med, "mean_ms": stats.mean(samples_ms), "min_ms": min(samples_ms),
            "max_ms": max(samples_ms), "p10_ms": stats.quantile(samples_ms, 0.10),
            "p90_ms": stats.quantile(samples_ms, 0.90), "mad_ms": mad, "robust_cv": cv, "ci95_low_ms": lo,
            "ci95_high_ms": hi, "ci95_rel_halfwidth": half, "stability": stability(n, cv, half),
            "ci_coverage": coverage}
