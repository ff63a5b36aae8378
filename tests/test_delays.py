# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Who delayed whom (on by default; --no-delays), against what the test arranges.

Each test pins its workloads (the shell that moves them into their cgroups
included) so that who can run where is known: a victim and an antagonist on
one CPU, two antagonists with CPU weights 2:1, or the two on different CPUs.
The run-queue waits themselves are pmbpf's (checked against the kernel's
schedstat in test_cgroup.py); here the question is to whom they are credited.
"""
import glob
import json
import os
import re
import select
import shutil
import signal
import subprocess
import time
import urllib.request

import pytest

from conftest import PMBPF, WORK, allowed_cpus, assert_wakeup_mode, cgroup2_mount, needs_root

pytestmark = needs_root


@pytest.fixture
def cg():
    """A cgroup v2 directory for the test; children by name."""
    mnt = cgroup2_mount()
    if not mnt:
        pytest.skip("no cgroup v2 hierarchy mounted")
    rel = f"/pmbpf-delays-{os.getpid()}"
    made = []

    def make(name):
        path = f"{mnt}{rel}/{name}"
        os.makedirs(path, exist_ok=True)
        made.append(path)
        return path, f"{rel}/{name}"
    yield make
    for p in sorted(made, key=len, reverse=True):
        kill_all(p)
        try:
            os.rmdir(p)
        except OSError:
            pass
    try:
        os.rmdir(mnt + rel)
    except OSError:
        pass


def kill_all(path):
    try:
        with open(path + "/cgroup.procs") as f:
            pids = [int(x) for x in f.read().split()]
    except OSError:
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.time() + 5
    while time.time() < deadline:
        with open(path + "/cgroup.procs") as f:
            if not f.read().strip():
                return
        time.sleep(0.05)


def start_in(cgdir, cpu, *args, extra_cgroups=()):
    """A workload in cgroup cgdir (and the v1 cgroups given), pinned to cpu
    from the shell that moves it on."""
    moves = "".join(f'echo $$ > "{d}/cgroup.procs" && ' for d in (cgdir,) + tuple(extra_cgroups))
    return subprocess.Popen(["taskset", "-c", str(cpu), "sh", "-c", moves + 'exec "$0" "$@"',
                             WORK] + [str(a) for a in args],
                            stdout=subprocess.PIPE, text=True)


def record(*args, cpu=None):
    cmd = [PMBPF, "record", "-o", "json", "-i", "0.5"] + list(args)
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert '"session"' in line, p.stderr.read()
    return p


def finish(p):
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    return [json.loads(line) for line in out.splitlines()]


def cgroup_rows(recs, path):
    return [r for r in recs if r["type"] == "cgroup" and r["cgroup"] == path]


# the parties listed per row and side (user/account/delay.h DELAY_TOP)
DELAY_TOP = 5


def delayed(rows, key, path):
    """The delay credited to cgroup path in the rows' lists `key`."""
    return sum(d["ns"] for r in rows for d in r[key] if d["cgroup"] == path)


def cut_off(rows, key, match):
    """What the rows' lists `key` may hold of the party match(d) beyond what
    they show: a list holds the top DELAY_TOP parties of its interval, so on
    a busy host (another session's spinners on the same CPU, its cgroups) a
    party can rank below a full list. Its delay there is at most the least
    listed. Returns (that bound summed, the rows where it is cut off)."""
    bound, cut = 0, []
    for r in rows:
        if len(r[key]) >= DELAY_TOP and not any(match(d) for d in r[key]):
            bound += min(d["ns"] for d in r[key])
            cut.append(r)
    return bound, cut


def assert_both_sides(wrows, wpath, rrows, rpath):
    """The pairs of waiter cgroup wpath and runner cgroup rpath, seen from
    each side in each interval: the waiter's "delayed_by" credit to the
    runner is the runner's "delayed" credit to the waiter, unless one side's
    list is full without it, and then the other's credit ranks below all it
    lists."""
    by_time = {}
    for side, rows, path in ((0, wrows, rpath), (1, rrows, wpath)):
        key = ("delayed_by", "delayed")[side]
        for r in rows:
            ns = [d["ns"] for d in r[key] if d["cgroup"] == path]
            full = len(r[key]) >= DELAY_TOP
            least = min((d["ns"] for d in r[key]), default=0)
            by_time.setdefault(r["time"], [None, None])[side] = (ns[0] if ns else None, full,
                                                                least)
    for t, (w, r) in sorted(by_time.items()):
        got = [x[0] if x and x[0] is not None else 0 for x in (w, r)]
        if got[0] == got[1]:
            continue
        # one side does not list the pair: its list is full of larger ones
        absent = [x for x, g in zip((w, r), got) if g == 0]
        assert len(absent) == 1 and absent[0] and absent[0][1] and \
            max(got) <= absent[0][2], (t, w, r, wpath, rpath)


