# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The in-kernel cgroup filter (-G) credits exactly what ran in the subtree.

With a filter, the sched_switch program does nothing between two unmonitored
tasks, so a CPU's last attribution point can be old when a monitored task
leaves. Each test compares the subtree's figures with the kernel's own
accounting of the same cgroup (cpu.stat) and with the workloads' getrusage.
"""
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import SPAWNER, WORK, Cgroup, FileRecord, allowed_cpus, needs_root

pytestmark = needs_root

# Relative error the filter may add per run, against the cgroup's cpu.stat
# (beyond the unfiltered path's own error in the same run); page faults
# against the unfiltered path. Before the fix, runs were off by +0.4% to +49% (one stale
# span of up to 0.35 s); the deliberate stale point below fails every time.
TOLERANCE = 0.01


class Filtered(FileRecord):
    """pmbpf record [-G CG] -b cgroup -o json; the cgroup's rows summed."""

    def __init__(self, cg, events, filtered=True):
        self.cg, self.events = cg, events
        super().__init__("-b", "cgroup", "-i", "0.5", "-e", ",".join(events),
                         *(["-G", cg.path] if filtered else []))
        self.wait_started()

    def stop(self):
        recs = super().stop()
        rows = [r for r in recs if r["type"] == "cgroup" and r["cgroup"] == self.cg.rel]
        totals = {"oncpu_s": sum(r["oncpu_ns"] for r in rows) / 1e9}
        for e in self.events:
            totals[e] = sum(r["events"][e]["raw"] for r in rows)
        return totals


