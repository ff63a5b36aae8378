# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""pmbpf record against ground truth the tests create (software events: no PMU here)."""
import bisect
import csv
import datetime
import json
import io
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import (PMBPF, WORK, allowed_cpus, catches, collections, count_slack,
                      final_figures, needs_root, work)

pytestmark = needs_root

SW = "page-faults,cpu-clock,task-clock,context-switches"


@pytest.mark.parametrize("attach", ["tp_btf", "raw_tp"])
def test_page_faults_credited(recorder, attach):
    """A child that touches N fresh pages is credited N page faults."""
    pages = 20000
    args = ["-e", "page-faults", "-i", "0.25"] + (["--raw-tp"] if attach == "raw_tp" else [])
    rec = recorder(*args)
    truth = work("touch", pages)[0]
    recs = rec.stop()
    assert recs[0]["attach"] == attach
    rows = rec.rows(truth["pid"])
    assert rows, ("workload not reported", truth, recs, rec.stderr)
    assert rows[-1]["exited"] is True
    credited = rec.total(truth["pid"], "page-faults")
    kernel = truth["minflt"] + truth["majflt"]
    # Faults after the workload's own getrusage (exit path) are few.
    assert pages <= credited <= pages * 1.02 + 200
    assert abs(credited - kernel) <= 0.01 * kernel + 50, (credited, kernel)


def test_voluntary_switches(recorder):
    """A child that sleeps K times is credited K voluntary switches."""
    k = 200
    rec = recorder("-e", "task-clock", "-i", "0.25")
    truth = work("sleep", k, 2000)[0]
    rec.stop()
    credited = rec.total(truth["pid"], "voluntary_switches")
    # /proc's count is read before the final switch out at exit.
    assert k <= credited <= truth["nvcsw"] + 3, (credited, truth)


def test_cpu_burn_time_and_cpu_pct(recorder):
    """A child that burns T ms of CPU is credited T ms of on-CPU, cpu-clock and task-clock.

    The ground truth is the kernel's final figure of the child (read while it is
    a zombie), so its exit path is in it too; the child exits in the middle of
    an interval, and the row that carries its end says so (`exited`). (pmbpf
    credits the clock events from the spans that oncpu_ns measures: each is
    compared with the kernel's clock here, never with oncpu_ns.)
    """
    ms = 600
    rec = recorder("-e", "cpu-clock,task-clock", "-i", "0.4")
    rec.wait_intervals(1)
    time.sleep(0.1)  # away from an interval boundary
    (truth,), kernel = final_figures(subprocess.Popen([WORK, "burn", str(ms)],
                                                      stdout=subprocess.PIPE, text=True))
    rec.wait_intervals(2)
    rec.stop()
    pid = truth["pid"]
    cpu_ns = kernel["oncpu_ns"]  # sum_exec_runtime, at the exit
    assert cpu_ns >= ms * 1e6
    rows = rec.rows(pid)
    assert [r["exited"] for r in rows] == [False] * (len(rows) - 1) + [True], rows
    for field in ("oncpu_ns", "cpu-clock", "task-clock"):
        got = rec.total(pid, field)
        assert abs(got - cpu_ns) <= 0.01 * cpu_ns + 1e6, (field, got, cpu_ns)
    pct_seconds = sum(r["cpu_pct"] * r["interval_s"] / 100 for r in rows)
    assert abs(pct_seconds * 1e9 - cpu_ns) <= 0.01 * cpu_ns + 1e6, (pct_seconds, cpu_ns)


