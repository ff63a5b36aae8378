# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Shared fixtures: run the real pmbpf against workloads with known figures."""
import contextlib
import fcntl
import glob
import json
import os
import signal
import subprocess
import tempfile
import threading
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _from_checkout(path):
    """PMBPF and PMBPF_BUILD as absolute paths: a relative one (make test's
    build/) is the checkout's when pytest runs from another directory, and a
    test that runs pmbpf elsewhere (cwd=) finds it all the same."""
    if not os.path.isabs(path) and not os.path.exists(path):
        path = os.path.join(ROOT, path)
    return os.path.abspath(path) + ("/" if path.endswith("/") else "")


BUILD = _from_checkout(os.environ.get("PMBPF_BUILD", os.path.join(ROOT, "build") + "/"))
PMBPF = _from_checkout(os.environ.get("PMBPF", os.path.join(BUILD, "pmbpf")))
WORK = os.path.join(BUILD, "workloads", "work")


def cgroup2_mount():
    """Where the cgroup v2 hierarchy is mounted (from mountinfo), or None."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[fields.index("-") + 1] == "cgroup2":
                return fields[4]
    return None


def can_bpf():
    return os.geteuid() == 0


needs_root = pytest.mark.skipif(not can_bpf(), reason="loading BPF programs needs root "
                                "(or CAP_BPF and CAP_PERFMON); run the suite with sudo")


def allowed_cpus(n=1):
    """The first n CPUs this process may run on, lowest first: the tests pin
    work to these, never to CPUs 0 and 1 by number, which a host that limits
    the suite to some CPUs (a cpuset, e.g. CPUs 4-5 of a bigger machine) does
    not allow. Skips the test when fewer than n are allowed."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < n:
        pytest.skip(f"needs {n} CPUs; this process may run on {len(cpus)} only ({cpus})")
    return cpus[:n]


@contextlib.contextmanager
def claimed_cpu(timeout=300):
    """One allowed CPU for this test alone among the suites on this host:
    the highest whose lock (/tmp/pmbpf-test-cpu-N.lock, flock) no other
    test holds, else the first to be freed (waiting up to timeout s). A test
    that pins a high-priority pair to a CPU and checks how they delay each
    other failed when another suite's pair was pinned to the same CPU (two
    .ci/run at once: each suite's spinner delayed the other's sleeper more
    than its own did)."""
    cpus = sorted(os.sched_getaffinity(0), reverse=True)
    files = []
    try:
        deadline = time.monotonic() + timeout
        while True:
            for cpu in cpus:
                f = open(f"/tmp/pmbpf-test-cpu-{cpu}.lock", "a")
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    f.close()
                    continue
                files.append(f)
                yield cpu
                return
            if time.monotonic() >= deadline:
                pytest.fail(f"every allowed CPU ({cpus}) stayed claimed by other tests "
                            f"for {timeout} s")
            time.sleep(0.1)
    finally:
        for f in files:
            f.close()  # the lock goes with it


# Run by python3 -c SPAWNER WORK SECONDS: 2,000 short-lived processes a
# minute, each burning 2 ms of CPU; prints {"started": processes started,
# "seconds": how long it ran, "cpu_s": its own and its children's CPU time,
# "children_faults": its children's page faults} (getrusage).
SPAWNER = """
import json, resource, subprocess, sys, time
work, seconds = sys.argv[1], float(sys.argv[2])
started, children, t0 = 0, [], time.monotonic()
while time.monotonic() - t0 < seconds:
    while started < int((time.monotonic() - t0) * 2000 / 60):
        children.append(subprocess.Popen([work, "burn", "2"], stdout=subprocess.DEVNULL))
        started += 1
    children = [c for c in children if c.poll() is None]
    time.sleep(0.005)
for c in children:
    c.wait()
elapsed = time.monotonic() - t0
s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"started": started, "seconds": elapsed,
                  "cpu_s": s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime,
                  "children_faults": c.ru_minflt + c.ru_majflt}))
"""


class Cgroup:
    """A cgroup2 directory of this test run, /pmbpf-SUITE-PID-TAG; skips where
    no cgroup2 hierarchy is mounted."""

    def __init__(self, suite, tag):
        mnt = cgroup2_mount()
        if not mnt:
            pytest.skip("no cgroup v2 hierarchy mounted")
        self.rel = f"/pmbpf-{suite}-{os.getpid()}-{tag}"
        self.path = mnt + self.rel
        os.mkdir(self.path)

    def enter(self):
        """Move the calling process (a preexec_fn's child) into it."""
        with open(self.path + "/cgroup.procs", "w") as f:
            f.write("0")

    def usage_ns(self):
        """cpu.stat's usage_usec, in ns."""
        with open(self.path + "/cpu.stat") as f:
            return int(f.readline().split()[1]) * 1000

    def remove(self):
        rmdir_retry(self.path)


