# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The CI gate on noisy work: real `pmbpf stat -r N --ab` series of CPU work
of a fixed base plus a random 0-50% more (the workload that
tests/unit/test_compare.c simulates), and the job of docs/ci.md, run as
written, on a +30% change: it must fail with exit 1."""
import json
import os
import re
import subprocess

import pytest

from conftest import PMBPF, WORK, needs_root

pytestmark = needs_root

DOC = os.path.join(os.path.dirname(__file__), "..", "docs", "ci.md")
BASE_MS = 20  # tens of ms of CPU a run: the whole file stays well under a minute


def noisy(base_ms):
    """A command burning base_ms plus a random 0-50% of BASE_MS more CPU time.
    The workload draws the amount itself: a shell's start in front of each
    run added a few ms of its own noise, more on a busy host (at load 17,
    +36% was flagged in 6 of 10 series that way)."""
    return [WORK, "burn", str(base_ms), str(BASE_MS // 2)]


def ab_verdict(tmp_path, a, b, runs, *opts):
    out = tmp_path / f"ab-{os.urandom(4).hex()}.json"
    p = subprocess.run([PMBPF, "stat", "-r", str(runs), "--ab", "-e", "task-clock", "-o", "json",
                        "-O", str(out)] + list(opts) + ["--"] + a + ["---"] + b,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 1), p.stderr
    rows = {r["metric"]: r for r in json.loads(out.read_text())["comparison"]["rows"]}
    return rows["task-clock"]


def test_ab_series_of_noisy_work(tmp_path):
    """10 series of +36% (base 20 -> 29 ms, each plus 0-10 ms: the issue's
    first row, scaled), 10 A/A, 2 of 2.7x at 5 runs. Simulated: 92.9%, 0.0%
    and 100% regressions. Here at least 7 of 10 (below that, p < 0.5% if the
    simulation holds), at most 1 A/A, all 2.7x. (One run of 20 and 20 here:
    17 of 20, 0 of 20, 3 of 3.)"""
    found, false, far = [], [], []
    for _ in range(10):
        found.append(ab_verdict(tmp_path, noisy(BASE_MS), noisy(BASE_MS * 29 // 20), 7))
        false.append(ab_verdict(tmp_path, noisy(BASE_MS), noisy(BASE_MS), 7))
    for _ in range(2):
        far.append(ab_verdict(tmp_path, noisy(BASE_MS), noisy(BASE_MS * 27 // 10), 5))
    summary = {k: [r["verdict"] for r in v] for k, v in
               (("+36%", found), ("A/A", false), ("2.7x", far))}
    print(json.dumps(summary))
    assert sum(r["verdict"] == "regression" for r in found) >= 7, summary
    assert sum(r["verdict"] == "regression" for r in false) <= 1, summary
    assert all(r["verdict"] == "regression" for r in far), summary
    # the intervals that made the regressions lie wholly beyond the limit
    for r in found + far:
        if r["verdict"] == "regression":
            assert r["ci_low_pct"] >= r["limit_pct"] >= 10, r


# every row but task-clock out of the verdict: --max-runs then grows the
# series for task-clock alone, as docs/ci.md's simulation does
TASK_CLOCK_ALONE = [a for m in ("wall-time", "cpu-time", "voluntary-switches",
                                "involuntary-switches", "migrations")
                    for a in ("--threshold", f"{m}=off")]


def test_ab_max_runs_finds_a_true_30_percent(tmp_path):
    """--max-runs 30 from -r 7: +30% more work in every run of noisy CPU work
    (B burns 1.3 times a draw of A's 60-90 ms, so the spread grows with it)
    is a regression in at least 4 of 5 series. Simulated: +30% in 100% of
    series, after 10 runs a side on average, where -r 7 alone finds 61%;
    +20% in 87.5%. An A/A pair is no regression.

    task-clock is judged alone, as simulated: the gate stops at the first
    regression of any row, and a loaded host's wall-time (B runs 1.3 times
    as long) or cpu-time could end a series at 7 runs with task-clock still
    too noisy (2 of 5 series of one loaded suite run). The workload draws
    its amount itself: a bash in front of each run, whose start costs a few
    ms of task-clock and more under a fork storm, took one series to +14%
    at 7 runs where +30% was drawn."""
    a = [WORK, "burn", "60", "30"]
    b = [WORK, "burn", "78", "39"]  # 1.3 x (60 + 0..30)
    got = [ab_verdict(tmp_path, a, b, 7, "--max-runs", "30", *TASK_CLOCK_ALONE)
           for _ in range(5)]
    print(json.dumps([(r["verdict"], r["base"]["n"], r["change_pct"]) for r in got]))
    assert sum(r["verdict"] == "regression" for r in got) >= 4, got
    assert all(7 <= r["base"]["n"] <= 30 for r in got), got
    aa = ab_verdict(tmp_path, noisy(BASE_MS), noisy(BASE_MS), 7, "--max-runs", "10",
                    *TASK_CLOCK_ALONE)
    assert aa["verdict"] != "regression", aa
    assert aa["base"]["n"] <= 10, aa


def documented_job():
    text = open(DOC).read()
    job = text[text.index("## A CI job"):]
    m = re.search(r"```sh\n(#!/bin/bash\n.*?)```", job, re.S)
    assert m, "docs/ci.md has no job"
    return m.group(1)


def test_documented_job_fails_on_a_regression(tmp_path):
    """docs/ci.md's job, verbatim, with ./build/bench a noisy CPU burner: its
    baseline runs burn 20-30 ms, the change's runs 1.3 times that (26-39 ms:
    +30%, the spread growing with the work). The random draws are seeded by
    the run's number, so that the test sees the same noise every time
    (simulated over 2000 such series, this job at RUNS=20 finds 97.7%)."""
    job = documented_job()
    runs = int(re.search(r"^RUNS=(\d+)", job, re.M).group(1))
    assert runs >= 7
    (tmp_path / "build").mkdir()
    bench = tmp_path / "build" / "bench"
    bench.write_text(f"""#!/bin/bash
n=$(cat count 2>/dev/null || echo 0)
echo $((n + 1)) >count
RANDOM=$((n % {runs} + 1))
ms=$(({BASE_MS} * (1000 + 500 * (RANDOM % 1001) / 1000) / 1000))
[ "$n" -ge {runs} ] && ms=$((ms * 13 / 10))
exec {WORK} burn "$ms"
""")
    bench.chmod(0o755)
    env = dict(os.environ, PATH=os.path.dirname(PMBPF) + ":" + os.environ["PATH"])
    p = subprocess.run(["bash", "-c", job], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    assert int((tmp_path / "count").read_text()) == 2 * runs
    assert p.returncode == 1, p.stdout + p.stderr
    assert "performance regression" in p.stdout
    # by a row of the work's CPU time: task-clock, or cpu-time (rusage), its
    # own interval, which can decide first (a loaded run: cpu-time +20.2%
    # [+10.7%, +26.1%] a regression, task-clock [+9.85%, +25.6%] too noisy)
    assert re.search(r"^(task-clock|cpu-time) .* regression$", p.stdout, re.M), p.stdout
    assert "| task-clock |" in (tmp_path / "comment.md").read_text()
    # and the same job on no change passes
    (tmp_path / "count").write_text(str(-10 * runs))
    bench.write_text(bench.read_text().replace("ms * 13 / 10", "ms"))
    p = subprocess.run(["bash", "-c", job], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
