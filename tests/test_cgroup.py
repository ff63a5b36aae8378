# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Per-cgroup figures, container identity, in-kernel cgroup filtering, run-queue latency.

Real cgroup v2 directories are created under the cgroup2 mount, named like the
container runtimes lay them out, and real workloads run inside them.
"""
import json
import math
import os
import re
import subprocess
import time
import uuid

import pytest

from conftest import PMBPF, WORK, assert_wakeup_mode, cgroup2_mount, final_figures, needs_root, work

pytestmark = needs_root

DOCKER = "a" * 12 + "0123456789abcdef" * 3 + "0123"
CRI = "b" * 12 + "0123456789abcdef" * 3 + "0123"
PODMAN = "c" * 64
POD = str(uuid.UUID(int=0x1234567890abcdef1234567890abcdef))


@pytest.fixture
def tree():
    """A test hierarchy mimicking docker, Kubernetes/containerd and podman."""
    mnt = cgroup2_mount()
    if not mnt:
        pytest.skip("no cgroup v2 hierarchy mounted")
    root_rel = f"/pmbpf-test-{os.getpid()}"
    rel = {
        "docker": f"{root_rel}/system.slice/docker-{DOCKER}.scope",
        "pod": f"{root_rel}/kubepods.slice/kubepods-burstable.slice/"
               f"kubepods-burstable-pod{POD.replace('-', '_')}.slice",
        "podman": f"{root_rel}/machine.slice/libpod-{PODMAN}.scope",
        "A": f"{root_rel}/migrate-a",
        "B": f"{root_rel}/migrate-b",
        "gone": f"{root_rel}/gone.service",
    }
    rel["cri"] = rel["pod"] + f"/cri-containerd-{CRI}.scope"
    for r in rel.values():
        os.makedirs(mnt + r, exist_ok=True)
    yield mnt, root_rel, rel
    for r in sorted([mnt + p for p in rel.values()] + [mnt + root_rel], key=len, reverse=True):
        # walk up from the leaves: remove everything we made
        while r.startswith(mnt + root_rel) and os.path.isdir(r):
            try:
                os.rmdir(r)
            except OSError:
                break
            r = os.path.dirname(r)


def run_in(cgdir, *args):
    """Run a workload inside a cgroup; returns its report lines."""
    out = subprocess.run(["sh", "-c", f'echo $$ > "{cgdir}/cgroup.procs" && exec "$0" "$@"',
                          WORK] + [str(a) for a in args],
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(l) for l in out.splitlines()]


def record(*args):
    return subprocess.Popen([PMBPF, "record", "-o", "json"] + list(args),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def started(p):
    line = p.stdout.readline()
    assert '"session"' in line, p.stderr.read()


def finish(p):
    p.send_signal(2)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 0, err
    return [json.loads(l) for l in out.splitlines()]


def by_time(recs):
    out = {}
    for r in recs:
        if r["type"] in ("process", "cgroup"):
            out.setdefault(r["time"], []).append(r)
    return out


def test_container_sums_rollup_and_identity(tree):
    mnt, root_rel, rel = tree
    p = record("-e", "page-faults,task-clock", "-i", "0.5")
    started(p)
    truth = {}
    touched = {}
    for name, pages in (("docker", 3000), ("docker", 5000), ("cri", 4000), ("podman", 2000)):
        t = run_in(mnt + rel[name], "touch", pages)[0]
        truth.setdefault(name, []).append(t)
        touched[name] = touched.get(name, 0) + pages
    time.sleep(0.6)
    recs = finish(p)
    cg_total = {}
    checked = 0
    for when, rows in by_time(recs).items():
        procs = [r for r in rows if r["type"] == "process"]
        # by id: cgroups removed before pmbpf saw them (other tests' on a
        # shared host) all have a null path
        cgs = {r["cgroup_id"]: r for r in rows if r["type"] == "cgroup"}
        for cg in cgs.values():
            path = cg["cgroup"]
            # the idle task (pid 0, in /) is in no cgroup's figures
            mine = [r for r in procs if r["cgroup_id"] == cg["cgroup_id"] and r["pid"] != 0]
            # a container's own figures are the sum of its processes
            assert cg["self"]["events"]["page-faults"]["raw"] == \
                sum(r["events"]["page-faults"]["raw"] for r in mine)
            assert cg["self"]["oncpu_ns"] == sum(r["oncpu_ns"] for r in mine)
            assert cg["processes"] == len(mine)
            # a parent's roll-up is its own plus its children's roll-ups
            kids = [c for c in cgs.values() if c["parent_id"] == cg["cgroup_id"]]
            assert cg["events"]["page-faults"]["raw"] == \
                cg["self"]["events"]["page-faults"]["raw"] + \
                sum(k["events"]["page-faults"]["raw"] for k in kids)
            assert cg["oncpu_ns"] == cg["self"]["oncpu_ns"] + sum(k["oncpu_ns"] for k in kids)
            checked += 1
            cg_total[path] = cg_total.get(path, 0) + cg["events"]["page-faults"]["raw"]
        # the root's roll-up is every process but the idle task (and the
        # overflow entry and those of unknown cgroups, which have no parent)
        root = [c for c in cgs.values() if c["cgroup"] == "/"]
        if root:
            root = root[0]
            work = [r for r in procs if r["pid"] != 0 and not r["overflow"] and r["cgroup"]]
            assert root["events"]["page-faults"]["raw"] == \
                sum(r["events"]["page-faults"]["raw"] for r in work)
            assert root["oncpu_ns"] == sum(r["oncpu_ns"] for r in work)
            assert root["processes_total"] == len(work)
    assert checked > 0
    # ground truth: each container is credited its workloads' faults
    # (the kernel's count includes the shell's faults before it moved itself in)
    for name, ts in truth.items():
        want = sum(t["minflt"] + t["majflt"] for t in ts)
        got = cg_total[rel[name]]
        assert touched[name] <= got <= want + 30 * len(ts), (name, got, want)
    assert cg_total[rel["pod"]] == cg_total[rel["cri"]]  # the pod holds only that container
    top = cg_total[root_rel]
    assert top == sum(cg_total[rel[n]] for n in ("docker", "pod", "podman"))
    # identity from the path alone
    ids = {}
    for r in recs:
        if r["type"] == "cgroup":
            ids[r["cgroup"]] = (r["runtime"], r["container_id"], r["pod_uid"], r["qos"])
    assert ids[rel["docker"]] == ("docker", DOCKER[:12], "", "")
    assert ids[rel["cri"]] == ("containerd", CRI[:12], POD, "burstable")
    assert ids[rel["pod"]] == ("kubernetes", "", POD, "burstable")
    assert ids[rel["podman"]] == ("podman", PODMAN[:12], "", "")
    assert ids[rel["docker"].rsplit("/", 1)[0]][0] == ""  # system.slice: no runtime


def switch_cost(recs):
    """(run_time_ns, run_cnt) of pmbpf's sched_switch program, from its own report."""
    progs = [r for r in recs if r["type"] == "system"][-1]["programs"]
    name = "switch_btf" if "switch_btf" in progs else "switch_raw"
    return progs[name]["run_time_ns"], progs[name]["run_cnt"]


