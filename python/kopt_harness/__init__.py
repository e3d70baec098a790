"""kopt's Python side: golden data from a user's ref.py (see docs/HARNESS.md).

`python3 -m kopt_harness golden ...` writes the inputs and expected outputs kopt's C++ runner checks
every candidate against; `python3 -m kopt_harness inspect DIR` shows what was written.
"""

import time as _time

MANIFEST_VERSION = 1
# When the package was first imported (perf_counter seconds): the start of the harness's own phases
# (triton_run.py's phases_ms); what came before it is the interpreter's start. A child of the fork server
# (forkserver.py) resets it to the moment of its fork.
IMPORT_T0 = _time.perf_counter()
