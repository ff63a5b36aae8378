# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Live CPI outliers in pmbpf serve, on the real kernel.

A victim cgroup (a process that burns 1 ms and sleeps 1 ms, about 0.5 CPU,
pinned to one CPU) learns its baseline; then an antagonist cgroup (four
spinners pinned to the same CPU) starts. The victim must become an outlier in
/metrics within a few intervals, with the antagonist as its first suspect, and
stop being one soon after the antagonist stops. pmbpf top, on the same scene,
must mark the victim's process and name a spinner among its suspects.

serve counts task-clock only, so that the signal is the scheduler's stand-in
(the victim's mean run-queue wait) on every host, PMU or not: a spinner
sharing its CPU delays the victim by whole slices, whereas what it does to
the victim's CPI depends on the caches. The ground truth is the victim's own
/proc/PID/schedstat (run-queue wait and times run), read at the antagonist's
start and end: the test checks that the antagonist really did hurt it.

Margins, measured on the 2-vCPU development VM (no PMU, other work running):
the victim's mean wait is 10-30 us alone and 3-4 ms behind the spinners
(threshold: mean + 2 sd of its baseline, some tens of us), flagged 3-4
intervals after the start (k = 3; asserted: at most 10), the antagonist first
at r 0.95-0.99 (asserted: first, r >= 0.5). Since victim and spinners run at
nice -20 (Group), with a spinner per CPU and a fork storm beside them: 16-67
us alone, 1.7-2.5 ms behind the spinners, r 0.95-0.97, the flag cleared in 2
intervals. The figures of each run go to build/cpi-live-figures.json.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import BUILD, WORK, cgroup2_mount, needs_root, rmdir_retry
from test_serve import Serve
from test_top import TMUX, Pane

pytestmark = needs_root

INTERVAL_S = 0.2
WINDOW = 20
K = 3
SPINNERS = 4
QUIET = 40  # intervals of the quiet run, after the baseline holds its 20 samples
DETECT_MAX = 10  # intervals from the antagonist's start to the victim's flag
CLEAR_MAX = 5  # intervals from its end to the flag's end, unless the victim still waits
NICE = -20  # of the victim and the spinners, each in an autogroup of its own (Group)
STILL_HURT = 2  # the victim still waits: its mean wait per run at least this x its wait alone

VICTIM = """
import time
while True:
    t = time.perf_counter()
    while time.perf_counter() - t < 0.001:
        pass
    time.sleep(0.001)
"""


class Group:
    """A cgroup v2 directory of the test's own; its processes are killed on remove().

    Each process runs at nice NICE in a session (so an autogroup) of its
    own at NICE too, as the scheduler weighs one autogroup against another:
    the victim and each spinner weigh alike, as at rest, and the host's
    other work little beside them. At nice 0 a loaded host set the scene
    instead: with a spinner per CPU and a fork storm (and another suite's
    spinners) the victim waited 0.6-7.3 ms a run alone against 10-30 us at
    rest, 4.5 times that with the spinners (5 asked), and its waits stayed
    above its threshold after they stopped (the flag 6 and 15 intervals
    late)."""

    def __init__(self, name):
        self.mnt = cgroup2_mount()
        self.rel = f"/pmbpf-cpilive-{os.getpid()}/{name}"
        os.makedirs(self.mnt + self.rel, exist_ok=True)
        self.procs = []

    def start(self, cpu, *args):
        path = self.mnt + self.rel + "/cgroup.procs"

        def enter():
            with open(path, "w") as f:
                f.write("0")
            os.sched_setaffinity(0, {cpu})
            os.setsid()
            os.nice(NICE)
            try:
                with open("/proc/self/autogroup", "w") as f:
                    f.write(str(NICE))
            except OSError:
                pass  # no autogroup in this kernel: nice alone decides
        p = subprocess.Popen([str(a) for a in args], preexec_fn=enter,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs.append(p)
        return p

    def stop(self):
        for p in self.procs:
            p.kill()
            p.wait()
        self.procs = []

    def remove(self):
        self.stop()
        for d in (self.mnt + self.rel, os.path.dirname(self.mnt + self.rel)):
            # the parent goes with the last group of the test (retried while
            # another was still there, it took 5 s)
            if d != self.mnt + self.rel and any(e.is_dir() for e in os.scandir(d)):
                break
            rmdir_retry(d)


def schedstat(pid):
    """Run-queue wait (ns) and times run of a task, from /proc/PID/schedstat."""
    with open(f"/proc/{pid}/schedstat") as f:
        _, wait, runs = (int(x) for x in f.read().split())
    return wait, runs


def ahead(rec, rel):
    """The suspects of a record ranked above cgroup rel (by r) that delayed
    the victim at least a tenth as much as rel did (suspect_delay): those
    that outrank it as the scheduler sees it too. [] when rel is first, or
    only chance correlations outrank it; None when rel is no suspect."""
    names = [s for _, s in rec["suspects"]]
    if rel not in names:
        return None
    d = rec["suspect_delay"]
    return [s for s in names[:names.index(rel)] if d.get(s, 0) >= 0.1 * d.get(rel, 0)]


class Watch:
    """One record per collection of serve (by pmbpf_collections_total): the victim's series."""

    def __init__(self, serve, victim, pid):
        self.serve, self.victim, self.pid = serve, victim, pid
        self.by_collection = {}
        self.sched = {}  # the victim's schedstat when a collection was first seen

    def wait_us(self, n):
        """The victim's mean run-queue wait per run (us, its schedstat) from
        when collection n - 1 was first seen to when n was; None unless both were."""
        if n not in self.sched or n - 1 not in self.sched:
            return None
        (w0, r0), (w1, r1) = self.sched[n - 1], self.sched[n]
        return (w1 - w0) / max(r1 - r0, 1) / 1e3

    def poll(self):
        s = self.serve.scrape()
        n = int(next(v for k, v in s.items() if k[0] == "pmbpf_collections_total"))
        if n in self.by_collection:
            return n, self.by_collection[n]
        self.sched[n] = schedstat(self.pid)
        rec = {"flagged_others": 0, "suspects": [], "suspect_delay": {}}
        for (name, labels), v in s.items():
            lab = dict(labels)
            if name == "pmbpf_cpi_signal_info":
                rec["signal_kind"] = lab["signal"]
            if not name.startswith("pmbpf_cgroup_cpi_"):
                continue
            if lab["cgroup"] != self.victim:
                if name == "pmbpf_cgroup_cpi_outlier" and v == 1:
                    rec["flagged_others"] += 1
                continue
            if name == "pmbpf_cgroup_cpi_suspect_correlation":
                rec["suspects"].append((v, lab["suspect"]))
            elif name == "pmbpf_cgroup_cpi_suspect_delay_seconds":
                rec["suspect_delay"][lab["suspect"]] = v
            else:
                rec[name[len("pmbpf_cgroup_cpi_"):]] = v
        rec["suspects"].sort(reverse=True)
        self.by_collection[n] = rec
        return n, rec

    def until(self, pred, timeout, what):
        """Poll (faster than the interval) until pred(collection, record); returns them."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            n, rec = self.poll()
            if pred(n, rec):
                return n, rec
            time.sleep(INTERVAL_S / 4)
        pytest.fail(f"{what}: not within {timeout} s; last record {rec}")


def test_outlier_and_first_suspect():
    if not cgroup2_mount():
        pytest.skip("no cgroup v2 hierarchy mounted")
    if not os.path.exists(WORK):
        pytest.skip("tests/workloads not built: run through make test")
    cpu = max(os.sched_getaffinity(0))
    victim, antagonist = Group("victim"), Group("antagonist")
    serve = Serve("-i", str(INTERVAL_S), "-e", "task-clock", "--cpi-window", str(WINDOW),
                  "--cpi-k", str(K), "--top-k", "0")
    figures = {"interval_s": INTERVAL_S, "window": WINDOW, "k": K, "spinners": SPINNERS}
    try:
        vp = victim.start(cpu, sys.executable, "-c", VICTIM)
        w = Watch(serve, victim.rel, vp.pid)
        # the baseline: CPI_MIN_BASELINE (20) samples of at least 0.05 CPU
        n0, rec = w.until(lambda n, r: "threshold" in r, 30, "the victim's baseline")
        assert rec["signal_kind"] == "runq_avg_ns", rec
        alone = schedstat(vp.pid)
        # the quiet run: every collection's judgement of the victim
        w.until(lambda n, r: n >= n0 + QUIET, QUIET * INTERVAL_S + 30, "the quiet run")
        quiet = [w.by_collection[n] for n in range(n0 + 1, n0 + QUIET + 1)
                 if n in w.by_collection]
        figures["quiet_intervals"] = len(quiet)
        flags = [r.get("outlier") == 1 for r in quiet]
        figures["quiet_victim_flags"] = sum(flags)
        figures["quiet_victim_episodes"] = sum(b and not a for a, b in zip([False] + flags, flags))
        figures["quiet_other_flags"] = sum(r["flagged_others"] for r in quiet)
        figures["baseline_mean_us"] = rec["baseline_mean"] * 1e6
        # (the host's other work may have hurt the victim: start from a quiet moment)
        w.until(lambda n, r: r.get("outlier") == 0, 20, "the victim not flagged")

        before = schedstat(vp.pid)
        t0 = time.monotonic()
        for _ in range(SPINNERS):
            antagonist.start(cpu, WORK, "spin", "60")
        start, _ = w.poll()
        n1, hit = w.until(lambda n, r: n > start and r.get("outlier") == 1,
                          (DETECT_MAX + 5) * INTERVAL_S + 10, "the victim flagged")
        after = schedstat(vp.pid)
        t1 = time.monotonic()
        figures["detect_intervals"] = n1 - start
        figures["detect_s"] = t1 - t0
        figures["at_detection"] = {
            "signal_us": hit["signal"] * 1e6, "threshold_us": hit["threshold"] * 1e6,
            "baseline_mean_us": hit["baseline_mean"] * 1e6,
            "suspects": [(r, s) for r, s in hit["suspects"]],
            "suspect_delay_ms": {s: v * 1e3 for s, v in hit["suspect_delay"].items()}}
        figures["schedstat_wait_us_alone"] = \
            (before[0] - alone[0]) / max(before[1] - alone[1], 1) / 1e3
        figures["schedstat_wait_us_with_antagonist"] = \
            (after[0] - before[0]) / max(after[1] - before[1], 1) / 1e3
        # keep the antagonist a few intervals: it stays first
        w.until(lambda n, r: n >= n1 + 3, 10, "three more intervals")
        later = [w.by_collection[n] for n in range(n1 + 1, n1 + 4) if n in w.by_collection]
        figures["first_suspects_later"] = [r["suspects"][0] for r in later if r["suspects"]]
        figures["ahead_later"] = [ahead(r, antagonist.rel) for r in later if r["suspects"]]
        antagonist.stop()
        end, _ = w.poll()
        # the victim's own waits at each collection until the flag clears
        waits = {}

        def cleared(n, r):
            waits.setdefault(n, schedstat(vp.pid))
            return n > end and r.get("outlier") == 0
        n3, _ = w.until(cleared, (WINDOW + 5) * INTERVAL_S + 10, "the flag cleared")
        figures["clear_intervals"] = n3 - end
        figures["quiet_wait_us"] = [w.wait_us(n) for n in range(n0 + 1, n0 + QUIET + 1)]
        figures["after_wait_us"] = [w.wait_us(n) for n in range(end + 1, n3 + 1)]
        figures["after_signal_us"] = [w.by_collection[n].get("signal", 0) * 1e6
                                      for n in range(end + 1, n3 + 1) if n in w.by_collection]
        # the intervals still flagged from the CLEAR_MAX-th on (those that
        # took clear_intervals past CLEAR_MAX: was from the one after, and so
        # empty, a failure, when the flag cleared at CLEAR_MAX + 1), and the
        # victim's mean wait per run in each (from schedstat, us), where two
        # collections bound it
        figures["flagged_late_wait_us"] = [
            (waits[n][0] - waits[n - 1][0]) / max(waits[n][1] - waits[n - 1][1], 1) / 1e3
            for n in range(end + CLEAR_MAX, n3) if n in waits and n - 1 in waits]
    finally:
        victim.remove()
        antagonist.remove()
        serve.stop()
        with open(os.path.join(BUILD, "cpi-live-figures.json"), "w") as f:
            json.dump(figures, f, indent=1)
    print(json.dumps(figures))

    # the antagonist did hurt the victim: its own account of its waits
    assert figures["schedstat_wait_us_with_antagonist"] > \
        5 * figures["schedstat_wait_us_alone"], figures
    assert hit["signal"] > hit["threshold"] > hit["baseline_mean"] > 0, hit
    # pmbpf's wakeup-to-run waits against the victim's own (which also count preemptions)
    ratio = hit["signal"] * 1e6 / figures["schedstat_wait_us_with_antagonist"]
    assert 1 / 3 < ratio < 3, figures
    assert figures["detect_intervals"] <= DETECT_MAX, figures
    # the first suspect, but for cgroups whose CPU use rose with it by
    # chance: another suite's test cgroup that started as the spinners did
    # (r 0.973 against the spinners' 0.956, in one loaded run beside the
    # coordinator's make test), which the scheduler clears (below)
    r_ant = [r for r, s in hit["suspects"] if s == antagonist.rel]
    assert r_ant and r_ant[0] >= 0.5, hit
    assert ahead(hit, antagonist.rel) == [], hit
    # the scheduler's evidence beside it: of the suspects, the antagonist's
    # processes ran the most while the victim waited (who delayed whom)
    delays = hit["suspect_delay"]
    assert set(delays) == {s for _, s in hit["suspects"]}, hit
    assert delays[antagonist.rel] > 0 and \
        delays[antagonist.rel] == max(delays.values()), hit
    assert all(a == [] for a in figures["ahead_later"]), figures
    # the flag ends with the harm: within CLEAR_MAX intervals, or later only
    # while the victim's own account says it still waits (other work on a
    # shared host can delay it too: 8 intervals seen once in CI)
    late = figures["flagged_late_wait_us"]
    assert figures["clear_intervals"] <= CLEAR_MAX or \
        (late and min(late) >= STILL_HURT * figures["schedstat_wait_us_alone"]), figures


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (make deps installs it)")
def test_top_marks_the_victim(tmp_path):
    """top's process view: the victim's CPI! cell and, selected, its line with a spinner
    among its suspects (processes are judged as "PID comm")."""
    if not cgroup2_mount():
        pytest.skip("no cgroup v2 hierarchy mounted")
    if not os.path.exists(WORK):
        pytest.skip("tests/workloads not built: run through make test")
    cpu = max(os.sched_getaffinity(0))
    # command names of their own, for the filter
    vbin, sbin = str(tmp_path / "cpivictim"), str(tmp_path / "cpispin")
    shutil.copy(sys.executable, vbin)
    shutil.copy(WORK, sbin)
    victim, antagonist = Group("victim"), Group("antagonist")
    pane = Pane(f"-d {INTERVAL_S} -e task-clock --cpi-window {WINDOW} --cpi-k {K}", 220, 40)
    try:
        vp = victim.start(cpu, vbin, "-c", VICTIM)
        pane.wait(lambda s: "processes, " in "\n".join(s), timeout=30, what="the first interval")
        pane.keys("/")
        pane.literal("cpivictim")
        pane.keys("Enter")
        pane.wait(lambda s: any(re.match(rf"\s*{vp.pid} ", l) for l in s), what="the victim")
        # its baseline: 20 samples, with a margin for intervals the victim may lose
        time.sleep(2 * WINDOW * INTERVAL_S)
        spinners = {antagonist.start(cpu, sbin, "spin", "60").pid for _ in range(SPINNERS)}
        line = re.compile(rf"^{vp.pid} cpivictim outlier: run-queue wait [0-9.]+ us above "
                          rf"[0-9.]+ us \(mean [0-9.]+ us, sd [0-9.]+ us of \d+ intervals\) "
                          rf"for \d+ intervals; suspects: .*\d+ cpispin \(r \+[01]\.\d\d, "
                          rf"delayed it [0-9.]+(us|ms|s)\)")
        screen = pane.wait(lambda s: s if any(line.match(l) for l in s) else None,
                           timeout=(DETECT_MAX + 5) * INTERVAL_S + 10, what="the outlier line")
    finally:
        pane.close()
        victim.remove()
        antagonist.remove()
    shown = next(l for l in screen if line.match(l))
    print(shown)
    # processes of almost no CPU can rank with them (a kernel thread busy on that CPU
    # since the spinners came): a spinner among the suspects, not necessarily first
    suspects = re.findall(r"(\d+) (\S+) \(r \+([01]\.\d\d), delayed it ([0-9.]+)(us|ms|s)\)",
                          shown)
    assert any(int(pid) in spinners and float(r) >= 0.5 for pid, _, r, _, _ in suspects), \
        (shown, spinners)
    # and the scheduler's evidence: a spinner ran milliseconds of the victim's waits
    assert any(int(pid) in spinners and (u == "ms" or u == "s") for pid, _, _, _, u in suspects), \
        (shown, spinners)
    head = next(l for l in screen if re.match(r"\s*PID ", l))
    row = next(l for l in screen if re.match(rf"\s*{vp.pid} ", l))
    x = head.index("CPI!")
    # right-aligned under its title: how far above its threshold
    assert re.fullmatch(r"\s*\d+(\.\d)?x", row[x - 1:x + 4]), (head, row)