def test_cgroup_filter_reports_only_subtree_and_costs_less(tree):
    mnt, root_rel, rel = tree
    # the host's setting is put back after (was: 0, whatever it had been)
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        stats_was = f.read().strip()
    subprocess.run(["sysctl", "-qw", "kernel.bpf_stats_enabled=1"], check=True)
    try:
        costs = {}
        for mode in ("all", "filtered"):
            args = ["-e", "page-faults,task-clock,cpu-clock,context-switches", "-i", "0.5"]
            if mode == "filtered":
                args += ["-G", root_rel + "/system.slice"]
            p = record(*args)
            started(p)
            run_in(mnt + rel["docker"], "touch", 2000)
            run_in(mnt + rel["podman"], "touch", 1000)
            subprocess.run(["perf", "bench", "sched", "pipe", "-l", "50000"],
                           capture_output=True, check=True)
            recs = finish(p)
            costs[mode] = switch_cost(recs)
            if mode == "filtered":
                procs = [r for r in recs if r["type"] == "process"]
                assert procs, "the filtered container's process is missing"
                assert all(r["cgroup"].startswith(root_rel + "/system.slice") for r in procs), \
                    {r["cgroup"] for r in procs}
                assert any(r["cgroup"] == rel["docker"] for r in procs)
    finally:
        subprocess.run(["sysctl", "-qw", f"kernel.bpf_stats_enabled={stats_was}"])
    per_run = {m: t / max(n, 1) for m, (t, n) in costs.items()}
    print("sched_switch ns/run:", per_run)
    assert per_run["filtered"] < 0.7 * per_run["all"], per_run


