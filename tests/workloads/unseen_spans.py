#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Stress a filtered pmbpf for CPU time lost at spans whose switch-in it did not see.

tests/test_filter.py's move scenario, repeated: under `pmbpf record -G CG`,
`sh -c 'echo $$ > CG/cgroup.procs && exec work burn MS'` twice (50 and 100
ms), pinned to the last CPU, with an unmonitored 400 ms burn between them;
each burn's own CPU time (its report) against its credited on-CPU time.
The kernel now and then runs a task with no sched_switch event that pmbpf
sees (spans_unmatched, docs/fields.md); with --churn another pmbpf starts
and stops beside it in a loop, which made that happen to the burns often
enough to see (before the fix in unseen_span_runtime(), 2 runs in 100 lost
50-75 ms; after it, 0 in 200). Not part of the suite: it takes minutes and
hits a rare event. Exits 1 when a run is off by more than 5%.
Run as root from the repository: tests/workloads/unseen_spans.py --runs 200 --churn
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from conftest import cgroup2_mount  # noqa: E402 (the suite's, beside this script's tests)


def one_run(pmbpf, work, cg, cpu):
    """Credited on-CPU ns per burn pid, and the burns' own reports."""
    out = tempfile.TemporaryFile("w+")
    p = subprocess.Popen([pmbpf, "record", "-o", "json", "-b", "process", "-i", "0.5",
                          "-e", "task-clock", "-G", cg], stdout=out, stderr=subprocess.PIPE,
                         text=True)
    deadline = time.monotonic() + 20
    while True:
        out.seek(0)
        if '"session"' in out.readline():
            break
        if p.poll() is not None or time.monotonic() > deadline:
            sys.exit("unseen_spans: pmbpf did not start: " + p.stderr.read().strip())
        time.sleep(0.02)
    pin = ["taskset", "-c", str(cpu)]
    enter = f'echo $$ > "{cg}/cgroup.procs" && exec "$0" "$@"'
    burns = []
    for ms in (50, None, 100):
        if ms is None:  # unmonitored work between the two
            subprocess.run(pin + [work, "burn", "400"], check=True, capture_output=True)
            continue
        r = subprocess.run(pin + ["sh", "-c", enter, work, "burn", str(ms)], check=True,
                           capture_output=True, text=True)
        burns.append(json.loads(r.stdout.splitlines()[0]))
    time.sleep(0.6)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    if p.returncode:
        sys.exit("unseen_spans: pmbpf failed: " + err.strip())
    out.seek(0)
    recs = [json.loads(line) for line in out.read().splitlines()]
    credited = {}
    for r in recs:
        if r["type"] == "process":
            credited[r["pid"]] = credited.get(r["pid"], 0) + r["oncpu_ns"]
    unmatched = max((r["spans_unmatched"] for r in recs if r["type"] == "system"), default=0)
    return credited, burns, unmatched


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pmbpf", default=os.path.join(ROOT, "build", "pmbpf"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "workloads", "work"))
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--churn", action="store_true",
                    help="start and stop another pmbpf beside it, in a loop")
    a = ap.parse_args()
    mnt = cgroup2_mount()
    if not mnt:
        sys.exit("unseen_spans: no cgroup v2 hierarchy mounted")
    cg = os.path.join(mnt, f"pmbpf-unseen-{os.getpid()}")
    cpu = max(os.sched_getaffinity(0))
    churn = None
    if a.churn:
        churn = subprocess.Popen(["sh", "-c", f'while :; do timeout 0.7 "{a.pmbpf}" record -i 10 '
                                  f'-e task-clock >/dev/null 2>&1; done'],
                                 start_new_session=True)
    bad = 0
    try:
        for i in range(a.runs):
            os.mkdir(cg)
            try:
                credited, burns, unmatched = one_run(a.pmbpf, a.work, cg, cpu)
            finally:
                os.rmdir(cg)
            for b in burns:
                got = credited.get(b["pid"], 0)
                if abs(got - b["cpu_ns"]) > 0.05 * b["cpu_ns"]:
                    bad += 1
                    print(f"run {i}: pid {b['pid']} burned {b['cpu_ns'] / 1e6:.1f} ms, "
                          f"credited {got / 1e6:.1f} ms (spans_unmatched {unmatched})", flush=True)
    finally:
        if churn:  # the loop; its last pmbpf ends within its 0.7 s (timeout has its own group)
            os.killpg(churn.pid, signal.SIGTERM)
            churn.wait()
    print(f"unseen_spans: {bad} burns off by more than 5% in {a.runs} runs")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