def catches(pid, sig):
    """Whether process pid has a handler for sig (SigCgt of its status)."""
    with open(f"/proc/{pid}/status") as f:
        caught = next(int(l.split()[1], 16) for l in f if l.startswith("SigCgt:"))
    return bool(caught & (1 << (sig - 1)))


def rmdir_retry(path, tries=50, wait=0.1):
    """rmdir a cgroup directory, again while it is busy (its last task not yet
    gone); gone already is done."""
    for _ in range(tries):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(wait)


class FileRecord:
    """pmbpf record -o json ARGS to a file, read when it stops (a pipe nobody
    reads fills, and pmbpf's collections then wait on the write)."""

    def __init__(self, *args):
        self.args = list(args)
        # appended to by pmbpf, read here through another open file: a shared
        # offset would have pmbpf's writes land where this side last read
        self.out = tempfile.NamedTemporaryFile("r", delete=True)
        with open(self.out.name, "a") as w:
            self.proc = subprocess.Popen([PMBPF, "record", "-o", "json"] + self.args,
                                         stdout=w, stderr=subprocess.PIPE, text=True)

    def wait_started(self, timeout=60):
        """Until the session record is written (the programs are attached).
        60 s: five recorders verifying their BPF programs at once on a loaded
        2-CPU host once took over 30 s."""
        deadline = time.monotonic() + timeout
        while True:
            self.out.seek(0)
            if '"session"' in self.out.readline():
                return self
            if self.proc.poll() is not None or time.monotonic() >= deadline:
                # its stderr ends only when it does: reading a live one's hung CI
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("pmbpf did not start: " + self.proc.stderr.read())
            time.sleep(0.02)

    def stop(self):
        """SIGINT; its records."""
        self.proc.send_signal(signal.SIGINT)
        _, err = self.proc.communicate(timeout=30)
        assert self.proc.returncode == 0, err
        self.out.seek(0)
        self.recs = [json.loads(l) for l in self.out.read().splitlines()]
        self.out.close()
        return self.recs

    def of(self, type_):
        return [r for r in self.recs if r["type"] == type_]


class Recorder:
    """pmbpf record -o json in the background; records parsed as they come."""

    def __init__(self, args, cpu=None, wrap=()):
        cmd = list(wrap) + [PMBPF, "record", "-o", "json"] + list(args)
        if cpu is not None:
            cmd = ["taskset", "-c", str(cpu)] + cmd
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.records = []
        self.last = time.time()  # when the last record came
        self.read_error = None
        self.started = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        if not self.started.wait(30):
            self.proc.kill()
            raise RuntimeError("pmbpf did not start: " + self.proc.stderr.read())

    def _read(self):
        try:
            for line in self.proc.stdout:
                rec = json.loads(line)
                self.records.append(rec)
                self.last = time.time()
                if rec["type"] == "session":
                    self.started.set()
        except Exception as e:  # noqa: BLE001 (said by stalled())
            self.read_error = f"{type(e).__name__}: {e}"
        self.started.set()

    def stalled(self, waited):
        """Why no record came: pmbpf exited (its status and stderr), or it runs
        but wrote nothing for a while (its state and where the kernel has it)."""
        rc = self.proc.poll()
        if rc is not None:
            return (f"pmbpf exited {rc} after {len(self.records)} records: "
                    + self.proc.stderr.read()[-2000:])
        where, pids = {}, [self.proc.pid]
        while pids:  # pmbpf and what it runs under (env, unshare --fork)
            pid = pids.pop()
            for f in ("stat", "wchan", "stack", "syscall", f"task/{pid}/children"):
                try:
                    with open(f"/proc/{pid}/{f}") as fh:
                        where[f"{pid}/{f}"] = fh.read().strip()[:600]
                except OSError as e:
                    where[f"{pid}/{f}"] = str(e)
            pids += [int(c) for c in where[f"{pid}/task/{pid}/children"].split() if c.isdigit()]
        return (f"pmbpf (pid {self.proc.pid}) wrote no record for "
                f"{time.time() - self.last:.1f} s ({waited} s waited, {len(self.records)} "
                f"records, reader {'alive' if self.reader.is_alive() else 'ended'}"
                f"{': ' + self.read_error if self.read_error else ''}): {where}")

    def wait_intervals(self, n, timeout=30):
        """Wait until n more system records (interval ends) have arrived."""
        target = self.count("system") + n
        end = time.time() + timeout
        while self.count("system") < target:
            if time.time() > end or self.proc.poll() is not None:
                raise RuntimeError("pmbpf stopped reporting: " + self.stalled(timeout))
            time.sleep(0.02)

    def count(self, type_):
        return sum(1 for r in list(self.records) if r["type"] == type_)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        self.reader.join(5)
        err = self.stderr = self.proc.stderr.read()
        assert self.proc.returncode == 0, f"pmbpf exited {self.proc.returncode}: {err}"
        return self.records

    def of_type(self, type_):
        return [r for r in self.records if r["type"] == type_]

    def rows(self, pid):
        return [r for r in self.records if r["type"] == "process" and r["pid"] == pid]

    def total(self, pid, field):
        rows = self.rows(pid)
        if field in ("oncpu_ns", "voluntary_switches", "involuntary_switches", "migrations"):
            return sum(r[field] for r in rows)
        return sum(r["events"][field]["raw"] for r in rows)