def test_migration_splits_counts(tree):
    mnt, root_rel, rel = tree
    p = record("-e", "task-clock", "-i", "0.5")
    started(p)
    out = run_in(mnt + rel["A"], "migrate", mnt + rel["A"], mnt + rel["B"], 300)
    recs = finish(p)
    pid = out[1]["pid"]
    first, total = out[0]["first_cpu_ns"], out[1]["cpu_ns"]
    rows = [r for r in recs if r["type"] == "process" and r["pid"] == pid]
    in_a = sum(r["oncpu_ns"] for r in rows if r["cgroup"] == rel["A"])
    in_b = sum(r["oncpu_ns"] for r in rows if r["cgroup"] == rel["B"])
    # before the move: the shell's exec, startup and the first burn
    assert abs(in_a - first) <= 0.03 * first + 5e6, (in_a, first, [(r["time"][17:], r["cgroup"][-9:], r["exited"], r["oncpu_ns"]) for r in rows])
    assert abs(in_b - (total - first)) <= 0.03 * (total - first) + 5e6, (in_b, total - first, [(r["time"], r["cgroup"], r["exited"], r["oncpu_ns"]) for r in rows])
    assert [r for r in rows if r["cgroup"] == rel["B"]][-1]["exited"]


def test_removed_cgroup_reported_to_its_end(tree):
    mnt, root_rel, rel = tree
    p = record("-e", "page-faults", "-i", "0.3")
    started(p)
    # one child that lives across a read (so its cgroup is seen), then exits
    out = run_in(mnt + rel["gone"], "fleet", 1, 1500, 1)
    t = {"pid": out[0]["child"]}
    os.rmdir(mnt + rel["gone"])
    time.sleep(1.0)
    recs = finish(p)
    rows = [r for r in recs if r["type"] == "process" and r["pid"] == t["pid"]]
    assert rows and rows[-1]["exited"] and rows[-1]["cgroup"] == rel["gone"]
    assert sum(r["events"]["page-faults"]["raw"] for r in rows) >= 1500
    last = rows[-1]["time"]
    later = [r for r in recs if r["type"] == "cgroup" and r["cgroup"] == rel["gone"]
             and r["time"] > last]
    assert not later


def runq_of(recs, pid):
    rows = [r for r in recs if r["type"] == "process" and r["pid"] == pid]
    count = sum(r["runq"]["count"] for r in rows)
    hist = {}
    for r in rows:
        for i, n in enumerate(r["runq"]["hist_log2_us"]):
            hist[i] = hist.get(i, 0) + n
    return rows, count, hist


RUNQ_SLOTS = 24


def runq_pct(hist, max_ns, q):
    """pmbpf's percentile rule: the upper bound of the log2 slot that holds
    the q-th wait, never above the largest wait seen."""
    n = sum(hist)
    target = math.ceil(q * n)
    seen = 0
    for i, c in enumerate(hist):
        seen += c
        if seen >= target:
            break
    if i >= RUNQ_SLOTS - 1:
        return max_ns
    return min((2 << i) * 1000, max_ns) if max_ns else (2 << i) * 1000


