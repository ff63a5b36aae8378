# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Run the C unit tests (tests/unit/*.c, built by make) under the same runner."""
import glob
import os
import subprocess

import pytest

from conftest import BUILD

UNIT = sorted(glob.glob(os.path.join(BUILD, "tests", "test_*")))
UNIT = [u for u in UNIT if os.access(u, os.X_OK) and not u.endswith(".d")]


def test_unit_binaries_built():
    assert UNIT, "no unit test binaries: run through make test"


@pytest.mark.parametrize("binary", UNIT, ids=[os.path.basename(u) for u in UNIT])
def test_unit(binary):
    p = subprocess.run([binary], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert " passed, 0 failed" in p.stdout.splitlines()[-1]