def assert_waits_as_kernel(recs, report):
    """A process's run-queue waits in pmbpf's rows against the kernel's
    (/proc/self/schedstat in the workload's report, read at its end), on both
    sides, so that a wait counted twice fails as a lost one does; and its
    delayed_by credits at most its waits. The kernel times a wait from the
    enqueue, pmbpf from the wakeup or the switch-out (~20 us apart each:
    tests/test_cgroup.py). pmbpf also has the waits after the report (the
    exit), and may miss one the kernel counted (at its start, or dropped as
    unmatched): each at most the longest wait it saw. Seen on a host at load
    24: 4-20 ms apart in 1.4-2.3 s of 2,000 waits, slack 69-86 ms."""
    rows = [r for r in recs if r["type"] == "process" and r["pid"] == report["pid"]]
    assert rows, report
    total = sum(r["runq"]["total_ns"] for r in rows)
    count = sum(r["runq"]["count"] for r in rows)
    longest = max(r["runq"]["max_ns"] or 0 for r in rows)
    kernel, runs = report["run_delay_ns"], report["runs"]
    slack = 0.02 * kernel + 20e3 * runs + 100e3
    missed = max(0, runs - 2 - count)
    later = max(0, count - runs) + 1
    low = kernel - slack - missed * longest
    high = kernel + slack + later * longest
    assert low <= total <= high, (total, low, high, count, longest, report)
    credited = sum(d["ns"] for r in rows for d in r["delayed_by"])
    assert credited <= total, (credited, total)


def cpus_pair():
    """The CPU the work shares, and another for pmbpf (or for work kept apart)."""
    first, second = allowed_cpus(2)
    return second, first


def cpu_busy_ns(cpu):
    """Time CPU cpu was not idle, from a monotonic clock and its cpuidle
    states' residency (exact, in us): run tasks, interrupts, steal. Not
    /proc/stat: this kernel samples user and system time at the tick
    (TICK_CPU_ACCOUNTING), and misses tasks that run between ticks. Without
    cpuidle the CPU counts as never idle (more for the others: the bound
    below only loosens)."""
    idle = 0
    for d in glob.glob(f"/sys/devices/system/cpu/cpu{cpu}/cpuidle/state*/time"):
        with open(d) as f:
            idle += int(f.read()) * 1000
    return time.monotonic_ns() - idle


def cgroup_usage_ns(path):
    with open(path + "/cpu.stat") as f:
        return next(int(l.split()[1]) * 1000 for l in f if l.startswith("usage_usec "))


