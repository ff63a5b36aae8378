#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Overhead of `pmbpf profile`, for docs/profile.md (run as root).

Alternates runs without and with a host-wide profile at each frequency and
prints medians: the rate of a CPU-bound loop (profload spin), the time of
`perf bench sched pipe`, and the BPF programs' own cost per run from
kernel.bpf_stats_enabled.

  tests/workloads/profbench.py [--build build/] [--rounds 7]
"""
import argparse
import json
import os
import statistics
import subprocess
import time


def profiler(pmbpf, args):
    p = subprocess.Popen([pmbpf, "profile", "-o", "/dev/null"] + args,
                         stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        if line.startswith("pmbpf: profiling "):
            return p
    raise RuntimeError("pmbpf profile did not start")


def stop(p):
    p.send_signal(2)
    p.communicate(timeout=60)


def spin(profload, secs):
    out = subprocess.run(["taskset", "-c", "1", profload, "spin", str(secs)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["iters_per_s"]


def pipe(loops):
    t = time.monotonic()
    subprocess.run(["perf", "bench", "sched", "pipe", "-l", str(loops)], check=True,
                   capture_output=True)
    return time.monotonic() - t


def bpf_cost(pmbpf, profload, args, prog):
    """run_time_ns / run_cnt of one program while profiling a busy host."""
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1")
    try:
        p = profiler(pmbpf, args)
        loads = [subprocess.Popen([profload, "hot", "3"], stdout=subprocess.DEVNULL)
                 for _ in range(2)]
        pipe(100000)
        for w in loads:
            w.wait()
        progs = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], check=True,
                                          capture_output=True, text=True).stdout)
        stop(p)
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write("0")
    for q in progs:
        if q.get("name") == prog and q.get("run_cnt"):
            return q["run_time_ns"] / q["run_cnt"], q["run_cnt"]
    return None, 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build/")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--spin", type=float, default=2.0)
    ap.add_argument("--pipe", type=int, default=100000)
    a = ap.parse_args()
    pmbpf = os.path.join(a.build, "pmbpf")
    profload = os.path.join(a.build, "workloads", "profload")
    modes = {"none": None, "99 Hz": ["-F", "99"], "4999 Hz": ["-F", "4999"],
             "off-cpu": ["--off-cpu"]}
    res = {m: {"spin": [], "pipe": []} for m in modes}
    for r in range(a.rounds):
        for m, args in modes.items():
            p = profiler(pmbpf, args) if args else None
            res[m]["spin"].append(spin(profload, a.spin))
            res[m]["pipe"].append(pipe(a.pipe))
            if p:
                stop(p)
    base_spin = statistics.median(res["none"]["spin"])
    base_pipe = statistics.median(res["none"]["pipe"])
    print(f"{a.rounds} alternating rounds, medians; spin: taskset -c 1 profload spin "
          f"{a.spin}; pipe: perf bench sched pipe -l {a.pipe}")
    print(f"{'mode':10} {'spin Mit/s':>11} {'vs none':>8} {'(min..max)':>17} {'pipe s':>8} "
          f"{'vs none':>8} {'(min..max)':>15}")
    for m in modes:
        s = statistics.median(res[m]["spin"])
        t = statistics.median(res[m]["pipe"])
        print(f"{m:10} {s / 1e6:11.1f} {100 * (s / base_spin - 1):+7.2f}% "
              f"({min(res[m]['spin']) / 1e6:7.1f}..{max(res[m]['spin']) / 1e6:7.1f}) {t:8.3f} "
              f"{100 * (t / base_pipe - 1):+7.2f}% ({min(res[m]['pipe']):6.3f}..{max(res[m]['pipe']):6.3f})")
    for args, prog in ((["-F", "4999"], "sample"), (["--off-cpu"], "offcpu_btf")):
        ns, cnt = bpf_cost(pmbpf, profload, args, prog)
        if ns is not None:
            print(f"bpf {prog} ({' '.join(args)}): {ns:.0f} ns per run over {cnt} runs")


if __name__ == "__main__":
    main()