def test_runq_latency_contention_vs_alone():
    """Run-queue waits against the kernel's and the waiters' own figures.

    Two spinners pinned to one CPU wait for each other's slices; a third runs
    alone on it afterwards. None of them ever sleeps, so each jump of its clock
    is a wait (or an interrupt, microseconds): each measures its own waits
    (`work gaps`), and the kernel keeps their total and the run count in
    /proc/PID/schedstat. Nothing here assumes an idle CPU: whatever else runs
    on that CPU is in both pmbpf's and the ground truth's figures.
    """
    cpu = max(os.sched_getaffinity(0))
    p = record("-e", "task-clock", "-i", "0.5")
    started(p)

    def start(ms):
        return subprocess.Popen(["taskset", "-c", str(cpu), WORK, "gaps", str(ms)],
                                stdout=subprocess.PIPE, text=True)
    pair = [start(700), start(700)]
    runs = [final_figures(x) for x in pair]
    runs.append(final_figures(start(500)))
    recs = finish(p)
    sysrec = [r for r in recs if r["type"] == "system"][-1]
    # waits pmbpf dropped (a task switched in that was not the one it expected)
    lost = sysrec["waits_unmatched"]
    for i, ((t,), kernel) in enumerate(runs):
        rows, count, hist = runq_of(recs, t["pid"])
        total = sum(r["runq"]["total_ns"] for r in rows)
        hist = [hist.get(i, 0) for i in range(RUNQ_SLOTS)]
        # totals: the kernel's sum of waits and its run count, at the exit; the
        # kernel times a wait from the enqueue, pmbpf from the wakeup or the
        # switch-out: apart by up to ~15 us each, and by up to ~100 us in all on
        # an idle host (75 us in 6 waits and 69 us in 3 seen, left unexplained)
        # Below, also the waits pmbpf dropped (the count's shortfall, at most
        # the session's waits_unmatched): each at most the spinner's longest
        # clock jump (it sees every wait of its own): at rest here 4.88 ms
        # against the kernel's 9.62, with 10 unmatched host-wide.
        slack = 0.02 * kernel["run_delay_ns"] + 20e3 * kernel["runs"] + 100e3
        dropped = max(0, kernel["runs"] - count) * t["gap_max_ns"]
        assert kernel["run_delay_ns"] - slack - dropped <= total <= kernel["run_delay_ns"] + slack, \
            (total, kernel, lost, count, t["gap_max_ns"])
        assert kernel["runs"] - lost <= count <= kernel["runs"], (count, kernel, lost)
        # preempted, never asleep: each wait but the first is an involuntary switch
        invol = sum(r["involuntary_switches"] for r in rows)
        assert invol == kernel["nonvoluntary_ctxt_switches"], (invol, kernel)
        # the distribution, against the spinner's own clock jumps of 1 ms or more
        # (interrupts take microseconds, not that long): for each slot boundary
        # B, the waits of at least B. A jump is a wait plus the switches and the
        # tick around it (tens of us, more on a busy host); waits cluster at
        # multiples of the tick, some of which are near a boundary (8 ms).
        jumps = t["long_gaps_ns"]
        assert len(jumps) < 4096
        if i < 2:  # the pair waits for each other's slices, whatever else runs
            assert sum(1 for g in jumps if g >= 1e6) >= 10, t
        outside = t["runs_main"] + kernel["runs"] - t["runs"]
        for k in range(10, RUNQ_SLOTS):
            b = (1 << k) * 1000
            got = sum(hist[k:])
            most = sum(1 for g in jumps if g >= b * 0.97 - 20e3)
            least = sum(1 for g in jumps if g >= b * 1.05 + 100e3)
            # pmbpf also sees the waits before main() and after the report; a
            # busy host also stops a vCPU now and then: a jump, not a wait
            assert 0.9 * least - 2 <= got <= most + outside, \
                (b, got, least, most, hist, t["gap_hist"], outside)
        # p50 and p99 in each interval follow from its histogram and its largest wait
        for r in rows:
            q = r["runq"]
            if not q["count"]:
                continue
            h = q["hist_log2_us"]
            assert sum(h) == q["count"]
            assert q["p50_ns"] == runq_pct(h, q["max_ns"], 0.5), q
            assert q["p99_ns"] == runq_pct(h, q["max_ns"], 0.99), q


def unseen_of(recs, wakeups):
    """The session's counts of what the kernel did not report: switch-ins
    (spans_unmatched: the wait that ended there is lost with it) and, with
    the wakeup programs, wakeups of a task seen going to sleep (wakeups_unseen:
    its wait then comes from the scheduler's sched_info, so none is lost);
    and the programs' runs that did not happen (recursion misses)."""
    sysrec = [r for r in recs if r["type"] == "system"][-1]
    if wakeups == "on":
        assert isinstance(sysrec["wakeups_unseen"], int), sysrec
    else:
        assert sysrec["wakeups_unseen"] is None or not os.path.exists("/proc/self/schedstat")
    misses = sum(p["recursion_misses"] for p in sysrec["programs"].values())
    return sysrec["spans_unmatched"], sysrec["wakeups_unseen"], misses