def switches_to(data, cpu, prev, nxt):
    """How many times the CPU went from task prev straight to task nxt, from
    perf's switch records (PERF_RECORD_SWITCH_CPU_WIDE) of a perf record -C."""
    p = subprocess.run(["perf", "script", "-i", data, "--show-switch-events", "-F", "pid,cpu"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    n = 0
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(\d+)\s+\[0*(\d+)\]\s.*SWITCH_CPU_WIDE IN\s+prev pid/tid:\s*(\d+)/", line)
        if m and int(m[2]) == cpu and int(m[1]) == nxt and int(m[3]) == prev:
            n += 1
    return n


def perf_switches(tmp_path, cpu, other, data):
    """perf record of CPU cpu's switches into data, running on CPU other,
    once its events are enabled: it starts them disabled (-D -1) and acks
    the enable on its control fifo only after its setup, which reads every
    task on the host (0.7 s here at rest; seconds beside thousands of
    processes). Waiting for its output file and 0.3 s was not enough: "perf
    recorded no switch" at rest, a few minutes after a 10,000-process run."""
    ctl, ack = str(tmp_path / "perf-ctl"), str(tmp_path / "perf-ack")
    os.mkfifo(ctl)
    os.mkfifo(ack)
    perf = subprocess.Popen(["taskset", "-c", str(other), "perf", "record", "-q", "-e", "dummy",
                             "-C", str(cpu), "--switch-events", "-D", "-1",
                             "--control", f"fifo:{ctl},{ack}", "-o", data],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # read-write: neither open waits for perf's
    cfd, afd = os.open(ctl, os.O_RDWR), os.open(ack, os.O_RDWR)
    try:
        os.write(cfd, b"enable\n")
        deadline = time.time() + 60
        while perf.poll() is None and time.time() < deadline:
            if select.select([afd], [], [], 0.2)[0]:
                got = os.read(afd, 16)
                if got.startswith(b"ack\n"):  # perf writes its NUL too
                    return perf
        perf.kill()
        raise AssertionError("perf record did not enable its events: " + perf.communicate()[1])
    finally:
        os.close(cfd)
        os.close(afd)


def wait_comm(pid, comm, timeout=30):
    """Until process pid runs comm (it has exec'd it)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(f"/proc/{pid}/comm") as f:
            if f.read().strip() == comm:
                return
        time.sleep(0.01)
    raise AssertionError(f"{pid} did not exec {comm} in {timeout} s")


@pytest.mark.parametrize("wakeups", ["off", "on"])
def test_victim_delay_goes_to_antagonist(cg, wakeups, tmp_path):
    """A sleeper and a spinner on one CPU: the sleeper's waits are the spinner's doing.

    pmbpf runs on the other CPU, so that its own collections do not delay the
    victim. What else runs on the shared CPU (kworkers; on a busy host,
    whatever the scheduler puts there) takes its part of the delay, and a
    large one: the victim preempts the spinner at once but waits out another
    task's slice. So the credits are held to what the kernel measured in the
    same run: perf's switch records of the CPU (every wait that ended with a
    switch from the spinner to the victim is one the spinner ran in) and the
    CPU time of everything else on that CPU (its time not idle, less the
    pair's cgroup cpu.stat),
    which bounds the wait anything but the spinner can have caused. Waits
    timed from the scheduler's sched_info (off, the default where the kernel
    keeps it) and by the wakeup programs (on: --wakeup-progs).
    """
    if not shutil.which("perf"):
        pytest.skip("needs perf (linux-perf) for the kernel's switch records")
    cpu, other = cpus_pair()
    vdir, vrel = cg("victim")
    adir, arel = cg("antagonist")
    p = record("-b", "all", *(["--wakeup-progs"] if wakeups == "on" else []), cpu=other)
    ant = start_in(adir, cpu, "spin", 60)
    wait_comm(ant.pid, "work")
    time.sleep(0.3)
    # who ran after whom on the CPU, from the kernel's own switch records
    data = str(tmp_path / "switches.data")
    perf = perf_switches(tmp_path, cpu, other, data)
    busy0, ant0 = cpu_busy_ns(cpu), cgroup_usage_ns(adir)
    try:
        vic = start_in(vdir, cpu, "sleep", 2000, 500)
        vout, _ = vic.communicate(timeout=60)
    except BaseException:
        perf.kill()  # not left recording
        perf.wait()
        raise
    busy1, ant1, vic_ns = cpu_busy_ns(cpu), cgroup_usage_ns(adir), cgroup_usage_ns(vdir)
    perf.send_signal(signal.SIGINT)
    _, perr = perf.communicate(timeout=60)
    assert perf.returncode in (0, -signal.SIGINT), perr
    # the victim's waits that ended with the spinner on the CPU: the spinner
    # ran in each of them
    ended_by_spinner = switches_to(data, cpu, ant.pid, vic.pid)
    assert ended_by_spinner > 0, "perf recorded no switch from the spinner to the victim"
    # what ran on the CPU besides the pair (its time not idle, less the
    # pair's exact times), and the spinner's share of what ran there besides
    # the victim
    others = max(0, busy1 - busy0 - vic_ns - (ant1 - ant0))
    share = (ant1 - ant0) / (ant1 - ant0 + others)
    time.sleep(0.6)
    recs = finish(p)
    ant.kill()
    ant.wait()
    vpid = json.loads(vout.splitlines()[-1])["pid"]
    assert_wakeup_mode(recs, wakeups)
    assert_waits_as_kernel(recs, json.loads(vout.splitlines()[-1]))
    vrows = cgroup_rows(recs, vrel)
    assert vrows, "no row of the victim's cgroup"
    waited = sum(r["self"]["runq"]["total_ns"] for r in vrows)
    by_ant = delayed(vrows, "delayed_by", arel)
    assert waited > 0
    # the credit never exceeds the waits it is cut from
    by_all = sum(d["ns"] for r in vrows for d in r["delayed_by"])
    assert by_all <= waited, (by_all, waited)
    # Time: the spinner ran whenever nothing else did, so at least the wait
    # that the others' time on the CPU cannot cover is its. Alone with the
    # victim, nearly all of it; on a busy host the others' few long slices
    # can cover all of it (the victim preempts the spinner at once, but waits
    # out another task's slice), and then the waits below carry the test.
    # (where the victim's list is full without the antagonist, it may have
    # had up to the least listed there)
    ant_cut, ant_cut_rows = cut_off(vrows, "delayed_by", lambda d: d["cgroup"] == arel)
    assert by_ant + ant_cut >= 0.9 * (waited - others), (
        by_ant, ant_cut, waited, others, [r["delayed_by"] for r in vrows])
    count_cg = sum(r["self"]["runq"]["count"] for r in vrows)
    ant_waits = sum(d["waits"] for r in vrows for d in r["delayed_by"] if d["cgroup"] == arel)
    # the same pairs seen from the antagonist's side: "delayed" lists the victim
    arows = cgroup_rows(recs, arel)
    assert_both_sides(vrows, vrel, arows, arel)
    # and per process: the victim's own rows name the spinner
    procs = [r for r in recs if r["type"] == "process" and r["pid"] == vpid]
    assert procs
    by_spin = sum(d["ns"] for r in procs for d in r["delayed_by"] if d["pid"] == ant.pid)
    pwaited = sum(r["runq"]["total_ns"] for r in procs)
    spin_cut, spin_cut_rows = cut_off(procs, "delayed_by", lambda d: d["pid"] == ant.pid)
    assert by_spin + spin_cut >= 0.9 * (pwaited - others), (
        by_spin, spin_cut, pwaited, others, [r["delayed_by"] for r in procs])
    names = {d["comm"] for r in procs for d in r["delayed_by"] if d["pid"] == ant.pid}
    assert names == {"work"}
    # waits: each of the victim's waits the spinner ran in counts once, so at
    # most the victim's waits, and at least those the kernel saw the spinner
    # end, less 1: in a quiet CI-like run 2000 were credited of 2001 such
    # switches (of 2005 waits); which wait is missed is not known. Less also
    # the waits pmbpf dropped as unmatched (host-wide, counted), and the
    # waits of intervals whose list is full without the spinner.
    lost = [r for r in recs if r["type"] == "system"][-1]["waits_unmatched"]
    count = sum(r["runq"]["count"] for r in procs)
    spin_waits = sum(d["waits"] for r in procs for d in r["delayed_by"] if d["pid"] == ant.pid)
    unseen = sum(r["runq"]["count"] for r in spin_cut_rows)
    assert ended_by_spinner - 1 - lost - unseen <= spin_waits <= count, (
        spin_waits, ended_by_spinner, lost, unseen, count)
    # the same for the cgroups, but for the victim's waits before its shell
    # joined its cgroup (the process's, not the cgroup's)
    unseen_cg = sum(r["self"]["runq"]["count"] for r in ant_cut_rows)
    assert ended_by_spinner - 1 - lost - unseen_cg - (count - count_cg) <= ant_waits <= count_cg, (
        ant_waits, ended_by_spinner, lost, unseen_cg, count, count_cg,
        json.dumps([r["delayed_by"] for r in vrows]))
    print(f"spinner's share of the CPU besides the victim {share:.3f} (others "
          f"{others / 1e6:.1f} ms); of the victim's wait {by_ant / waited:.3f} of "
          f"{waited / 1e6:.1f} ms; in {spin_waits} of its {count} waits, "
          f"{ended_by_spinner} ended by a switch from the spinner; {lost} unmatched; "
          f"lists full without the spinner: {len(spin_cut_rows)} of {len(procs)} process rows, "
          f"{len(ant_cut_rows)} of {len(vrows)} cgroup rows")


def v1_cpu_mount():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            fields = post.split()
            if fields and fields[0] == "cgroup" and "cpu" in fields[2].split(","):
                return pre.split()[4]
    return None


@pytest.fixture
def weights(cg):
    """set(name, share): CPU weight of cgroup name, with cpu.weight where cgroup
    v2 has the cpu controller, else cgroup v1's cpu.shares. Returns the extra
    (v1) cgroup directories a task must join, if any."""
    mnt = cgroup2_mount()
    v1 = None
    with open(mnt + "/cgroup.controllers") as f:
        v2_cpu = "cpu" in f.read().split()
    if not v2_cpu:
        v1 = v1_cpu_mount()
        if not v1:
            pytest.skip("no cpu controller on cgroup v2 nor v1")
    made = []

    def set_weight(name, share):
        path, _ = cg(name)
        if v2_cpu:
            parent = os.path.dirname(path)
            for d in (mnt, parent):
                with open(d + "/cgroup.subtree_control", "w") as f:
                    f.write("+cpu")
            with open(path + "/cpu.weight", "w") as f:
                f.write(str(100 * share))
            return ()
        d = f"{v1}/pmbpf-delays-{os.getpid()}-{name}"
        os.makedirs(d, exist_ok=True)
        made.append(d)
        with open(d + "/cpu.shares", "w") as f:
            f.write(str(1024 * share))
        return (d,)
    yield set_weight
    for d in made:
        kill_all(d)
        try:
            os.rmdir(d)
        except OSError:
            pass


def test_weights_split_delay_2_to_1(cg, weights):
    """Two antagonists with CPU weights 2:1 share the victim's waits as the
    kernel shared the CPU between them: about 2:1.

    The victim burns a fixed amount of CPU on the same CPU as both, always
    runnable: whenever an antagonist runs there meanwhile, the victim waits
    for it. So the delay each caused is its run time there over the
    victim's life, its cgroup's cpu.stat usage (within 10%). The ratio is
    checked loosely (1.3-2.6): a loaded suite run read 1.67:1 while another
    session's test_delays ran its antagonists on the same CPU (the kernel's
    split was not measured then); with a spinner per CPU and a fork storm,
    2.00:1 from pmbpf and from cpu.stat alike (4 runs).
    """
    cpu, other = cpus_pair()
    vdir, vrel = cg("victim")
    a1dir, a1rel = cg("heavy")
    a2dir, a2rel = cg("light")
    ev = weights("victim", 1)
    e1 = weights("heavy", 2)
    e2 = weights("light", 1)
    p = record("-b", "all", cpu=other)
    a1 = start_in(a1dir, cpu, "spin", 60, extra_cgroups=e1)
    a2 = start_in(a2dir, cpu, "spin", 60, extra_cgroups=e2)
    time.sleep(0.3)
    before = [cgroup_usage_ns(d) for d in (a1dir, a2dir)]
    vic = start_in(vdir, cpu, "burn", 500, extra_cgroups=ev)
    vout, _ = vic.communicate(timeout=60)
    ran = [cgroup_usage_ns(d) - b for d, b in zip((a1dir, a2dir), before)]
    time.sleep(0.6)
    recs = finish(p)
    for a in (a1, a2):
        a.kill()
        a.wait()
    assert_waits_as_kernel(recs, json.loads(vout.splitlines()[-1]))
    vrows = cgroup_rows(recs, vrel)
    waited = sum(r["self"]["runq"]["total_ns"] for r in vrows)
    heavy = delayed(vrows, "delayed_by", a1rel)
    light = delayed(vrows, "delayed_by", a2rel)
    assert light > 0, [r["delayed_by"] for r in vrows]
    # the antagonists' run time is read before the victim's shell starts and
    # after it is reaped: their runs then (the shell's start, the victim's
    # exit, on a CPU shared three ways) delayed nobody (15 ms allowed)
    for got, kernel in ((heavy, ran[0]), (light, ran[1])):
        assert 0.9 * kernel - 15e6 <= got <= kernel * 1.1, (heavy, light, ran, waited)
    assert heavy + light <= waited, (heavy, light, ran, waited)
    # the weights took effect: the heavy one caused more (2:1 at rest)
    ratio = heavy / light
    assert 1.3 <= ratio <= 2.6, (ratio, heavy, light, ran)


def test_other_cpu_no_attribution(cg):
    """A victim on one CPU is never delayed by an antagonist pinned to another."""
    cpu, other = cpus_pair()
    vdir, vrel = cg("victim")
    adir, arel = cg("antagonist")
    p = record("-b", "cgroup")
    ant = start_in(adir, other, "spin", 60)
    time.sleep(0.3)
    vic = start_in(vdir, cpu, "sleep", 1000, 500)
    vic.communicate(timeout=60)
    time.sleep(0.6)
    recs = finish(p)
    ant.kill()
    ant.wait()
    vrows = cgroup_rows(recs, vrel)
    # the victim waited 1,000 times, less the waits pmbpf drops and counts
    # (waits_unmatched, host-wide: a switch-in 6.18 did not report), as in
    # test_cgroup's run-queue test
    lost = [r for r in recs if r["type"] == "system"][-1]["waits_unmatched"]
    waits = sum(r["self"]["runq"]["count"] for r in vrows)
    assert vrows and waits >= 1000 - lost, (waits, lost)
    assert delayed(vrows, "delayed_by", arel) == 0, [r["delayed_by"] for r in vrows]
    assert delayed(cgroup_rows(recs, arel), "delayed", vrel) == 0


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return r.read().decode()


def sample(text, name, **labels):
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    m = re.search("^" + re.escape(name + "{" + want) + r"[^}]*\} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def test_serve_delay_pairs_bounded(cg):
    """serve: the (cgroup, by) counter of the pair, and at most
    --delay-pairs series of it.

    Filtered to the test's cgroups (-G), so that the waiters are the victim
    and the antagonist: their pairs with each other and with whatever else
    ran on that CPU are more than 3, and the two between victim and
    antagonist are the largest. The victim's wait credited to the antagonist
    is held, as in test_victim_delay_goes_to_antagonist, to what the kernel
    kept for the same run: at least the wait that the CPU time of everything
    else on that CPU (its time not idle, less the pair's cpu.stat) cannot
    cover (a fixed 90% of the wait failed on a busy host: 0.017 s of 0.059 s).
    """
    cpu, other = cpus_pair()
    vdir, vrel = cg("victim")
    adir, arel = cg("antagonist")
    srv = subprocess.Popen(["taskset", "-c", str(other), PMBPF, "serve", "-G",
                            os.path.dirname(vdir), "--delays", "--delay-pairs", "3", "-l", "127.0.0.1:0", "-i", "0.2"],
                           stderr=subprocess.PIPE, text=True)
    try:
        port = None
        for line in srv.stderr:
            m = re.search(r"http://[^:]+:(\d+)/metrics", line)
            if m:
                port = int(m.group(1))
                break
        assert port, "serve did not start"
        ant = start_in(adir, cpu, "spin", 60)
        wait_comm(ant.pid, "work")
        time.sleep(0.3)
        busy0, ant0 = cpu_busy_ns(cpu), cgroup_usage_ns(adir)
        vic = start_in(vdir, cpu, "sleep", 1000, 500)
        vic.communicate(timeout=60)
        busy1, ant1, vic_ns = cpu_busy_ns(cpu), cgroup_usage_ns(adir), cgroup_usage_ns(vdir)
        others = max(0, busy1 - busy0 - vic_ns - (ant1 - ant0))
        ant.kill()
        ant.wait()
        time.sleep(0.6)
        text = scrape(port)
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.communicate(timeout=20)
    fam = "pmbpf_cgroup_runq_delay_seconds_total"
    assert f"# TYPE {fam} counter" in text
    series = [l for l in text.splitlines() if l.startswith(fam + "{")]
    assert 1 <= len(series) <= 3, series
    got = sample(text, fam, cgroup=vrel, by=arel)
    waited = sample(text, "pmbpf_cgroup_runqueue_latency_seconds_sum", cgroup=vrel)
    assert waited, (series, waited)
    least = 0.9 * (waited - others / 1e9)
    if got is None:
        # others' tasks on that CPU (a busy host) delayed the pair more: the
        # three series kept are then the largest, each above the pair's least
        values = [float(l.rsplit(" ", 1)[1]) for l in series]
        assert len(series) == 3 and min(values) >= least, (series, least, others / 1e9)
        return
    # the cgroup's latency sum includes its descendants; it has none
    assert 0 < got <= waited * 1.000001, (got, waited)
    assert got >= least, (got, waited, others / 1e9)


@pytest.mark.parametrize("args,on", [((), True), (("--no-delays",), False),
                                     (("-G", "/"), False), (("-G", "/", "--delays"), True)])
def test_on_by_default_but_not_filtered(args, on):
    """On by default; with a filter only when asked (its unmonitored switches
    would pay a clock read); --no-delays turns it off."""
    p = subprocess.run([PMBPF, "record", "-o", "json", "-i", "0.2", "-d", "0.5"] + list(args),
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    recs = [json.loads(l) for l in p.stdout.splitlines()]
    rows = [r for r in recs if r["type"] in ("process", "cgroup")]
    assert rows
    assert all(("delayed_by" in r and "delayed" in r) == on for r in rows)