def work(*args, **kw):
    """Run a workload to completion; returns its JSON report lines."""
    out = subprocess.run([WORK] + [str(a) for a in args], check=True, capture_output=True,
                         text=True, **kw).stdout
    return [json.loads(line) for line in out.splitlines()]


def final_figures(proc):
    """Read a child's output to its end, then the kernel's final figures of it
    while it is a zombie (exited, not yet reaped): /proc/PID/schedstat (on-CPU
    ns, run-queue wait ns, times run) and the switch counts of /proc/PID/status.
    Returns (report lines, figures); the child is reaped."""
    out = proc.stdout.read()
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    with open(f"/proc/{proc.pid}/schedstat") as f:
        oncpu, delay, runs = (int(x) for x in f.read().split()[:3])
    fig = {"oncpu_ns": oncpu, "run_delay_ns": delay, "runs": runs}
    with open(f"/proc/{proc.pid}/status") as f:
        for line in f:
            if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                k, v = line.split(":")
                fig[k] = int(v)
    proc.wait()
    assert proc.returncode == 0, proc.returncode
    return [json.loads(line) for line in out.splitlines()], fig


@pytest.fixture
def recorder():
    started = []

    def start(*args, cpu=None, wrap=()):
        r = Recorder(args, cpu=cpu, wrap=wrap)
        started.append(r)
        return r

    yield start
    for r in started:
        if r.proc.poll() is None:
            r.proc.kill()
            r.proc.wait()


def init_switch_ins():
    """How many times the threads of the host's init (pid 1) were switched in
    (the run count of each one's /proc/PID/task/TID/schedstat). On this VM no
    switch away from one is reported to any tracer (docs/findings.md): each
    is a context switch /proc/stat counts and the switch program never sees."""
    n = 0
    for path in glob.glob("/proc/1/task/*/schedstat"):
        try:
            with open(path) as f:
                n += int(f.read().split()[2])
        except (OSError, IndexError, ValueError):
            pass  # a thread that exited meanwhile
    return n


def collections(systems):
    """The collections' durations (ms) at the ends of each interval, and per
    interval the time (ns, all CPUs) in which a CPU's flush and the counters'
    read are apart. The first interval starts at the session's first flush,
    which is not timed: 5 ms are allowed for it."""
    polls = [5.0] + [s["poll_ms"] for s in systems]
    return polls, [(a + b) * 1e6 * s["cpus"] + 100e3
                   for a, b, s in zip(polls, polls[1:], systems)]


def count_slack(rates, jitter, i, cpus):
    """What an event counts while interval i's collections run, at up to twice
    the highest rate (per ns) of this and the next interval."""
    return 2 + 2 * max(rates[i:i + 2]) * jitter[i] / cpus


def assert_wakeup_mode(recs, mode):
    """record --wakeup-progs (mode on) took effect: the wakeup programs' call count is
    reported where they run (on), and null where the switch program reads the
    scheduler's sched_info instead (off, the default on a kernel that keeps it)."""
    wakeups = [r["wakeups"] for r in recs if r["type"] == "system"]
    assert wakeups
    if mode != "off":
        assert all(isinstance(w, int) for w in wakeups), wakeups
    elif os.path.exists("/proc/self/schedstat"):
        assert all(w is None for w in wakeups), wakeups


@pytest.fixture(params=["rest", "busy"])
def host(request):
    """The host at rest (as the other tests leave it), or busy: a spinner per CPU
    and a fork storm, outside the cgroups measured (tests/test_oncpu.py,
    tests/test_filter.py)."""
    procs = []
    if request.param == "busy":
        for _ in range(os.cpu_count()):
            procs.append(subprocess.Popen([WORK, "spin", "60"], stdout=subprocess.DEVNULL))
        procs.append(subprocess.Popen(["sh", "-c", "while :; do /bin/true; done"],
                                      stdout=subprocess.DEVNULL))
    yield request.param
    for p in procs:
        p.kill()
        p.wait()
