"""kopt_harness/runner_options.py against `kopt __runner`'s parse_options in src/runner/child.cpp: every option
there is known here (the Ray bridge finds a request's paths by it, the fake worker accepts it), and nothing more."""

import os
import re

from conftest import PYTHON_DIR
from kopt_harness import runner_options

CHILD = os.path.join(os.path.dirname(PYTHON_DIR), "src", "runner", "child.cpp")


def test_the_option_lists_match_the_runners_command_line():
    src = open(CHILD).read()
    body = src[src.index("std::optional<Options> parse_options("):]
    body = body[:body.index("app.parse(")]
    values = set(re.findall(r'add_option\("(--[a-z0-9-]+)"', body))
    flags = set(re.findall(r'add_flag\("(--[a-z0-9-]+)"', body))
    assert values and flags
    assert values == set(runner_options.VALUE_OPTIONS)
    assert flags == set(runner_options.FLAGS)
