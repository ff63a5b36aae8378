# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Many live tasks against ground truth (issue 35): every process (--threads:
every thread) has its own row with its own page faults, none in [overflow],
with the shared counts map's default capacity (65,536); where the map is too
small, the credits stay in their cgroup (its [overflow] row) and say so."""
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time

import pytest

import conftest
from conftest import PMBPF, WORK, Cgroup, needs_root

pytestmark = needs_root

PAGES = 20


def system_stats(recs):
    return [r for r in recs if r["type"] == "system"]


def task_state(pid):
    """The state letter of /proc/PID/stat (None: gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def rows_by_pid(recs, cgroup):
    """pid: [(interval, overflow, exited, page faults)] of cgroup's process rows."""
    out, i = {}, 0
    for r in recs:
        if r["type"] == "system":
            i += 1
        elif r["type"] == "process" and r["cgroup"] == cgroup:
            out.setdefault(r["pid"], []).append(
                (i, r["overflow"], r.get("exited"), r["events"]["page-faults"]["raw"]))
    return out


def children_of(proc):
    """The workload's child pids ({"child": PID} lines), then its report."""
    kids = []
    for line in proc.stdout:
        rec = json.loads(line)
        if "child" in rec:
            kids.append(rec["child"])
        else:
            return kids, rec
    raise AssertionError("workload ended without its report")


def exited_lives(recs):
    """pid -> page faults of the last life of that pid that exited in the
    session: a pid is reused once pid_max wraps (12,000 children: in a CI
    run one child's pid had an earlier life in the session, 243 faults in
    all), and a life ends at its exited row."""
    lives, done = {}, {}
    for r in recs:
        if r["type"] == "process" and r["pid"] is not None:
            pid = r["pid"]
            lives[pid] = lives.get(pid, 0) + r["events"]["page-faults"]["raw"]
            if r["exited"]:
                done[pid] = lives.pop(pid)
    return done


def test_12000_processes_each_their_own_row(recorder):
    """12,000 live processes, each touching PAGES fresh pages: each has a row of
    its own (not [overflow]) whose page faults are at least PAGES and at most
    PAGES + 60 (a forked child's own faults: its stack, the copy-on-write of
    the pages it writes); 0 overflow credits, no exit lost."""
    n = 12000
    rec = recorder("-e", "page-faults", "-i", "1")
    rec.wait_intervals(1)
    proc = subprocess.Popen([WORK, "fleet", str(n), str(PAGES), "4"], stdout=subprocess.PIPE,
                            text=True)
    kids, report = children_of(proc)
    proc.wait()
    rec.wait_intervals(2, timeout=60)
    recs = rec.stop()
    assert len(kids) == n
    faults = exited_lives(recs)
    systems = system_stats(recs)
    last = systems[-1]
    assert last["overflow_credits"] == 0, last
    assert last["exit_records_lost"] == 0, last
    assert not [r for r in recs if r["type"] == "process" and r["overflow"]]
    missing = [k for k in kids if k not in faults]
    assert not missing, (len(missing), missing[:10])
    off = {k: faults[k] for k in kids if not PAGES <= faults[k] <= PAGES + 60}
    assert not off, (len(off), list(off.items())[:10])
    print("12,000 processes: map_entries max %d, capacity %d, map memory %d B, poll_ms max %.1f"
          % (max(s["map_entries"] for s in systems), last["map_capacity"],
             last["map_memory_bytes"], max(s["poll_ms"] for s in systems)))


def test_20000_threads_each_their_own_row(recorder):
    """--threads: 20,000 live threads of one process, each touching PAGES pages:
    each thread has a row of its own with at least PAGES page faults; the
    process's row is the sum of its threads' and equals the kernel's count of
    the process (minflt + majflt at its report, within 0.5% + 200: faults
    after the report, its exit); 0 overflow credits."""
    n = 20000
    rec = recorder("-e", "page-faults", "-i", "1", "--threads")
    rec.wait_intervals(1)
    proc = subprocess.Popen([WORK, "threads", str(n), str(PAGES), "3"], stdout=subprocess.PIPE,
                            text=True)
    truth = json.loads(proc.stdout.readline())
    proc.wait()
    rec.wait_intervals(2, timeout=60)
    recs = rec.stop()
    pid = truth["pid"]
    threads = {}
    for r in recs:
        if r["type"] == "thread" and r["pid"] == pid:
            threads[r["tid"]] = threads.get(r["tid"], 0) + r["events"]["page-faults"]["raw"]
    last = system_stats(recs)[-1]
    assert last["overflow_credits"] == 0, last
    assert last["exit_records_lost"] == 0, last
    # the workload's n threads and its main thread
    assert len(threads) >= n, len(threads)
    few = [t for t, f in threads.items() if t != pid and f < PAGES]
    assert not few, (len(few), few[:10])
    total = rec.total(pid, "page-faults")
    assert total == sum(threads.values()), (total, sum(threads.values()))
    kernel = truth["minflt"] + truth["majflt"]
    assert kernel <= total <= kernel * 1.005 + 200, (total, kernel)


def test_overflow_stays_in_its_cgroup(recorder):
    """-m 64 with 300 processes in a cgroup (the issue's case: the cgroup's row
    had 24% of its page faults, the rest in a cgroup-less [overflow] row): the
    cgroup's page faults equal its processes' own (the workload's and its
    children's rusage, within 1% + 100), most of them from the cgroup's own
    [overflow] row; the cgroup record says overflow, and the start-up warning
    names the capacity."""
    cg = Cgroup("scale", "ovf")
    table = tempfile.TemporaryFile("w+")
    tab = None
    try:
        rec = recorder("-e", "page-faults", "-i", "0.5", "-m", "64", "-b", "all",
                       "-G", cg.path)
        # the same in the table: its PROCS cell says "+"
        tab = subprocess.Popen([PMBPF, "record", "-o", "table", "-e", "page-faults", "-i", "0.5",
                                "-m", "64", "-b", "cgroup", "-G", cg.path],
                               stdout=table, stderr=subprocess.DEVNULL)
        # its first interval printed: attached before the workload starts (a
        # late start under load saw the children only at their exits)
        deadline = time.monotonic() + 60
        while not os.fstat(table.fileno()).st_size and time.monotonic() < deadline:
            assert tab.poll() is None, "pmbpf record -o table exited %s" % tab.returncode
            time.sleep(0.05)
        rec.wait_intervals(1)
        proc = subprocess.Popen([WORK, "fleet", "300", "100", "1"], stdout=subprocess.PIPE,
                                text=True, env=dict(os.environ, WORK_CGROUP=cg.path))
        kids, report = children_of(proc)
        proc.wait()
        time.sleep(0.2)
        rec.wait_intervals(2)
        recs = rec.stop()
        tab.send_signal(signal.SIGINT)
        tab.wait(timeout=30)
    finally:
        if tab and tab.poll() is None:
            tab.kill()
            tab.wait()
        cg.remove()
    rows = [r for r in recs if r["type"] == "cgroup" and r["cgroup"] == cg.rel]
    assert rows, [r for r in recs if r["type"] == "cgroup"][:3]
    got = sum(r["events"]["page-faults"]["raw"] for r in rows)
    # the workload's faults since it joined the cgroup (at its main(): a
    # preexec_fn's faults before its cgroup write varied, 325-549 in CI)
    truth = report["minflt"] + report["majflt"] - report["faults_main"] + report["children_faults"]
    assert abs(got - truth) <= 0.01 * truth + 100, (got, truth)
    assert any(r["overflow"] for r in rows), rows[-1]
    assert sum(r["overflow_processes"] for r in rows) > 0, rows
    table.seek(0)
    text = table.read()
    marked = [l for l in text.splitlines() if l.startswith(cg.rel) and l.split()[3].endswith("+")]
    assert marked and "PROCS +: processes that found the counts map full" in text, text[-3000:]
    ovf = [r for r in recs if r["type"] == "process" and r["overflow"]]
    assert ovf and {r["cgroup"] for r in ovf} == {cg.rel}, ovf[:3]
    assert system_stats(recs)[-1]["overflow_credits"] > 0


def test_overflow_count_ground_truth(recorder):
    """The overflow count against ground truth: -m CAP, and 1 + N processes of
    a cgroup (the workload and its N children) alive at once, each child
    touching PAGES fresh pages and then sleeping until every child exists;
    the workload waits in the cgroup, before its exec, until two reads have
    passed, so that it has its entry first (entries are made at the reads'
    folds, in the order of the per-CPU lists of threads that ran).
    The counts map holds CAP entries (the cgroup-less overflow entry is in
    the overflow map), and nothing else enters it (-G: only the
    cgroup's tasks are counted; no entry is freed while no process of the
    cgroup has exited), so exactly K = 1 + N - CAP processes find it full:
    overflow_processes, summed over the intervals, is K, and the 1 + N - K
    others each have a row of their own with their work in it (tolerance 0:
    both are counts of processes, not samples; at their exit every process
    gets an exit row, with nothing in it for those that overflowed). The
    overflowed children's work stays in their cgroup: its [overflow] row has
    their page faults, between K x PAGES and K x (PAGES + 60) (a forked
    child's own faults: its stack, the copy-on-write of what it writes, as
    in test_12000_processes_each_their_own_row), and the cgroup's page faults
    less the workload's own row are its children's (rusage, within
    1% + 10)."""
    cap, n, hold = 40, 100, 8
    cg = Cgroup("scale", "ovfk")

    gate_r, gate_w = os.pipe()

    def enter_and_wait():
        # the workload's entry before its first child's: it waits in the
        # cgroup before its exec (a switch: its credit, folded into the map
        # at the next read) until two reads have passed
        cg.enter()
        os.read(gate_r, 1)

    def open_gate():
        deadline = time.monotonic() + 60
        with open(cg.path + "/cgroup.procs") as f:
            while not f.read().strip() and time.monotonic() < deadline:
                time.sleep(0.01)
                f.seek(0)
        try:
            rec.wait_intervals(2)
        finally:
            os.write(gate_w, b"x")
    try:
        rec = recorder("-e", "page-faults", "-i", "0.5", "-m", str(cap), "-b", "all",
                       "-G", cg.path)
        rec.wait_intervals(1)
        gate = threading.Thread(target=open_gate, daemon=True)
        gate.start()
        proc = subprocess.Popen([WORK, "fleet", str(n), str(PAGES), str(hold)],
                                stdout=subprocess.PIPE, text=True, preexec_fn=enter_and_wait,
                                pass_fds=(gate_r,))
        gate.join(90)
        kids = []
        t0 = time.monotonic()
        for line in proc.stdout:
            kids.append(json.loads(line)["child"])
            if len(kids) == n:
                break
        forked_in = time.monotonic() - t0
        # every child alive at once: none has exited (hold s after its start)
        alive = [k for k in kids if task_state(k) not in (None, "Z", "X")]
        if len(alive) < n:
            proc.kill()
            proc.wait()
            pytest.skip("the host took %.1f s to fork %d children: %d had exited already, "
                        "so the map's entries were not held by live processes only"
                        % (forked_in, n, n - len(alive)))
        report = json.loads(proc.stdout.readline())
        proc.wait()
        time.sleep(0.2)
        rec.wait_intervals(2)
        recs = rec.stop()
    finally:
        for fd in (gate_r, gate_w):
            try:
                os.close(fd)
            except OSError:
                pass
        cg.remove()
    k = 1 + n - cap
    rows = [r for r in recs if r["type"] == "cgroup" and r["cgroup"] == cg.rel]
    assert rows, [r for r in recs if r["type"] == "cgroup"][:3]
    counted = sum(r["overflow_processes"] for r in rows)
    own = {r["pid"] for r in recs if r["type"] == "process" and r["cgroup"] == cg.rel
           and not r["overflow"] and not r.get("exited") and r["events"]["page-faults"]["raw"]}
    assert counted == k, (counted, k, len(own))
    assert len(own) == 1 + n - k, (len(own), 1 + n - k, rows_by_pid(recs, cg.rel))
    assert report["pid"] in own and own <= set(kids) | {report["pid"]}, (
        report["pid"], rows_by_pid(recs, cg.rel).get(report["pid"]), own)
    ovf = sum(r["events"]["page-faults"]["raw"] for r in recs
              if r["type"] == "process" and r["overflow"] and r["cgroup"] == cg.rel)
    assert k * PAGES <= ovf <= k * (PAGES + 60), (ovf, k)
    # the children's faults all happen in the cgroup (the workload's began
    # before it entered it, as python's child): the cgroup's less the
    # workload's own row are the children's (wait4's rusage)
    parent = sum(r["events"]["page-faults"]["raw"] for r in recs
                 if r["type"] == "process" and r["pid"] == report["pid"])
    got = sum(r["events"]["page-faults"]["raw"] for r in rows) - parent
    truth = report["children_faults"]
    assert abs(got - truth) <= 0.01 * truth + 10, (got, truth)


# the per-CPU mode's overflow map: its cgroups' entries (user/collect/session.c)
OVERFLOW_PERCPU_CGROUPS = 64


def test_cgroup_less_overflow_conserves_page_faults(recorder):
    """The last resort, against ground truth: -m 16 with --thread-fold=off
    (the per-CPU maps, whose overflow map holds 64 cgroups' entries and the
    cgroup-less one) and N = 90 processes, each in a cgroup of its own, all
    alive at once (each waits on its stdin in its cgroup, then touches PAGES
    fresh pages once). 16 find room in the counts map, the next 64 each in
    their cgroup's [overflow] row, and the last 10 in the cgroup-less one
    (pid, cgroup null, cgroup_id 0): counts of processes, tolerance 0, as in
    test_overflow_count_ground_truth. The page faults are conserved: the
    rows of the N cgroups (their own and their [overflow] rows) plus the
    cgroup-less row are the processes' own (rusage since each joined its
    cgroup, within 0.5% + 1 a process: less than one process's work), the
    cgroup-less row at least its 10 processes' PAGES each. The table says
    where they are in a note."""
    n, cap, pages = 90, 16, 300
    nocg_procs = n - cap - OVERFLOW_PERCPU_CGROUPS
    cg = Cgroup("scale", "nocg")
    subs, procs = [], []
    table = tempfile.TemporaryFile("w+")
    tab = None
    args = ["-e", "page-faults", "-i", "0.5", "-m", str(cap), "--thread-fold=off", "-b", "all",
            "-G", cg.path]
    try:
        rec = recorder(*args)
        tab = subprocess.Popen([PMBPF, "record", "-o", "table"] + args, stdout=table,
                               stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while not os.fstat(table.fileno()).st_size and time.monotonic() < deadline:
            assert tab.poll() is None, "pmbpf record -o table exited %s" % tab.returncode
            time.sleep(0.05)
        rec.wait_intervals(1)
        for i in range(n):
            subs.append(f"{cg.path}/c{i}")
            os.mkdir(subs[-1])
            procs.append(subprocess.Popen([WORK, "gate", str(pages), "0.05"],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          text=True, env=dict(os.environ, WORK_CGROUP=subs[-1])))
        # each in its cgroup (it joins before this line), none gone
        for p in procs:
            assert json.loads(p.stdout.readline())["what"] == "ready"
        rec.wait_intervals(1)
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.close()
        reports = [json.loads(p.stdout.readline()) for p in procs]
        for p in procs:
            p.wait(timeout=60)
        rec.wait_intervals(2)
        recs = rec.stop()
        tab.send_signal(signal.SIGINT)
        tab.wait(timeout=30)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if tab and tab.poll() is None:
            tab.kill()
            tab.wait()
        for d in subs:
            conftest.rmdir_retry(d)
        cg.remove()
    rows = [r for r in recs if r["type"] == "process"]
    ours = [r for r in rows if (r["cgroup"] or "").startswith(cg.rel + "/")]
    nocg = [r for r in rows if r["overflow"] and r["cgroup_id"] == 0]
    assert len(ours) + len(nocg) == len(rows), [r for r in rows if r not in ours + nocg][:3]
    cg_ovf = [r for r in ours if r["overflow"]]
    assert len({r["cgroup"] for r in cg_ovf}) == OVERFLOW_PERCPU_CGROUPS, cg_ovf[:3]
    assert sum(r["folded_processes"] for r in cg_ovf) == OVERFLOW_PERCPU_CGROUPS, cg_ovf[:3]
    assert nocg and all(r["pid"] is None and r["cgroup"] is None and r["comm"] == "[overflow]"
                        for r in nocg), nocg[:2]
    assert sum(r["folded_processes"] for r in nocg) == nocg_procs, nocg
    faults = lambda rs: sum(r["events"]["page-faults"]["raw"] for r in rs)
    truth = sum(r["minflt"] + r["majflt"] - r["faults_main"] for r in reports)
    got = faults(ours) + faults(nocg)
    assert abs(got - truth) <= 0.005 * truth + n, (got, truth, faults(nocg))
    assert nocg_procs * pages <= faults(nocg) <= nocg_procs * (pages + 60), faults(nocg)
    table.seek(0)
    text = table.read()
    assert re.search(r"^ +- \[overflow\] +- ", text, re.M), text[-3000:]
    new = re.findall(r"^\(\[overflow\] in cgroup -: processes \((\d+) new\) that found the "
                     r"counts map full", text, re.M)
    assert new and sum(map(int, new)) == nocg_procs, (new, text[-3000:])
def test_exited_entries_make_room(recorder):
    """An exited process's entry makes room at once: -m 16 and 300 processes
    of a cgroup, one at a time (work spawn: each touches PAGES pages and
    exits, then the next starts), so at most two are alive at any time. With
    the shared counts map an entry is a slot that goes back on free_slots at
    the exit (kept until a later read, 300 processes would fill 16 slots in
    the first interval). Every child has a row of its own with its own page
    faults (wait4's rusage, exact: the fork's and exit's faults are the
    child's own), and no credit finds the map full."""
    n = 300
    cg = Cgroup("scale", "reuse")
    try:
        rec = recorder("-e", "page-faults", "-i", "0.3", "-m", "16", "-b", "all",
                       "-G", cg.path)
        rec.wait_intervals(1)
        proc = subprocess.Popen([WORK, "spawn", str(n), str(PAGES)], stdout=subprocess.PIPE,
                                text=True, env=dict(os.environ, WORK_CGROUP=cg.path))
        kids = {}
        for line in proc.stdout:
            r = json.loads(line)
            if "child" in r:
                kids[r["child"]] = r["minflt"] + r["majflt"]
        assert proc.wait() == 0
        rec.wait_intervals(2)
        recs = rec.stop()
    finally:
        cg.remove()
    assert len(kids) == n
    rows = rows_by_pid(recs, cg.rel)
    assert not [r for r in recs if r["type"] == "process" and r["overflow"]]
    assert system_stats(recs)[-1]["overflow_credits"] == 0, system_stats(recs)[-1]
    missing = [pid for pid in kids if pid not in rows]
    assert not missing, (len(missing), missing[:5])
    wrong = [(pid, sum(x[3] for x in rows[pid]), want) for pid, want in kids.items()
             if sum(x[3] for x in rows[pid]) != want]
    # A switch the kernel did not report (this VM's, while a thread of its
    # init is current: test_oncpu's test_unmatched_spans_...) leaves the
    # span before it to the task seen switching in last, the spawner here:
    # at most one child short per such span (seen under a loaded host: 1-3
    # of 25 runs, 12 of a child's 39 faults in its row, the rest in the
    # spawner's, spans_unmatched 1). Otherwise every child exact.
    unmatched = system_stats(recs)[-1]["spans_unmatched"]
    assert len(wrong) <= unmatched, (len(wrong), wrong[:5], unmatched)
    assert all(got < want for _, got, want in wrong), wrong
