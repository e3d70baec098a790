"""The command line of `kopt __runner` (src/runner/child.cpp parse_options), which a worker request carries: what the
Ray bridge (ray_worker.py) must know to find the paths in a request, and what the fake worker (fake_worker.py)
accepts. python/tests/test_runner_options.py checks it against child.cpp, so an option added there is added here."""

# Value-taking options and the type of their value (None: a string; "append": repeated, --lib for paired mode).
VALUE_OPTIONS = {"--lib": "append", "--golden": None, "--out": None, "--mode": None, "--atol": float, "--rtol": float,
                 "--max-time-s": float, "--min-samples": int, "--max-samples": int, "--target-ci": float,
                 "--rounds": int, "--dump-outputs": None, "--smem-fill": None, "--l2": None, "--timing-method": None,
                 "--max-seeds": int, "--ephemeral-fd": int}
FLAGS = ("--race", "--checked-first")