class PerfCgroup:
    """perf stat -a -G CG -e task-clock: the cgroup's tasks' time from each switch-in to
    its switch-out, which is what pmbpf measures (perf's cgroup events are switched
    at the context switch)."""

    def __init__(self, cg):
        self.proc = subprocess.Popen(["perf", "stat", "-a", "-x", ",", "-e", "task-clock",
                                      "-G", cg.rel.lstrip("/")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=30)
        for line in err.splitlines():
            f = line.split(",")
            if len(f) > 4 and f[2] == "task-clock":
                assert f[0] not in ("<not counted>", "<not supported>"), err
                return float(f[0]) / 1e3  # msec
        raise AssertionError("no task-clock in perf's output: " + err)


def steal_s():
    """The host's steal time of all CPUs (/proc/stat, in clock ticks)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]) / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("run", range(2))
def test_churn_in_filtered_cgroup_matches_cpu_stat(run, host):
    """2,000 short-lived processes a minute in a filtered cgroup (issue 18's scenario),
    the host at rest and busy (conftest's host: a spinner per CPU and a fork storm;
    busy, a span of the cgroup's whose switch-in was not seen once took the other
    tasks' time and counts since the last attribution point, up to a tick's:
    task-clock +4-6% over perf's, page faults +3-5% over the unfiltered path's):
    CPU time within 0.5% of the cgroup's cpu.stat, as without the filter in the same
    run (tests/test_oncpu.py); task-clock within 1% of perf's task-clock for the same
    cgroup in the same run (perf stat -a -G), and not above cpu.stat; page faults within
    1% of the unfiltered path's figure for the same cgroup in the same run (the kernel
    keeps no per-cgroup fault count on a cgroup without the memory controller, and the
    spawner's own rusage includes faults from before it entered the cgroup)."""
    if not shutil.which("perf"):
        pytest.skip("perf (linux-perf) is not installed: deploy/install-deps.sh installs it")
    cg = Cgroup("filter", f"churn{run}{host}")
    try:
        rec = Filtered(cg, ["task-clock", "page-faults"])
        ref = Filtered(cg, ["task-clock", "page-faults"], filtered=False)
        perf = PerfCgroup(cg)
        time.sleep(0.3)
        u0, st0 = cg.usage_ns() / 1e9, steal_s()
        sp = subprocess.run(["/usr/bin/python3", "-c", SPAWNER, WORK, "8"], preexec_fn=cg.enter,
                            capture_output=True, text=True, check=True)
        time.sleep(0.6)
        truth_s = cg.usage_ns() / 1e9 - u0
        steal = steal_s() - st0
        perf_s = perf.stop()
        got = rec.stop()
        unfiltered = ref.stop()
    finally:
        cg.remove()
    ru = json.loads(sp.stdout)
    assert ru["started"] >= 200, ru
    # the kernel's two views agree first: otherwise the scenario itself is off
    assert abs(ru["cpu_s"] - truth_s) <= 0.01 * truth_s + 0.01, (ru, truth_s)
    # on-CPU time is the scheduler's own (issue 30): the cgroup's cpu.stat
    for name, r in (("filtered", got), ("unfiltered", unfiltered)):
        assert abs(r["oncpu_s"] - truth_s) <= 0.005 * truth_s + 0.001, \
            (name, r, truth_s, perf_s, ru)
    # task-clock is perf's switch-in to switch-out time of the cgroup's tasks.
    # cpu.stat (and rusage, schedstat) also charge a task woken on an idle CPU
    # from its wakeup, which updates the scheduler's clock and has the switch out
    # of idle skip that update (rq_clock_skip_update(): the idle task counts as
    # queued), so it reads more than any switch-to-switch measure: 8-64 us per
    # such wakeup here, 9-10 ms in this scene (1,600 sleeps of the spawner), 1% of
    # its time. The filter may add at most 1% to the unfiltered path's own
    # deviation from perf in the same run.
    base_err = abs(unfiltered["task-clock"] - perf_s * 1e9) / 1e9
    value = got["task-clock"] / 1e9
    assert abs(value - perf_s) <= TOLERANCE * perf_s + base_err, \
        (value, perf_s, truth_s, ru, unfiltered)
    # and not above the unfiltered path's figure for the same cgroup: with the
    # filter pmbpf follows fewer tasks, and a span whose switch-in it did not
    # see gets the task's own run time, not the other tasks' since the last
    # attribution point (before: +0.03% to +0.72% at rest, +4-6% with the host
    # busy; after: at most +0.07% in 12 runs, load 3-12)
    assert value <= unfiltered["task-clock"] / 1e9 * 1.003 + 0.001, (value, unfiltered, perf_s)
    # not above cpu.stat, but for the host's steal time: task-clock's spans
    # hold it, the scheduler's task clock does not (seen under load: 1.0044 s
    # against cpu.stat's 0.9918 s); /proc/stat's, of all CPUs, one tick a CPU
    assert value <= truth_s * (1 + TOLERANCE) + steal + os.cpu_count() / os.sysconf("SC_CLK_TCK"), \
        (value, truth_s, perf_s, steal)
    # page faults: at least every child's (born in the cgroup), and what the
    # unfiltered path credits the same cgroup
    assert got["page-faults"] >= ru["children_faults"], (got, ru)
    assert abs(got["page-faults"] - unfiltered["page-faults"]) <= \
        TOLERANCE * unfiltered["page-faults"], (got, unfiltered, ru)


def test_task_moving_into_filter_after_unmonitored_work_is_not_credited_it():
    """The stale attribution point, made on purpose: a monitored task ends on a
    CPU (the second allowed), an unmonitored one burns 400 ms there, then a task moves itself into the
    filtered cgroup and burns 100 ms. Only the monitored work may be credited
    (before the fix, the 400 ms were credited to the cgroup too)."""
    _, cpu = allowed_cpus(2)
    cg = Cgroup("filter", "move")
    pin = ["taskset", "-c", str(cpu)]
    enter = f'echo $$ > "{cg.path}/cgroup.procs" && exec "$0" "$@"'
    try:
        rec = Filtered(cg, ["task-clock"])
        u0 = cg.usage_ns() / 1e9
        subprocess.run(pin + ["sh", "-c", enter, WORK, "burn", "50"], check=True,
                       capture_output=True)
        subprocess.run(pin + [WORK, "burn", "400"], check=True, capture_output=True)
        subprocess.run(pin + ["sh", "-c", enter, WORK, "burn", "100"], check=True,
                       capture_output=True)
        time.sleep(0.6)
        truth_s = cg.usage_ns() / 1e9 - u0
        got = rec.stop()
    finally:
        cg.remove()
    assert truth_s >= 0.15, truth_s
    # each burn process also execs and exits: a few ms that cpu.stat counts too
    assert abs(got["oncpu_s"] - truth_s) <= 0.005 * truth_s + 0.002, (got, truth_s)
    assert abs(got["task-clock"] / 1e9 - truth_s) <= 0.02 * truth_s + 0.005, (got, truth_s)
