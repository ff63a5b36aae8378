#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Cost of `pmbpf profile --call-graph dwarf` next to fp, for docs/benchmarks.md
(run as root, after the workloads are built: make test, or make build/workloads/...).

Alternates, in each round, runs of a CPU-bound loop pinned to CPU 1
(`profload spin`) without pmbpf and with a host-wide profile, fp and dwarf,
at 99 Hz and 999 Hz; prints median iterations per second and the slowdown.
Then, with kernel.bpf_stats_enabled, the sampling program's run_time_ns /
run_cnt (fp vs dwarf) while `dwarfload sort` (libc qsort, no frame pointers)
and the loop run, and the userspace unwinding time per sample pmbpf reports.

  tests/workloads/dwarfbench.py [--build build/] [--rounds 5] [--spin 2]
"""
import argparse
import json
import os
import re
import statistics
import subprocess

from profbench import profiler, spin

UNWIND = re.compile(r"pmbpf: dwarf: (\d+) stacks unwound \(([\d.]+) us each\), (\d+) truncated")


def stop(p):
    p.send_signal(2)
    _, err = p.communicate(timeout=120)
    return err


def bpf_cost(pmbpf, build, args, secs=3):
    """(ns per run of the sample program, runs, unwind line or None)."""
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1")
    try:
        p = profiler(pmbpf, args)
        loads = [subprocess.Popen([os.path.join(build, "workloads", "dwarfload"), "sort",
                                   str(secs)], stdout=subprocess.DEVNULL),
                 subprocess.Popen([os.path.join(build, "workloads", "profload"), "spin",
                                   str(secs)], stdout=subprocess.DEVNULL)]
        for w in loads:
            w.wait()
        progs = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], check=True,
                                          capture_output=True, text=True).stdout)
        err = stop(p)
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write("0")
    m = UNWIND.search(err)
    for q in progs:
        if q.get("name") == "sample" and q.get("run_cnt"):
            return q["run_time_ns"] / q["run_cnt"], q["run_cnt"], m
    return None, 0, m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build/")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--spin", type=float, default=2.0)
    a = ap.parse_args()
    pmbpf = os.path.join(a.build, "pmbpf")
    profload = os.path.join(a.build, "workloads", "profload")
    modes = {"none": None}
    for hz in ("99", "999"):
        modes[f"fp {hz} Hz"] = ["-F", hz, "--call-graph", "fp"]
        modes[f"dwarf {hz} Hz"] = ["-F", hz, "--call-graph", "dwarf"]
    res = {m: [] for m in modes}
    for _ in range(a.rounds):
        for m, args in modes.items():
            p = profiler(pmbpf, args) if args else None
            res[m].append(spin(profload, a.spin))
            if p:
                stop(p)
    base = statistics.median(res["none"])
    print(f"{a.rounds} alternating rounds, medians; taskset -c 1 profload spin {a.spin}, "
          f"pmbpf profile host-wide; load average {os.getloadavg()[0]:.2f}")
    print(f"{'mode':13} {'spin Mit/s':>11} {'vs none':>8} {'(min..max)':>17}")
    for m in modes:
        s = statistics.median(res[m])
        print(f"{m:13} {s / 1e6:11.1f} {100 * (s / base - 1):+7.2f}% "
              f"({min(res[m]) / 1e6:7.1f}..{max(res[m]) / 1e6:7.1f})")
    for mode in ("fp", "dwarf"):
        ns, cnt, m = bpf_cost(pmbpf, a.build, ["-F", "999", "--call-graph", mode])
        line = f"bpf sample (-F 999 --call-graph {mode}): "
        line += f"{ns:.0f} ns per run over {cnt} runs" if ns is not None else "no runs"
        if m:
            line += (f"; userspace unwinding {m.group(2)} us per sample over {m.group(1)} "
                     f"samples ({m.group(3)} truncated)")
        print(line)


if __name__ == "__main__":
    main()
