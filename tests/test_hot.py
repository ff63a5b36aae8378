# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--hot: each process's hottest function, from a low-rate cpu-clock sample."""
import json
import os
import subprocess

import pytest

from conftest import BUILD, PMBPF, needs_root

PROFLOAD = os.path.join(BUILD, "workloads", "profload")

pytestmark = needs_root


def spinner(seconds):
    """profload spending its time in prof_spin() (a loop with a vDSO clock read)."""
    return subprocess.Popen([PROFLOAD, "spin", str(seconds)], stdout=subprocess.DEVNULL)


def record(*args, timeout=30):
    p = subprocess.run([PMBPF, "record", *args], capture_output=True, text=True,
                       timeout=timeout)
    assert p.returncode == 0, p.stderr
    return p.stdout


def process_records(out):
    return [r for r in map(json.loads, out.splitlines()) if r["type"] == "process"]


@pytest.mark.parametrize("only", [True, False], ids=["pid", "all"])
def test_hot_names_the_hot_function(only):
    w = spinner(8)
    try:
        args = ["--hot=99", "-o", "json", "-i", "1", "-d", "5"]
        out = record(*args, *(["-p", str(w.pid)] if only else []))
    finally:
        w.kill()
        w.wait()
    rows = [r for r in process_records(out) if r["pid"] == w.pid]
    assert len(rows) >= 4, out
    hot = [r["hot_function"] for r in rows]
    good = [h for h in hot if h and h["name"] == "prof_spin" and h["share"] > 0.8]
    # most intervals: a shared CPU may leave the spinner few samples in one
    assert len(good) >= len(rows) - 1, hot
    for h in good:
        # 99 Hz on the CPU it ran on, over about a second
        assert 1 <= h["samples"] <= 150, h
    # every other process record has the key too (null when it had no sample)
    assert all("hot_function" in r for r in process_records(out))


def test_hot_off_by_default():
    out = record("-o", "json", "-i", "0.5", "-c", "2")
    recs = process_records(out)
    assert recs and not any("hot_function" in r for r in recs)
    table = record("-i", "0.5", "-c", "1")
    head = [l for l in table.splitlines() if l.lstrip().startswith("PID ")]
    assert head and "HOT" not in head[0].split(), table


def test_hot_table_column():
    w = spinner(6)
    try:
        table = record("--hot", "-i", "1", "-c", "3", "-p", str(w.pid))
    finally:
        w.kill()
        w.wait()
    lines = table.splitlines()
    heads = [l for l in lines if l.lstrip().startswith("PID ")]
    assert heads and all(h.split()[-1] == "HOT" for h in heads), table
    rows = [l.split() for l in lines if l.split() and l.split()[0] == str(w.pid)]
    # the default 19 Hz: a few samples a second, enough to name it
    assert sum(r[-1] == "prof_spin" for r in rows) >= 2, table


@pytest.mark.parametrize("cmd", ["record", "top"])
@pytest.mark.parametrize("value", ["0", "1000", "100000", "x", ""])
def test_hot_bad_value(cmd, value):
    p = subprocess.run([PMBPF, cmd, f"--hot={value}"], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 2, p
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0] == f"pmbpf: invalid --hot '{value}': give a rate of 1 to 999 (Hz)", p.stderr