@pytest.mark.parametrize("wakeups", ["off", "on"])
def test_runq_count_equals_wakeups(wakeups):
    """Each sleep's wakeup and each preemption gives one run-queue sample,
    timed from sched_info (off, the default) or by the wakeup programs (on)."""
    k = 300
    p = record("-e", "task-clock", "-i", "0.5", *(["--wakeup-progs"] if wakeups == "on" else []))
    started(p)
    t = work("sleep", k, 1000)[0]
    recs = finish(p)
    assert_wakeup_mode(recs, wakeups)
    rows, count, hist = runq_of(recs, t["pid"])
    # every switch-in after a wakeup or preemption is one sample: the first
    # (wakeup_new) plus one per switch-out but the last (at exit)
    switches = sum(r["voluntary_switches"] + r["involuntary_switches"] for r in rows)
    # but not one the kernel did not report: the sleeper's share of the
    # session's unmatched spans (on the sandbox VM's kernel, a switch-in
    # from a thread of its init: docs/fields.md, spans_unmatched). A wakeup
    # it did not report costs nothing: sched_info has it (wakeups_unseen).
    # The session's count is host-wide, the sleeper's share of it is not
    # known here: test_runq_count_in_a_cgroup_equals_wakeups knows it.
    unmatched, unseen, misses = unseen_of(recs, wakeups)
    lost = unmatched + misses
    if lost > k // 10:
        pytest.skip(f"the kernel did not report {unmatched} switch-ins host-wide: "
                    f"{count} of {switches} waits says little")
    # and a preemption in the sleep's own path (its state already set to
    # sleep: the kernel counts it involuntary) leaves a wait that neither
    # the kernel's sched_info (task_is_running() is false: no enqueue) nor
    # the wakeup programs time, unless its wakeup comes before it runs
    # again: at most the involuntary switches (3 of 303 switches at load 160)
    preempted = sum(r["involuntary_switches"] for r in rows)
    assert k - lost <= count and -1 - lost - preempted <= count - switches <= 1, (
        count, switches, unmatched, unseen, misses, preempted, t)
    assert sum(hist.values()) == count


@pytest.mark.parametrize("wakeups", ["off", "on"])
def test_runq_count_in_a_cgroup_equals_wakeups(tree, wakeups):
    """The same with the sleeper alone in the cgroup recorded (-G): the
    session's counts of switch-ins and wakeups the kernel did not report are
    then the sleeper's own, and its waits are all there but those.

    On the sandbox VM's kernel (no event while a thread of its init runs),
    the wakeup programs missed 0-13 of 300 wakeups in 4 of 44 unfiltered
    runs at rest whose switch-in they saw (docs/findings.md): before
    wakeups_unseen took their waits from sched_info, each was a wait lost
    and not counted anywhere, which this test catches."""
    mnt, root_rel, rel = tree
    k = 300
    p = record("-e", "task-clock", "-i", "0.5", "-G", rel["A"],
               *(["--wakeup-progs"] if wakeups == "on" else []))
    started(p)
    t = run_in(mnt + rel["A"], "sleep", k, 1000)[0]
    recs = finish(p)
    assert_wakeup_mode(recs, wakeups)
    rows, count, hist = runq_of(recs, t["pid"])
    switches = sum(r["voluntary_switches"] + r["involuntary_switches"] for r in rows)
    unmatched, unseen, misses = unseen_of(recs, wakeups)
    # its own count, so the bounds stay exact; but not when most are gone
    if unmatched > k // 2:
        pytest.skip(f"the kernel did not report {unmatched} of the sleeper's switch-ins")
    # its first wait (after wakeup_new) ended before it moved itself into
    # the cgroup, outside the filter: one per switch-out but the first and
    # the last, less the switch-ins not reported and preemptions in a sleep's
    # path (test_runq_count_equals_wakeups)
    preempted = sum(r["involuntary_switches"] for r in rows)
    print(f"count {count} switches {switches} spans_unmatched {unmatched} "
          f"wakeups_unseen {unseen} preempted {preempted}")
    assert k - 1 - unmatched - misses <= count, (count, switches, unmatched, unseen, misses, t)
    assert -1 - unmatched - misses - preempted <= count - switches <= 0, (
        count, switches, unmatched, unseen, misses, preempted, t)
    assert sum(hist.values()) == count


