"""kopt's Python side: golden data from a user's ref.py (see docs/HARNESS.md).

`python3 -m kopt_harness golden ...` writes the inputs and expected outputs kopt's C++ runner checks
every candidate against; `python3 -m kopt_harness inspect DIR` shows what was written.
"""

MANIFEST_VERSION = 1
