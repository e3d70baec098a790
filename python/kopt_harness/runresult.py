"""The runner's result vocabulary, shared with the C++ runner: status names (src/runner/outcome.cpp), so
`runner::interpret` reads a Triton runner's result.json unchanged. Timing results carry raw samples only
(samples_ms, call_samples_ms): kopt computes their statistics (src/runner/stats.cpp). Pure Python."""

OK = "ok"
WRONG_RESULT = "wrong_result"
UNWRITTEN_OUTPUT = "unwritten_output"
INPUT_MODIFIED = "input_modified"
# The evidence rules of the C++ runner (docs/RUNNER.md); the Triton runner applies the sealed and ephemeral seeds'.
WRONG_ON_FRESH_INPUTS = "wrong_on_fresh_inputs"
WRONG_ON_SEALED_SEED = "wrong_on_sealed_seed"
WRONG_ON_EPHEMERAL_SEED = "wrong_on_ephemeral_seed"
OUTPUTS_CHANGED_AFTER_RETURN = "outputs_changed_after_return"
THREADS_LEFT_RUNNING = "threads_left_running"
CUDA_ERROR = "cuda_error"
CRASHED = "crashed"
TIMED_OUT = "timed_out"
LOAD_ERROR = "load_error"
INTERRUPTED = "interrupted"
INTERNAL_ERROR = "internal_error"

# In the order of outcome.cpp's table (and its RunStatus enum).
STATUSES = (OK, WRONG_RESULT, UNWRITTEN_OUTPUT, INPUT_MODIFIED, WRONG_ON_FRESH_INPUTS, WRONG_ON_SEALED_SEED,
            WRONG_ON_EPHEMERAL_SEED, OUTPUTS_CHANGED_AFTER_RETURN, THREADS_LEFT_RUNNING, CUDA_ERROR, CRASHED, TIMED_OUT,
            LOAD_ERROR, INTERRUPTED, INTERNAL_ERROR)

# The child's exit code for a failure that ended it (as `kopt __runner`): 4 when the kernel or the golden data
# could not be loaded, 3 otherwise. A finished check (correct or not) exits 0.
def exit_code_for(status):
    if status in (OK, WRONG_RESULT, UNWRITTEN_OUTPUT, INPUT_MODIFIED, WRONG_ON_FRESH_INPUTS, WRONG_ON_SEALED_SEED,
                  WRONG_ON_EPHEMERAL_SEED, OUTPUTS_CHANGED_AFTER_RETURN, THREADS_LEFT_RUNNING):
        return 0
    return 4 if status == LOAD_ERROR else 3


class Fatal(Exception):
    """A failure that ends the run: written into the result with its status."""

    def __init__(self, status, message):
        super().__init__(message)
        assert status in STATUSES, status
        self.status = status
        self.message = message