def test_conservation(recorder):
    """Per interval, the sum over all entries equals the system-wide count (0.5%)."""
    rec = recorder("-e", SW, "-i", "0.5")
    work("spawn", 100, 300)
    work("burn", 300)
    work("sleep", 100, 1000)
    rec.wait_intervals(1)
    recs = rec.stop()
    systems = [r for r in recs if r["type"] == "system"]
    assert len(systems) >= 2
    checked = 0
    all_oncpu = all_expect = 0
    polls, jitter = collections(systems)
    rates = {ev: [s["events"][ev]["raw"] / (s["interval_s"] * 1e9) for s in systems]
             for ev in SW.split(",")}
    for i, s in enumerate(systems):
        rows = [r for r in recs if r["type"] == "process" and r["time"] == s["time"]]
        for ev in SW.split(","):
            total = s["events"][ev]["raw"]
            credited = sum(r["events"][ev]["raw"] for r in rows)
            if total == 0:
                assert credited == 0
                continue
            # Each CPU's credits end at its flush; its counter is read (and the
            # interval's end is timed) after all flushes: all within the
            # collection at each end of the interval, whose duration pmbpf
            # reports (poll_ms, about 0.4 ms; tens of ms when pmbpf itself is
            # kept off the CPU on a busy host: 18 ms of cpu-clock and 106 page
            # faults off were seen at load 7). What counts in that time is in
            # one interval's total and the next one's credits: a clock counts
            # 1 ns/ns on each CPU; other events at up to twice the highest rate
            # of this and the next interval.
            if ev.endswith("clock"):
                slack = jitter[i]
            else:
                slack = count_slack(rates[ev], jitter, i, s["cpus"])
            assert abs(credited - total) <= 0.005 * total + slack, (ev, credited, total)
            checked += 1
        # all CPUs' time, idle included, and the time no task was charged
        # (cumulative in the system record), within the same collections' time
        gap = s["oncpu_unattributed_ns"] - (systems[i - 1]["oncpu_unattributed_ns"] if i else 0)
        oncpu = sum(r["oncpu_ns"] for r in rows) + gap
        expect = s["interval_s"] * 1e9 * s["cpus"]
        assert abs(oncpu - expect) <= 0.005 * expect + jitter[i], (oncpu, expect, s["poll_ms"])
        all_oncpu += oncpu
        all_expect += expect
    assert checked >= 4
    # a collection's time moves credit from one interval to the next: over the
    # whole run only the two ends' remain, so the total is checked tighter
    ends = (polls[0] + polls[-1]) * 1e6 * systems[0]["cpus"]
    assert abs(all_oncpu - all_expect) <= 0.0005 * all_expect + ends + 200e3, \
        (all_oncpu, all_expect, ends)


def test_short_lived_processes_all_reported(recorder):
    """500 processes that touch N pages and exit between two reads each show
    their own page faults: the kernel's count of each, from wait4()."""
    n, pages = 500, 200
    rec = recorder("-e", "page-faults", "-i", "2")
    out = work("spawn", n, pages)
    recs = rec.stop()
    children = {o["child"]: o["minflt"] + o["majflt"] for o in out if "child" in o}
    assert len(children) == n
    by_pid = {}
    for r in recs:
        if r["type"] == "process" and r["pid"] in children:
            by_pid.setdefault(r["pid"], []).append(r)
    missing = [c for c in children if c not in by_pid]
    assert not missing, f"{len(missing)} children not reported"
    for pid, rows in by_pid.items():
        assert sum(1 for r in rows if r["exited"]) == 1, rows
        faults = sum(r["events"]["page-faults"]["raw"] for r in rows)
        # the kernel's count ends with the exit's last fault; the fork's own
        # copy-on-write faults are the child's in both
        assert pages <= faults and abs(faults - children[pid]) <= 2, (pid, faults, children[pid])
    sysrec = [r for r in recs if r["type"] == "system"][-1]
    assert sysrec["exit_records_lost"] == 0


def iso_ns(stamp):
    """A record's time (UTC, milliseconds) in ns since the epoch."""
    t = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ")
    return t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1e9


