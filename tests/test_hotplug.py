# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""CPU hotplug under pmbpf record: a CPU goes offline and comes back."""
import json
import os
import subprocess
import time

import pytest

from conftest import WORK, allowed_cpus, collections, count_slack, init_switch_ins, needs_root

PAGES = 5000


def online_file(cpu):
    return f"/sys/devices/system/cpu/cpu{cpu}/online"


def set_online(cpu, v):
    with open(online_file(cpu), "w") as f:
        f.write(v)


def touch_on(cpu):
    """work touch PAGES pinned to cpu; returns its report (pid, getrusage)."""
    p = subprocess.run(["taskset", "-c", str(cpu), WORK, "touch", str(PAGES)], check=True,
                       capture_output=True, text=True)
    return json.loads(p.stdout.splitlines()[0])


def assert_credited(rec, truth):
    # on-CPU time: the kernel's, read by the workload as it ends (its exit
    # path comes after that: up to 1 ms)
    oncpu = rec.total(truth["pid"], "oncpu_ns")
    assert truth["cpu_ns"] <= oncpu <= truth["cpu_ns"] * 1.005 + 1e6, (oncpu, truth)
    credited = rec.total(truth["pid"], "page-faults")
    kernel = truth["minflt"] + truth["majflt"]
    # as test_page_faults_credited: the exit path faults after getrusage
    assert PAGES <= credited <= PAGES * 1.02 + 200, (credited, truth)
    assert abs(credited - kernel) <= 0.01 * kernel + 50, (credited, kernel)


@needs_root
def test_cpu_offline_and_back(recorder, host):
    """Counts on a CPU (the first this test may run on) while another (the
    second) is offline are exact; the other counts again after its return
    (its counters died and are reopened); every interval conserves, and its
    offline time is cpu_offline_ns, no row's. At rest and with the host busy
    (conftest's host: a spinner per CPU and a fork storm). The CPU taken
    offline is never CPU 0 (the second allowed CPU is above the first), nor
    one this test may not use."""
    stay, down = allowed_cpus(2)
    if not os.access(online_file(down), os.W_OK):
        pytest.skip(f"{online_file(down)} missing or not writable")
    init0 = init_switch_ins()
    rec = recorder("-e", "page-faults,context-switches", "-i", "0.3")
    rec.wait_intervals(1)
    try:
        down0 = time.monotonic_ns()
        set_online(down, "0")
        down1 = time.monotonic_ns()
        during = touch_on(stay)
        rec.wait_intervals(1)
    finally:
        up0 = time.monotonic_ns()
        set_online(down, "1")
        up1 = time.monotonic_ns()
    # one read sees the CPU's counters stopped and reopens them
    rec.wait_intervals(2)
    after = touch_on(down)
    rec.wait_intervals(2)
    recs = rec.stop()
    # switches away from the host init's threads: in ctxt, never reported to
    # the switch program (conftest.init_switch_ins), 3-20 in a 0.3 s interval
    unreported = init_switch_ins() - init0
    assert_credited(rec, during)
    assert_credited(rec, after)
    systems = [r for r in recs if r["type"] == "system"]
    # as test_conservation: what counts while pmbpf's own collections run
    # (flush and read apart) may fall on either side of an interval's end
    _, jitter = collections(systems)
    for ev in ("page-faults", "context-switches"):
        rates = [s["events"][ev]["raw"] / (s["interval_s"] * 1e9) for s in systems]
        run_credited = run_total = 0
        for i, s in enumerate(systems):
            rows = [r for r in recs if r["type"] == "process" and r["time"] == s["time"]]
            total = s["events"][ev]["raw"]
            credited = sum(r["events"][ev]["raw"] for r in rows)
            run_credited += credited
            run_total += total
            # context-switches is counted by the switch program, its system
            # figure is /proc/stat's ctxt: the switches a CPU makes as it
            # goes down, after its last flush, are in ctxt at once but
            # credited at that CPU's first switch once it is back (a later
            # interval); so around a change of the online CPUs, the run's sum
            # is checked instead
            changed = s["cpus"] != systems[i - 1]["cpus"] if i else False
            if ev == "context-switches" and (changed or s["cpus"] < max(x["cpus"] for x in systems)):
                continue
            # the switches not reported can be short (in no interval more
            # than the run's), never over
            short = unreported if ev == "context-switches" else 0
            bound = 0.005 * total + count_slack(rates, jitter, i, s["cpus"])
            assert total - bound - short <= credited <= total + bound, \
                (s["time"], ev, credited, total, s["poll_ms"], short)
        slack = sum(count_slack(rates, jitter, i, s["cpus"]) for i, s in enumerate(systems))
        short = unreported if ev == "context-switches" else 0
        assert run_total - 0.005 * run_total - slack - short <= run_credited \
            <= run_total + 0.005 * run_total + slack, (ev, run_credited, run_total, short)
    full = max(x["cpus"] for x in systems)
    assert any(s["cpus"] == full - 1 for s in systems), f"no interval saw CPU {down} offline"
    # on-CPU time, idle included, plus what no task was charged: CPUs x interval
    # (test_record's test_conservation) in every interval with all CPUs online
    # since the previous one; the interval the CPU goes down in reads as its
    # next one: a CPU less
    checked = 0
    run_credited = run_expect = 0
    for i, s in enumerate(systems):
        rows = [r for r in recs if r["type"] == "process" and r["time"] == s["time"]]
        gap = s["oncpu_unattributed_ns"] - (systems[i - 1]["oncpu_unattributed_ns"] if i else 0)
        off = s["cpu_offline_ns"] - (systems[i - 1]["cpu_offline_ns"] if i else 0)
        oncpu = sum(r["oncpu_ns"] for r in rows) + gap
        expect = s["interval_s"] * 1e9 * s["cpus"]
        # never more than the CPUs' time: the CPU's offline time is nobody's
        # (its idle task was credited it at its first switch once back,
        # +262 ms in a 0.3 s interval; then the stopper, +1037 ms)
        assert oncpu <= s["interval_s"] * 1e9 * full * 1.005 + jitter[i], (i, oncpu, s)
        # the offline time is counted at the CPU's first switch once back: so
        # from the start, every CPU's time is in a row, unattributed or
        # offline, never more, and all of it once it is back
        run_credited += oncpu + off
        run_expect += s["interval_s"] * 1e9 * full
        assert run_credited <= run_expect * 1.005 + jitter[0] + jitter[i], (i, run_credited, run_expect)
        if any(x["cpus"] < full for x in systems[max(0, i - 2):i + 1]):
            continue
        assert abs(oncpu - expect) <= 0.005 * expect + jitter[i], (i, oncpu, expect)
        assert abs(run_credited - run_expect) <= 0.005 * run_expect + jitter[0] + jitter[i], \
            (i, run_credited, run_expect)
        checked += 1
    assert checked >= 3, checked
    # from the offline CPU's last switch before it is marked offline (within the write
    # of 0) to its first once back (within the write of 1)
    offline = systems[-1]["cpu_offline_ns"] - systems[0]["cpu_offline_ns"]
    assert up0 - down1 <= offline <= up1 - down0, (offline, up0 - down1, up1 - down0)
