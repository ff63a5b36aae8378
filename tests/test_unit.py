# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Run the C unit tests (tests/unit/*.c, built by make) under the same runner."""
import glob
import os
import re
import subprocess

import pytest

from conftest import BUILD

UNIT = sorted(glob.glob(os.path.join(BUILD, "tests", "test_*")))
UNIT = [u for u in UNIT if os.access(u, os.X_OK) and not u.endswith(".d")]


def test_unit_binaries_built():
    assert UNIT, "no unit test binaries: run through make test"


def checks_passed(stdout):
    """The count of passed checks in a unit binary's last line (check.h's
    "N passed, N failed"), which must report no failure; None if the line is
    not there."""
    lines = stdout.splitlines()
    m = re.fullmatch(r"(\d+) passed, 0 failed", lines[-1]) if lines else None
    return int(m[1]) if m else None


def test_checks_passed_refuses_a_run_without_checks():
    assert checks_passed("12 passed, 0 failed\n") == 12
    assert checks_passed("0 passed, 0 failed\n") == 0
    assert checks_passed("3 passed, 1 failed\n") is None
    assert checks_passed("") is None


@pytest.mark.parametrize("binary", UNIT, ids=[os.path.basename(u) for u in UNIT])
def test_unit(binary):
    p = subprocess.run([binary], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    passed = checks_passed(p.stdout)
    assert passed is not None, p.stdout[-2000:]
    # a binary that ran no check passes vacuously
    assert passed > 0, f"{os.path.basename(binary)} ran no check: {p.stdout[-2000:]}"