def test_pinned_busy_loop_steady(recorder, tmp_path):
    """A task that never switches out shows its real share in every interval.

    Without the flush before each read it would show zero, then a spike. The
    ground truth per interval is the task's own CPU clock, which it logs every
    millisecond with the time of day: read at the times of the interval's two
    records (to the millisecond they carry). The task runs at a real-time
    priority: on a busy machine a normal one is switched out every few ms (6%
    of a CPU was seen at load 7), and then the flush is not what is tested.
    """
    # pmbpf on one CPU, the real-time spinner alone on another
    home, spin_cpu = allowed_cpus(2)
    trace = tmp_path / "trace"
    rec = recorder("-e", "task-clock", "-i", "0.5", cpu=home)
    proc = subprocess.run(["chrt", "-f", "1", "taskset", "-c", str(spin_cpu), WORK, "spin",
                           "3.2", str(trace)], stdout=subprocess.PIPE, text=True, check=True)
    rec.stop()
    pid = int(re.search(r'"pid":(\d+)', proc.stdout).group(1))
    log = [tuple(map(float, l.split())) for l in trace.read_text().splitlines()]
    times = [t for t, _ in log]

    def cpu_at(t):
        i = bisect.bisect_left(times, t)
        return log[i][1] if 0 < i < len(log) else None

    systems = rec.of_type("system")
    checked = 0
    for prev, end in zip(systems, systems[1:]):
        t0, t1 = iso_ns(prev["time"]), iso_ns(end["time"])
        c0, c1 = cpu_at(t0), cpu_at(t1)
        if c0 is None or c1 is None:
            continue  # not running all through this interval
        truth = (c1 - c0) / (t1 - t0) * 100
        rows = [r for r in rec.rows(pid) if r["time"] == end["time"]]
        assert rows or truth < 1.5, ("no row in an interval where it ran", truth)
        if not rows:
            continue  # (kept off its CPU: seen once, at load 7)
        got = rows[0]["cpu_pct"]
        # the records' times are to the ms: 2 ms in 500 ms; and each is taken
        # within its collection, whose flush may be up to its length (poll_ms)
        # away: a busy host stretches it (load 50: 2-9 points off with 1.5)
        slack = 1.5 + (prev["poll_ms"] + end["poll_ms"]) / (t1 - t0) * 1e6 * 100
        assert got >= 40 and abs(got - truth) <= slack, (got, truth, slack)
        # task-clock (per second of the interval) against the same ground truth
        tc = rows[0]["events"]["task-clock"]["raw"] / end["interval_s"] / 1e9 * 100
        assert abs(tc - truth) <= slack, (tc, truth, slack)
        checked += 1
    assert checked >= 3, checked