def orphans_of_init():
    """The storm's orphans pid 1 has not reaped yet (/bin/true, parent 1)."""
    n = 0
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rfind(")") + 2:].split()
        n += st[st.find("(") + 1:st.rfind(")")] == "true" and fields[1] == "1"
    return n


def quiet_init():
    """Wait (10 s at most) until pid 1 has reaped the storm's orphans, then
    half a second: it reaps them in bursts for 1-2 s after the storm, which
    hide the next test's switches (test_offcpu_time_of_a_sleeper lost 3% of
    its sleeps once)."""
    end = time.time() + 10
    while orphans_of_init() and time.time() < end:
        time.sleep(0.1)
    time.sleep(0.5)


def test_runq_waits_of_wakeups_the_kernel_hid(tree):
    """With the wakeup programs, a wakeup the kernel did not report costs
    the sleeper no wait: its switch-in takes the wait from sched_info and
    counts itself (wakeups_unseen).

    The sandbox VM's kernel reports no event while a thread of its init
    (pid 1) is current, wakeups done there included (docs/findings.md). A
    storm of orphans keeps the init reaping them, and some of the sleeper's
    wakeups are then hidden (15 in 30 runs of it beside one); without the
    sched_info fallback 9 of those 30 runs lost waits counted nowhere (main
    at 5d2e1dd), with it 0 of 30. Skips where no wakeup of the sleeper was
    hidden in 8 runs (any other kernel)."""
    mnt, root_rel, rel = tree
    k = 300
    storm = subprocess.Popen(["sh", "-c", "while :; do (/bin/true &); done"],
                             stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(0.5)
        for _ in range(8):
            p = record("-e", "task-clock", "-i", "0.5", "-G", rel["A"], "--wakeup-progs")
            started(p)
            t = run_in(mnt + rel["A"], "sleep", k, 1000)[0]
            recs = finish(p)
            unmatched, unseen, misses = unseen_of(recs, "on")
            if unseen:
                break
    finally:
        os.killpg(storm.pid, 9)
        storm.wait()
        quiet_init()
    if not unseen:
        pytest.skip("the kernel reported every wakeup of the sleeper")
    rows, count, hist = runq_of(recs, t["pid"])
    switches = sum(r["voluntary_switches"] + r["involuntary_switches"] for r in rows)
    preempted = sum(r["involuntary_switches"] for r in rows)
    print(f"count {count} switches {switches} spans_unmatched {unmatched} "
          f"wakeups_unseen {unseen} preempted {preempted}")
    # as test_runq_count_in_a_cgroup_equals_wakeups: every wait but the first
    # (outside the cgroup), those of the switch-ins not reported and at most
    # one per preemption in a sleep's path
    beyond = switches - 1 - unmatched - misses - count
    assert count <= switches and beyond <= preempted, (
        count, switches, unmatched, unseen, misses, preempted, t)
    # without the fallback each hidden wakeup is one more (0 beyond in 114
    # runs of the sleeper in a cgroup with it: at rest, loaded, beside the storm)
    assert beyond < unseen, (count, switches, unmatched, unseen, misses, preempted, t)
    assert sum(hist.values()) == count


def test_offcpu_time_of_a_sleeper():
    """A process that sleeps K x T is credited its wall time less its CPU time.

    The sleeper measures both from main() to its report. Outside that window
    it is off the CPU only while it waits in the run queue: before main() (its
    schedstat then) and after the report (the kernel's final figure less the
    one in the report).
    """
    k, usec = 100, 10000
    p = record("-e", "task-clock", "-i", "0.5")
    started(p)
    (t,), kernel = final_figures(subprocess.Popen([WORK, "sleep", str(k), str(usec)],
                                                  stdout=subprocess.PIPE, text=True))
    recs = finish(p)
    rows = [r for r in recs if r["type"] == "process" and r["pid"] == t["pid"]]
    off = sum(r["offcpu_ns"] for r in rows)
    truth = t["wall_ns"] - (t["cpu_ns"] - t["cpu_main_ns"])
    outside = t["run_delay_main_ns"] + kernel["run_delay_ns"] - t["run_delay_ns"]
    assert truth >= k * usec * 1e3
    assert 0.98 * truth <= off <= 1.02 * truth + outside, (off, truth, outside, t)
