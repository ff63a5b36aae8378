# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""On-CPU time equals the kernel's own accounting (issue 30).

oncpu_ns is the scheduler's run time of each task (se.sum_exec_runtime, the
figure of /proc/PID/schedstat, of a cgroup's cpu.stat usage_usec and of
getrusage). Each scenario of the issue's table is run on a host at rest and
on a busy one (a spinner per CPU and a fork storm, started here), with
several recorders on the same work at once (unfiltered, -G, -p, --threads,
-i 1 and -i 5), each compared with the kernel's figure of the same work.
"""
import json
import subprocess
import time

import pytest

from conftest import (PMBPF, SPAWNER, WORK, Cgroup, FileRecord, cgroup2_mount, init_switch_ins,
                      needs_root)

pytestmark = needs_root

# Relative error allowed against the kernel's figure (the bar), plus
# what a flush's estimate of a running task may be ahead of the scheduler
# (nanoseconds to microseconds per flush; the interval's collections). Before
# issue 30 these scenarios were off by -0.6% to +0.4% (cgroups) here, and by
# up to +8.9% on the loaded host the issue measured.
REL = 0.005
ABS_NS = 1e6


class Rec(FileRecord):
    """A recorder of these scenarios (conftest's FileRecord)."""

    def lost(self):
        """pmbpf's own count of credits it could not place (the last system record)."""
        last = self.of("system")[-1]
        return last["overflow_credits"]


def start_all(*recs):
    for r in recs:
        r.wait_started()
    time.sleep(0.2)


def assert_close(got, truth, what):
    assert abs(got - truth) <= REL * truth + ABS_NS, \
        (what, got, truth, f"{100 * (got - truth) / truth:+.3f}%")


def cgroup_oncpu(rec, cg):
    return sum(r["oncpu_ns"] for r in rec.of("cgroup") if r["cgroup"] == cg.rel)


def test_process_churn_in_cgroup_matches_cpu_stat(host):
    """2,000 short-lived processes a minute in a cgroup: the cgroup's on-CPU time,
    unfiltered and with -G, within 0.5% of its cpu.stat."""
    cg = Cgroup("oncpu", "procs")
    try:
        recs = [Rec("-b", "cgroup", "-i", "1"), Rec("-b", "cgroup", "-i", "1", "-G", cg.path)]
        start_all(*recs)
        u0 = cg.usage_ns()
        sp = subprocess.run(["/usr/bin/python3", "-c", SPAWNER, WORK, "3"], preexec_fn=cg.enter,
                            capture_output=True, text=True, check=True)
        time.sleep(0.3)
        truth = cg.usage_ns() - u0
        for r in recs:
            r.stop()
    finally:
        cg.remove()
    assert json.loads(sp.stdout)["started"] >= 80, sp.stdout
    assert truth >= 0.1e9, truth
    for r in recs:
        assert_close(cgroup_oncpu(r, cg), truth, r.args)


def test_thread_churn_in_cgroup_matches_cpu_stat(host):
    """Short-lived threads in a cgroup (8 at a time, each burning 300 us): the
    cgroup's on-CPU time at -i 1 and -i 5, with and without --threads and -G, and
    the process's with -p (alone in the cgroup), within 0.5% of the cgroup's
    cpu.stat."""
    cg = Cgroup("oncpu", "threads")
    # 2 s: each recorder's exit records of one interval fit its ring buffer
    # (--threads sends one per thread; more than about 2,600 per interval are
    # lost and their counts fill the map: issue 35)
    gate = subprocess.Popen(["sh", "-c", 'read x; exec "$0" "$@"', WORK, "tchurn", "8", "300", "2"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            preexec_fn=cg.enter)
    try:
        recs = [Rec("-b", "cgroup", "-i", "1"), Rec("-b", "cgroup", "-i", "5"),
                Rec("-b", "cgroup", "-i", "5", "--threads"),
                Rec("-b", "cgroup", "-i", "1", "--threads", "-G", cg.path),
                Rec("-i", "5", "-p", str(gate.pid))]
        start_all(*recs)
        u0 = cg.usage_ns()
        gate.stdin.write("go\n")
        gate.stdin.close()
        out = gate.stdout.read()
        gate.wait()
        time.sleep(0.3)
        truth = cg.usage_ns() - u0
        for r in recs:
            r.stop()
    finally:
        if gate.poll() is None:
            gate.kill()
            gate.wait()
        cg.remove()
    threads = json.loads(out.splitlines()[0])["threads"]
    assert threads >= 500, out
    for r in recs[:4]:
        assert r.lost() == 0, r.args
        assert_close(cgroup_oncpu(r, cg), truth, r.args)
    p = recs[4]
    assert_close(sum(x["oncpu_ns"] for x in p.of("process") if x["pid"] == gate.pid), truth,
                 p.args)


def test_threads_match_schedstat(host):
    """Each thread of a pool (--threads, and with -p) against its own CPU clock,
    the scheduler's run time of the thread read by itself at the end of its work
    (after which it only waits on a barrier and pauses, or, thread 0, exits)."""
    gate = subprocess.Popen(["sh", "-c", 'read x; exec "$0" "$@"', WORK, "pool", "1,1,1,1",
                             "150,250,350,200", "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        recs = [Rec("--threads", "-i", "1"), Rec("--threads", "-i", "5", "-p", str(gate.pid))]
        start_all(*recs)
        gate.stdin.write("go\n")
        gate.stdin.close()
        truth = json.loads(gate.stdout.readline())
        gate.wait()
        time.sleep(0.3)
        for r in recs:
            r.stop()
    finally:
        if gate.poll() is None:
            gate.kill()
            gate.wait()
    for r in recs:
        for t in truth["threads"]:
            got = sum(x["oncpu_ns"] for x in r.of("thread") if x["tid"] == t["tid"])
            # thread 0 exits: its exit path runs after its own reading
            extra = 0.3e6 if t["comm"] == "pool-0" else 0.1e6
            assert t["cpu_ns"] - 0.1e6 <= got <= t["cpu_ns"] * (1 + REL) + extra, \
                (r.args, t, got)


def test_stat_matches_its_cgroup(host):
    """pmbpf stat of a fork loop and a two-threaded xz against the command's own
    cgroup's cpu.stat, which the command reads as its last step (what runs after
    that read, cat's and sh's exits, is in the absolute allowance)."""
    mnt = cgroup2_mount()
    if not mnt:
        pytest.skip("no cgroup v2 hierarchy mounted")
    script = ('for i in $(seq 100); do /bin/true; done; '
              'head -c 4000000 /dev/urandom | xz -T2 -1 >/dev/null; '
              f'cat "{mnt}$(sed -n "s/^0:://p" /proc/self/cgroup)/cpu.stat"')
    p = subprocess.run([PMBPF, "stat", "-o", "json", "--", "sh", "-c", script],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    usage = next(int(l.split()[1]) for l in p.stdout.splitlines() if l.startswith("usage_usec"))
    doc = next(json.loads(l) for l in p.stderr.splitlines() if l.startswith('{"type":"stat"'))
    got = doc["runs"][0]["metrics"]["cpu-time"]
    assert usage >= 100e3, p.stdout
    assert usage * 1e3 <= got <= usage * 1e3 * (1 + REL) + 2e6, (got, usage * 1e3)


def test_unmatched_spans_are_switches_the_kernel_did_not_report(host):
    """pmbpf loses no switch the kernel reports: a span whose switch-in was
    not seen (spans_unmatched) is one the kernel emitted no sched_switch for.

    On this VM the kernel delivers no event to any consumer (BPF, ftrace,
    perf) while one of its init's threads (pid 1) is current: a switch away
    from one is never reported, and the next switch-out on that CPU is
    unmatched. So a session's unmatched spans are at most its init's
    switch-ins (about equal here: 75 and 78 at rest, 93 and 99 busy, in
    20 s), and on a kernel that reports every switch (CPU hotplug aside)
    about 0. The allowance (10 and 0.1% of the switches) is for a CPU that
    goes offline meanwhile (no tracepoint runs there) and for the init's
    switch-ins' count being read just before and after the session. Both
    flavours of the switch program (tp_btf, raw_tp).
    """
    before = init_switch_ins()
    recs = [Rec("-i", "1"), Rec("-i", "1", "--raw-tp")]
    start_all(*recs)
    # switches of its own, whatever the host's own rate (a quiet CI host made
    # 326 in 4 s): 2,000 sleeps of 0.5 ms are 2,000 switches away and back
    sleeper = subprocess.run([WORK, "sleep", "2000", "500"], capture_output=True, timeout=120)
    assert sleeper.returncode == 0, sleeper.stderr
    time.sleep(1)
    for r in recs:
        r.stop()
    init = init_switch_ins() - before
    for r in recs:
        systems = r.of("system")
        switches = sum(s["events"]["context-switches"]["count"] for s in systems)
        unmatched = systems[-1]["spans_unmatched"]
        assert systems[-1]["attach"] == ("raw_tp" if "--raw-tp" in r.args else "tp_btf")
        assert switches >= 2000, (r.args, switches)
        assert unmatched <= init + 10 + switches // 1000, (r.args, unmatched, init, switches)