def test_pid_filter_and_perf_stat_agreement(recorder):
    """pmbpf -p agrees with perf stat -p on the same process within 2%. Both
    count before the work starts: pmbpf from its session record, perf from its
    acknowledgement of `enable` (it starts with its events disabled, -D -1;
    it was a fixed 0.5 s wait for perf's start, a race on a loaded host)."""
    gate = subprocess.Popen([WORK, "gate", "2000", "3"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    pid = int(re.search(r'"pid":(\d+)', gate.stdout.readline()).group(1))
    rec = recorder("-e", "page-faults,task-clock", "-i", "0.5", "-p", str(pid))
    ctl_r, ctl_w = os.pipe()
    ack_r, ack_w = os.pipe()
    try:
        perf = subprocess.Popen(["perf", "stat", "-x", ",", "-e", "page-faults,task-clock",
                                 "-D", "-1", "--control", f"fd:{ctl_r},{ack_w}", "-p", str(pid)],
                                stderr=subprocess.PIPE, text=True, pass_fds=(ctl_r, ack_w))
        os.close(ack_w)  # perf's alone: its exit ends the read below
        os.write(ctl_w, b"enable\n")
        with os.fdopen(ack_r, "rb") as ack:
            assert ack.readline().startswith(b"ack"), "perf stat did not acknowledge enable"
        gate.stdin.write("go\n")
        gate.stdin.flush()
        gate.communicate(timeout=30)
        perf_err = perf.communicate(timeout=30)[1]
    finally:
        os.close(ctl_r)
        os.close(ctl_w)
    rec.proc.wait(timeout=10)  # pmbpf -p stops when the process exits
    recs = rec.stop()
    assert {r["pid"] for r in recs if r["type"] == "process"} == {pid}
    stat = {}
    for line in perf_err.splitlines():
        f = line.split(",")
        if len(f) > 3 and f[2] in ("page-faults", "task-clock"):
            stat[f[2]] = float(f[0])
    assert set(stat) == {"page-faults", "task-clock"}, perf_err
    faults = rec.total(pid, "page-faults")
    assert abs(faults - stat["page-faults"]) <= 0.02 * stat["page-faults"], (faults, stat)
    tclock_ms = rec.total(pid, "task-clock") / 1e6
    assert abs(tclock_ms - stat["task-clock"]) <= 0.02 * stat["task-clock"] + 1, (tclock_ms, stat)


def test_exec_updates_comm(recorder):
    rec = recorder("-e", "task-clock", "-i", "0.25")
    out = subprocess.run(["sh", "-c", f"exec {WORK} burn 100"], capture_output=True,
                         text=True, check=True).stdout
    rec.stop()
    pid = int(re.search(r'"pid":(\d+)', out).group(1))
    assert rec.rows(pid)[-1]["comm"] == "work"


def test_no_pmu_never_prints_zero(recorder):
    """Hardware events that cannot be counted are null/'-', never 0."""
    probe = subprocess.run(["perf", "stat", "-e", "cycles", "true"], capture_output=True,
                           text=True)
    if "<not supported>" not in probe.stderr:
        pytest.skip("this host has a PMU: the no-PMU path is tested in the emulated guests")
    hw = "cycles,instructions,LLC-load-misses,dTLB-load-misses"
    rec = recorder("-i", "0.25", "-e", hw)  # (without -e: software events, see test_events)
    work("burn", 100)
    recs = rec.stop()
    events = {r["name"]: r for r in recs if r["type"] == "event"}
    assert set(events) == {"cycles", "instructions", "LLC-load-misses", "dTLB-load-misses"}
    assert all(e["state"] == "not-supported" for e in events.values())
    assert recs[0]["pmu"] is False
    rows = [r for r in recs if r["type"] == "process"]
    assert rows
    for r in rows:
        assert all(v is None for v in r["events"].values())
        assert r["ipc"] is None and all(v is None for v in r["mpki"].values())
        assert r["oncpu_ns"] > 0 or r["voluntary_switches"] + r["involuntary_switches"] > 0
    # the table says so in one line and shows dashes
    t = subprocess.run([PMBPF, "record", "-c", "1", "-i", "0.2", "-e", hw], capture_output=True,
                       text=True)
    assert t.returncode == 0
    assert "no hardware PMU" in t.stderr
    lines = [l for l in t.stdout.splitlines() if re.match(r"\s*\d+ ", l)]
    assert lines and all(" - " in l for l in lines)


@pytest.mark.parametrize("attach", ["tp_btf", "raw_tp"])
def test_context_switches_counted(recorder, attach):
    """context-switches is counted by the sched_switch program, not read from
    a counter: a process that sleeps N times is credited the kernel's own
    switch count of it (/proc/PID/status, read while it is a zombie, before
    or after its last switch-out), exactly its voluntary + involuntary
    switches, and what per-task perf stat counts for the same work (+-5)."""
    n = 200
    args = ["-e", "context-switches,page-faults", "-i", "0.25"] + \
        (["--raw-tp"] if attach == "raw_tp" else [])
    rec = recorder(*args)
    proc = subprocess.Popen([WORK, "sleep", str(n), "500"], stdout=subprocess.PIPE, text=True)
    (t,), kernel = final_figures(proc)
    rec.wait_intervals(1)
    recs = rec.stop()
    assert [r["state"] for r in recs if r["type"] == "event"] == ["counting"] * 2
    own = kernel["voluntary_ctxt_switches"] + kernel["nonvoluntary_ctxt_switches"]
    got = rec.total(proc.pid, "context-switches")
    assert got == rec.total(proc.pid, "voluntary_switches") + \
        rec.total(proc.pid, "involuntary_switches")
    assert n <= own <= got <= own + 1, (got, own)
    if shutil.which("perf"):
        p = subprocess.run(["perf", "stat", "-x", ",", "-e", "context-switches", "--", WORK,
                            "sleep", str(n), "500"], capture_output=True, text=True, check=True)
        ref = int(next(l for l in p.stderr.splitlines() if ",context-switches," in l)
                  .split(",")[0])
        # another run of the same work: on a busy host each has its own
        # preemptions (206 against 200 at load 50), so the involuntary switches,
        # the kernel's for pmbpf's run and the workload's rusage for perf's, are
        # left out of the comparison
        perf_nivcsw = json.loads(p.stdout.splitlines()[-1])["nivcsw"]
        assert abs((got - kernel["nonvoluntary_ctxt_switches"]) - (ref - perf_nivcsw)) <= 5, \
            (got, kernel, ref, perf_nivcsw)


def test_map_full_goes_to_overflow(recorder):
    """With room for 16 processes, the rest are folded into [overflow], nothing lost."""
    rec = recorder("-e", "page-faults", "-i", "0.5", "-m", "16")
    work("fleet", 60, 50, 1)
    rec.wait_intervals(1)
    recs = rec.stop()
    over = [r for r in recs if r["type"] == "process" and r["overflow"]]
    assert over and max(r["folded_processes"] for r in over) > 0
    systems = [r for r in recs if r["type"] == "system"]
    _, jitter = collections(systems)
    rates = [s["events"]["page-faults"]["raw"] / (s["interval_s"] * 1e9) for s in systems]
    for i, s in enumerate(systems):
        rows = [r for r in recs if r["type"] == "process" and r["time"] == s["time"]]
        total = s["events"]["page-faults"]["raw"]
        # as in test_conservation (101 faults off in 15,650 seen at load 7)
        assert abs(sum(r["events"]["page-faults"]["raw"] for r in rows) - total) <= \
            0.005 * total + count_slack(rates, jitter, i, s["cpus"]), (i, total, s["poll_ms"])
    assert recs[-1]["overflow_credits"] > 0


def test_csv_and_table_formats():
    c = subprocess.run([PMBPF, "record", "-e", SW, "-i", "0.2", "-c", "2", "-o", "csv"],
                       capture_output=True, text=True, check=True)
    rows = list(csv.reader(io.StringIO(c.stdout)))
    header = rows[0]
    assert header[:4] == ["time", "interval_s", "pid", "comm"]
    assert "page-faults" in header and "ipc" in header
    assert len(rows) > 2 and all(len(r) == len(header) for r in rows[1:])
    t = subprocess.run([PMBPF, "record", "-e", SW, "-i", "0.2", "-c", "1"],
                       capture_output=True, text=True, check=True)
    assert re.search(r"PID\s+COMM\s+CGROUP\s+CPU%\s+page-faults", t.stdout)


def test_sigterm_stops_cleanly():
    p = subprocess.Popen([PMBPF, "record", "-e", "task-clock", "-i", "10", "-o", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert '"session"' in p.stdout.readline()
    t0 = time.time()
    p.terminate()
    out, err = p.communicate(timeout=5)
    assert p.returncode == 0, err
    assert time.time() - t0 < 1.5
    assert '"system"' in out  # the partial interval is reported, not lost


def test_stop_signal_during_load_stops_as_after_it():
    """SIGINT while the BPF programs load. The verifier gives up at a pending
    signal (EAGAIN), and libbpf's retries with it: a stop signal then (or the
    stop timer it starts) failed both flavours, with "tp_btf programs failed
    to load; using raw_tp", then "cannot load BPF programs", exit 1 (seen on
    a starved host when a test stopped pmbpf during its start). The stop is
    now held until the load is done: pmbpf stops as one stopped just after
    it, exit 0 with its session and one collection, the flavour it picks
    unsignalled. SIGINT every 0.5 ms from the moment pmbpf has its handler
    (before its load) until it exits: the old build failed 3 runs of 3."""
    plain = subprocess.run([PMBPF, "record", "-e", "task-clock", "-i", "0.1", "-c", "1", "-o",
                            "json"], capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0, plain.stderr
    attach = json.loads(plain.stdout.splitlines()[0])["attach"]
    p = subprocess.Popen([PMBPF, "record", "-e", "task-clock", "-i", "10", "-o", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while p.poll() is None and not catches(p.pid, signal.SIGINT):
            assert time.monotonic() < deadline, "pmbpf took no SIGINT handler in 30 s"
            time.sleep(0.0005)
        sent = 0
        while p.poll() is None and time.monotonic() < deadline:
            os.kill(p.pid, signal.SIGINT)
            sent += 1
            time.sleep(0.0005)
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
        p.wait()
    assert sent, "pmbpf exited before its first SIGINT"
    assert p.returncode == 0, (sent, err)
    assert "raw_tp" not in err and "cannot load" not in err, err
    recs = [json.loads(line) for line in out.splitlines()]
    assert recs[0]["type"] == "session" and recs[0]["attach"] == attach, recs[:1]
    assert [r for r in recs if r["type"] == "system"], "no collection after the stop"


def spawn_with_pid(pid, args):
    """Start args as process pid (root: /proc/sys/kernel/ns_last_pid), or None."""
    for _ in range(50):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        if p.pid == pid:
            return p
        p.communicate()
    return None


def test_pid_reuse_does_not_merge(recorder):
    """Two processes with the same PID in one interval are two rows, each with its own counts."""
    rec = recorder("-e", "page-faults", "-i", "3")
    first = subprocess.Popen([WORK, "touch", "3000"], stdout=subprocess.PIPE, text=True)
    a = json.loads(first.communicate()[0])
    second = spawn_with_pid(a["pid"], [WORK, "touch", "7000"])
    if second is None:
        rec.stop()
        pytest.skip("could not get the same PID again (other forks raced)")
    b = json.loads(second.communicate()[0])
    recs = rec.stop()
    rows = [r for r in recs if r["type"] == "process" and r["pid"] == a["pid"]]
    assert len(rows) == 2 and all(r["exited"] for r in rows), rows
    faults = sorted(r["events"]["page-faults"]["raw"] for r in rows)
    assert 3000 <= faults[0] <= 3000 + 150 and 7000 <= faults[1] <= 7000 + 150, faults
    assert b["pid"] == a["pid"]


def test_eight_counters_at_once(recorder):
    """The maximum of 8 counters: all counting, consistent with each other."""
    events = ("cpu-clock,task-clock,page-faults,context-switches,cpu-migrations,"
              "minor-faults,major-faults,alignment-faults")
    rec = recorder("-e", events, "-i", "0.5")
    (truth,), kernel = final_figures(subprocess.Popen([WORK, "touch", "5000"],
                                                      stdout=subprocess.PIPE, text=True))
    rec.wait_intervals(1)
    recs = rec.stop()
    assert [r["state"] for r in recs if r["type"] == "event"] == ["counting"] * 8
    pf = rec.total(truth["pid"], "page-faults")
    assert pf == rec.total(truth["pid"], "minor-faults") + rec.total(truth["pid"], "major-faults")
    assert 5000 <= pf <= 5000 + 200
    # the clocks against the kernel's run time of the workload at its exit
    # (schedstat of the zombie): its own CPU clock, read before the exit, left
    # out the exit's freeing of its 5000 pages (3.9 ms more than the report's
    # 9.7 ms was seen in a CI-like run, against a slack of 2 ms)
    for clock in ("task-clock", "cpu-clock"):
        got = rec.total(truth["pid"], clock)
        assert truth["cpu_ns"] <= got, (clock, got, truth)
        assert abs(got - kernel["oncpu_ns"]) <= 0.01 * kernel["oncpu_ns"] + 1e6, \
            (clock, got, kernel, truth)


def test_migrations_credited(recorder):
    """A process that pins itself to the other of two CPUs N times is credited its
    moves: the scheduler's own count for it (se.nr_migrations, same run), and
    at least N - 1 (its first hop may land where it already is)."""
    allowed_cpus(2)  # work hop moves between the first two it may run on
    if not os.path.exists("/proc/self/sched"):
        pytest.skip("no /proc/PID/sched (kernel without CONFIG_SCHED_DEBUG)")
    rec = recorder("-e", "task-clock", "-i", "0.3")
    out = work("hop", 200, 1)
    rec.wait_intervals(1)
    rec.stop()
    kernel = next(l["nr_migrations"] for l in out if "nr_migrations" in l)
    pid = next(l["pid"] for l in out if "pid" in l)
    got = rec.total(pid, "migrations")
    assert kernel >= 199, out
    # the kernel counts every set_task_cpu(), pmbpf a switch-in on another CPU
    # than the last switch-out: two moves between two runs are one for pmbpf
    assert kernel - 2 <= got <= kernel, (got, kernel)


@pytest.mark.parametrize("attach,fold", [("tp_btf", "on"), ("tp_btf", "off"), ("raw_tp", "auto"),
                                         ("tp_btf-pidns", "on")])
def test_sleeping_threads_reported_while_alive(recorder, attach, fold):
    """4 threads touch N pages each, then sleep until the process exits 2 s
    later: their faults are in the process's rows before its exit (tp_btf
    keeps a thread's counts in its task storage, folded into the shared
    counts map at each read: from the per-CPU lists of threads that ran, by
    global thread id, or by a task iterator before 6.2), and counted once.
    In a pid namespace of its own, where a task iterator does not see the
    workload, pmbpf before 6.2 credits the per-CPU map at each switch
    instead. --thread-fold off forces the per-CPU map."""
    threads, pages = 4, 3000
    args = ["-e", "page-faults", "-i", "0.25", f"--thread-fold={fold}"] + \
        (["--raw-tp"] if attach == "raw_tp" else [])
    wrap = ["unshare", "--pid", "--fork", "--mount-proc"] if attach.endswith("pidns") else []
    rec = recorder(*args, wrap=wrap)
    proc = subprocess.Popen([WORK, "threads", str(threads), str(pages), "2"],
                            stdout=subprocess.PIPE, text=True)
    truth = json.loads(proc.stdout.readline())
    rec.wait_intervals(3)
    alive = [r for r in rec.rows(truth["pid"]) if not r["exited"]]
    before_exit = sum(r["events"]["page-faults"]["raw"] for r in alive)
    proc.wait()
    rec.wait_intervals(2)
    if wrap:  # unshare --fork does not pass signals on: stop pmbpf itself
        with open(f"/proc/{rec.proc.pid}/task/{rec.proc.pid}/children") as f:
            os.kill(int(f.read().split()[0]), signal.SIGINT)
    recs = rec.stop()
    assert recs[0]["attach"] == attach.split("-")[0]
    # the path the switches took: task storage only on tp_btf in the initial namespace
    folds = {r["thread_fold"] for r in recs if r["type"] == "system"}
    shared = attach == "tp_btf" or (attach == "tp_btf-pidns" and has_task_from_pid())
    assert folds == ({1} if shared and fold == "on" else {0}), folds
    assert threads * pages <= before_exit, (before_exit, truth, alive)
    total = rec.total(truth["pid"], "page-faults")
    kernel = truth["minflt"] + truth["majflt"]
    assert rec.rows(truth["pid"])[-1]["exited"] is True
    assert kernel <= total <= kernel + 200, (total, kernel)


def has_task_from_pid():
    """The kernel has the bpf_task_from_pid kfunc (doctor's task_from_pid)."""
    out = subprocess.run([PMBPF, "doctor", "-o", "json"], capture_output=True, text=True,
                         timeout=60)
    feats = json.loads(out.stdout)["features"]
    return any(f["name"] == "task_from_pid" and f["on"] for f in feats)


def test_thread_fold_stays_on_and_loses_nothing(recorder):
    """The shared counts map (tp_btf): switches credit task storage in a quiet
    moment and under a pipe benchmark (tens of thousands of switches per
    interval) alike, folded at each read; a process that runs across both
    is credited its page faults."""
    rec = recorder("-e", "page-faults", "-i", "0.25")
    rec.wait_intervals(1)
    gate = subprocess.Popen([WORK, "gate", "500", "2.5"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert json.loads(gate.stdout.readline())["what"] == "ready"
    gate.stdin.write("go\n")
    gate.stdin.flush()
    time.sleep(0.6)
    subprocess.run(["perf", "bench", "sched", "pipe", "-l", "150000"], check=True,
                   capture_output=True, timeout=120)
    truth = json.loads(gate.stdout.read().splitlines()[-1])
    gate.wait()
    rec.wait_intervals(2)
    recs = rec.stop()
    folds = [r["thread_fold"] for r in recs if r["type"] == "system"]
    unmatched = [r["spans_unmatched"] for r in recs if r["type"] == "system"]
    print("thread_fold by interval:", folds, "spans_unmatched:", unmatched[-1])
    assert set(folds) == {1}, folds
    kernel = truth["minflt"] + truth["majflt"]
    total = rec.total(truth["pid"], "page-faults")
    # With the pipe benchmark running, pmbpf misses 1 or 2 of the ~12,640
    # faults, whichever path the switches take, and so did the code before
    # task storage (7bad4a0, measured 3 times: -1, -1, -2): a span whose
    # switch-in the kernel did not report (spans_unmatched). What the fold
    # would lose is a whole interval's counts: hundreds of faults.
    assert kernel - 4 <= total <= kernel + 200, (total, kernel, folds, unmatched)


def test_runq_max_is_each_intervals_own(recorder):
    """The run-queue maximum is reset at each read: in every interval it lies
    in the highest slot of that interval's own histogram (slot k holds waits
    of [2^k, 2^(k+1)) us, slot 0 below 2 us). A sleeper at nice 19 shares
    one CPU with a nice -20 hog for its first 300 ms (waits of milliseconds),
    then naps 1 ms at a time alone there; a maximum carried over from the hog
    would stand above the later intervals' histograms."""
    cpu = max(os.sched_getaffinity(0))
    rec = recorder("-e", "task-clock", "-i", "0.2")
    sleeper = subprocess.Popen(["taskset", "-c", str(cpu), "nice", "-n", "19", WORK, "sleep",
                                "1500", "1000"], stdout=subprocess.PIPE, text=True)
    hog = subprocess.Popen(["taskset", "-c", str(cpu), "nice", "-n", "-20", WORK, "burn", "300"],
                           stdout=subprocess.PIPE, text=True)
    hog.communicate(timeout=60)
    (truth,), _ = final_figures(sleeper)
    rec.wait_intervals(1)
    rec.stop()
    rows = [r for r in rec.rows(truth["pid"]) if r["runq"]["count"]]
    assert len(rows) >= 4, rows
    tops = []
    for r in rows:
        q = r["runq"]
        hist = q["hist_log2_us"]
        top = max(i for i, c in enumerate(hist) if c)
        lo = (1 << top) * 1000 if top else 0
        assert lo <= q["max_ns"] < (2 << top) * 1000, (q, top)
        tops.append(top)
    # not vacuous: the waits behind the hog were longer than some later interval's
    if not any(t < max(tops[:2]) for t in tops[2:]):
        pytest.skip(f"the host kept the sleeper's waits long after the hog: slots {tops}")
