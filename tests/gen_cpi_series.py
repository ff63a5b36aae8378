#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Write JSON Lines in the layout of `pmbpf record -b cgroup -o json` (see
docs/fields.md) for testing `pmbpf cpi`: a victim cgroup whose CPI rises, from
interval START on, in proportion to a chosen suspect's CPU use, next to
innocent cgroups with random CPU use.

Per interval of 1 s, leaf cgroups below /cpi.slice (their `self` figures are
their own: processes live in the leaves), then their roll-ups /cpi.slice and
/ (no processes of their own), then a system record:

- victim:    0.4-0.6 CPUs; CPI = base x (1 + N(0, NOISE)), and from START
             base x (1 + STRENGTH x suspect's CPUs + N(0, NOISE));
- suspect:   nearly idle (0-0.04 CPUs) before START, 0.3-1.0 CPUs from START
             on (a neighbour that starts a batch job); with --always-busy it
             uses 0.3-1.0 CPUs throughout and only hurts from START;
- innocents: each its own level m in 0.1-0.8 CPUs, m x U(0.2, 1.8) per interval;
- every cgroup's CPI has its own base (0.8-2.0) and noise N(0, NOISE) (3%).

Cycles are 2 GHz x on-CPU time, instructions = cycles / CPI. With --no-pmu
cycles and instructions are null (not-supported, as on a host without a PMU)
and the run-queue latency carries the rise instead (it is written in both
modes): a wait scale W of 100-400 us per cgroup, for the victim from START
x (1 + 3 x STRENGTH x suspect's CPUs), times lognormal noise (15%) each
interval; the mean wait (runq.avg_ns) is W / 6 and the p99 is W rounded up
to pmbpf's log2 bucket bound and capped by the maximum (1-3 W), as record
reports it. STRENGTH 0 gives an A/A series: the same cgroups, no rise.

    gen_cpi_series.py --seed 3 --start 90 --strength 0.5 > series.jsonl
"""
import argparse
import json
import math
import random
import sys

VICTIM = "/cpi.slice/victim"
SUSPECT = "/cpi.slice/suspect"
NOISE = 0.03
GHZ = 2.0


def _figures(cpu_s, interval_s, cpi, runq_p99_us, pmu, rng):
    oncpu = int(cpu_s * interval_s * 1e9)
    cycles = oncpu * GHZ
    events = {"task-clock": {"count": oncpu, "raw": oncpu, "enabled_ns": oncpu,
                             "running_ns": oncpu, "coverage": 1.0}}
    if pmu and oncpu:
        instructions = cycles / cpi
        for name, v in (("cycles", cycles), ("instructions", instructions)):
            events[name] = {"count": round(v), "raw": round(v), "enabled_ns": oncpu,
                            "running_ns": oncpu, "coverage": 1.0}
    else:
        events["cycles"] = events["instructions"] = None
    count = max(1, int(cpu_s * 400)) if oncpu else 0
    runq = {"count": count, "total_ns": 0, "avg_ns": None, "p50_ns": None, "p99_ns": None,
            "max_ns": None, "hist_log2_us": []}
    if count:
        # pmbpf's p99: the upper bound of the log2 bucket holding it, capped by the maximum
        max_ns = runq_p99_us * 1e3 * rng.uniform(1.0, 3.0)
        slot = max(0, int(math.floor(math.log2(runq_p99_us))))
        p99 = min(2 ** (slot + 1) * 1e3, max_ns)
        hist = [0] * (slot + 1)
        hist[max(0, slot - 3)] += count - max(1, count // 100)
        hist[slot] += max(1, count // 100)
        avg = runq_p99_us * 1e3 / 6
        runq.update({"total_ns": int(avg * count), "avg_ns": int(avg),
                     "p50_ns": min(2 ** (max(0, slot - 3) + 1) * 1e3, max_ns),
                     "p99_ns": int(p99), "max_ns": int(max_ns), "hist_log2_us": hist})
    ipc = None
    if events.get("cycles"):
        ipc = round(events["instructions"]["count"] / events["cycles"]["count"], 4)
    return {"cpu_pct": round(cpu_s * 100, 2), "oncpu_ns": oncpu,
            "voluntary_switches": count, "involuntary_switches": count // 4,
            "offcpu_ns": int((1 - min(cpu_s, 1)) * interval_s * 1e9), "runq": runq,
            "events": events, "ipc": ipc, "ipc_same_group": False, "mpki": {}}


def _sum(figs, interval_s):
    """Roll-up of leaf figures (sums; the p99 of a roll-up is not needed here)."""
    oncpu = sum(f["oncpu_ns"] for f in figs)
    out = {"cpu_pct": round(oncpu / interval_s / 1e7, 2), "oncpu_ns": oncpu,
           "voluntary_switches": sum(f["voluntary_switches"] for f in figs),
           "involuntary_switches": sum(f["involuntary_switches"] for f in figs),
           "offcpu_ns": sum(f["offcpu_ns"] for f in figs),
           "runq": {"count": sum(f["runq"]["count"] for f in figs),
                    "total_ns": sum(f["runq"]["total_ns"] for f in figs), "avg_ns": None,
                    "p50_ns": None, "p99_ns": max((f["runq"]["p99_ns"] or 0) for f in figs),
                    "max_ns": max((f["runq"]["max_ns"] or 0) for f in figs),
                    "hist_log2_us": []},
           "events": {}, "ipc": None, "ipc_same_group": False, "mpki": {}}
    for name in figs[0]["events"]:
        counts = [f["events"][name]["count"] for f in figs if f["events"].get(name)]
        out["events"][name] = None if not counts else {
            "count": sum(counts), "raw": sum(counts), "enabled_ns": oncpu,
            "running_ns": oncpu, "coverage": 1.0}
    return out


def _empty(figs):
    """The `self` figures of a cgroup without processes of its own."""
    return {"cpu_pct": 0.0, "oncpu_ns": 0, "voluntary_switches": 0, "involuntary_switches": 0,
            "offcpu_ns": 0, "runq": {"count": 0, "total_ns": 0, "avg_ns": None,
                                     "p50_ns": None, "p99_ns": None, "max_ns": None,
                                     "hist_log2_us": []},
            "events": {n: (None if v is None else {"count": 0, "raw": 0, "enabled_ns": 0,
                                                   "running_ns": 0, "coverage": None})
                       for n, v in figs["events"].items()},
            "ipc": None, "ipc_same_group": False, "mpki": {}}


def generate(seed, intervals=150, start=90, strength=0.5, innocents=4, pmu=True,
             always_busy=False):
    """The series as a list of JSON lines (without newlines)."""
    rng = random.Random(seed)
    names = [VICTIM, SUSPECT] + [f"/cpi.slice/innocent-{j + 1}" for j in range(innocents)]
    base_cpi = {n: rng.uniform(0.8, 2.0) for n in names}
    base_wait = {n: rng.uniform(100, 400) for n in names}
    level = {n: rng.uniform(0.1, 0.8) for n in names}
    ids = {n: 100 + i for i, n in enumerate(names)}
    lines = [{"type": "session", "version": "gen_cpi_series", "schema": 1, "attach": "tp_btf",
              "cpus": 8, "pmu": pmu}]
    for name, cls in (("cycles", "hardware"), ("instructions", "hardware"),
                      ("task-clock", "software")):
        counting = pmu or cls == "software"
        lines.append({"type": "event", "name": name, "class": cls,
                      "state": "counting" if counting else "not-supported", "group": None,
                      "cpus": 8 if counting else 0,
                      "error": None if counting else "No such file or directory"})
    for t in range(intervals):
        time = "2026-01-01T%02d:%02d:%02d.000Z" % (t // 3600, t // 60 % 60, t % 60)
        interval_s = round(rng.uniform(0.999, 1.001), 6)
        busy = t >= start or always_busy
        cpu = {VICTIM: rng.uniform(0.4, 0.6),
               SUSPECT: rng.uniform(0.3, 1.0) if busy else rng.uniform(0.0, 0.04)}
        for n in names[2:]:
            cpu[n] = level[n] * rng.uniform(0.2, 1.8)
        figs = {}
        for n in names:
            rise = strength * cpu[SUSPECT] if n == VICTIM and t >= start else 0.0
            cpi = base_cpi[n] * (1 + rise + rng.gauss(0, NOISE))
            wait = base_wait[n] * (1 + 3 * rise) * math.exp(rng.gauss(0, 0.15))
            figs[n] = _figures(cpu[n], interval_s, cpi, wait, pmu, rng)
        total = _sum(list(figs.values()), interval_s)
        recs = []
        for path, parent, depth, f, self_f, nproc in (
                ["/", 0, 0, total, _empty(total), 0],
                ["/cpi.slice", 1, 1, total, _empty(total), 0]) + tuple(
                    [n, 2, 2, figs[n], figs[n], 1] for n in names):
            rec = {"type": "cgroup", "time": time, "interval_s": interval_s,
                   "cgroup_id": 1 if path == "/" else 2 if path == "/cpi.slice" else ids[path],
                   "cgroup": path, "parent_id": parent, "depth": depth, "runtime": "",
                   "container_id": "", "pod_uid": "", "qos": "", "processes": nproc,
                   "processes_total": len(names) if depth < 2 else 1}
            rec.update(f)
            rec["self"] = self_f
            recs.append(rec)
        lines += recs
        lines.append({"type": "system", "time": time, "interval_s": interval_s, "cpus": 8,
                      "processes": len(names), "cgroups": len(recs),
                      "events": total["events"], "ipc": None, "ipc_same_group": False,
                      "mpki": {}, "attach": "tp_btf", "map_entries": len(names),
                      "map_capacity": 10240, "overflow_credits": 0, "exit_records": 0,
                      "exit_records_lost": 0, "read_errors": 0, "wakeups": 0,
                      "waits_unmatched": 0, "spans_unmatched": 0, "vanished": 0,
                      "poll_ms": 0.3, "programs": {}})
    return [json.dumps(rec) for rec in lines]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--intervals", type=int, default=150)
    ap.add_argument("--start", type=int, default=90, help="first interval of the rise")
    ap.add_argument("--strength", type=float, default=0.5,
                    help="CPI rise per CPU of the suspect (0: A/A, no rise)")
    ap.add_argument("--innocents", type=int, default=4)
    ap.add_argument("--no-pmu", action="store_true",
                    help="cycles and instructions null; the rise is in run-queue latency")
    ap.add_argument("--always-busy", action="store_true",
                    help="the suspect uses CPU before START too (and hurts only from START)")
    ap.add_argument("-o", "--output", help="file (default: standard output)")
    a = ap.parse_args()
    lines = generate(a.seed, a.intervals, a.start, a.strength, a.innocents, not a.no_pmu,
                     a.always_busy)
    out = open(a.output, "w") if a.output else sys.stdout
    out.write("\n".join(lines) + "\n")
    if a.output:
        out.close()


if __name__ == "__main__":
    main()
