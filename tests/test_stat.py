# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""pmbpf stat -- CMD: totals of a command and its children, against perf stat
and the command's own accounting; the report's destination, signals and the
command's cgroup."""
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import time

import pytest

import conftest
from conftest import PMBPF, WORK, needs_root

pytestmark = needs_root


def pmbpf_stat(tmp_path, *args, opts=(), events="page-faults,task-clock"):
    """Run pmbpf stat -o json -O FILE; returns the process and the document."""
    out = tmp_path / f"stat-{time.monotonic_ns()}.json"
    p = subprocess.run([PMBPF, "stat", "-o", "json", "-O", str(out), "-e", events] +
                       list(opts) + ["--"] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=300)
    text = out.read_text()
    return p, (json.loads(text) if text else None)


def perf_stat(*args):
    p = subprocess.run(["perf", "stat", "-x", ",", "-e", "page-faults,task-clock", "--"] +
                       [str(a) for a in args], capture_output=True, text=True, timeout=120)
    out = {}
    for line in p.stderr.splitlines():
        f = line.split(",")
        if len(f) > 3 and f[2] in ("page-faults", "task-clock"):
            out[f[2]] = float(f[0])
    return out


STALE_NOTE = re.compile(r"^pmbpf: \S+/pmbpf-stat-\d+-\d+, left by a killed pmbpf stat or profile, "
                        r"still holds processes: .*\n", re.M)


def own_stderr(text):
    """pmbpf's stderr less its notes of another pmbpf's cgroup still holding
    processes: a suite running beside this one (test_stale_cgroups_... makes
    such a cgroup for a moment) is named in every pmbpf stat started then."""
    return STALE_NOTE.sub("", text)


def cgroup2_mount():
    mnt = conftest.cgroup2_mount()
    if not mnt:
        raise RuntimeError("no cgroup2 mount")
    return mnt


def test_children_counted_like_perf_stat(tmp_path):
    n, pages = 30, 800
    p, doc = pmbpf_stat(tmp_path, WORK, "spawn", n, pages)
    assert p.returncode == 0, p.stderr
    run = doc["runs"][0]
    assert run["processes"] == n + 1
    faults = run["raw"]["page-faults"]["value"]
    assert faults >= n * pages
    ref = perf_stat(WORK, "spawn", n, pages)
    # perf stat counts the same command and children (inherit) in another run:
    # page faults repeat from run to run, CPU time does not (up to +-30% here)
    assert abs(faults - ref["page-faults"]) <= 0.01 * ref["page-faults"], (faults, ref)
    # CPU time against the same run's own accounting: the parent's CPU clock
    # plus its waited-for children's (getrusage)
    own = [json.loads(l) for l in p.stdout.splitlines() if '"what":"spawn"' in l][0]
    truth = own["cpu_ns"] + own["children_cpu_ns"]
    assert abs(run["raw"]["task-clock"]["value"] - truth) <= 0.05 * truth + 3e6, (run, own)


def test_counted_from_exec_like_perf_stat(tmp_path):
    """The command is counted from its exec, as perf stat counts it
    (enable_on_exec): not the child's work between its fork and the exec.
    /bin/true's page faults within 3 of perf stat's (medians of 7 runs each;
    from the fork they were 26-28 more), and its CPU time is not above its
    wall time in any run."""
    if not shutil.which("perf"):
        pytest.skip("perf is not installed: nothing to compare with")
    p, doc = pmbpf_stat(tmp_path, "/bin/true", opts=("-r", "7"))
    assert p.returncode == 0, p.stderr
    mine = [r["metrics"]["page-faults"] for r in doc["runs"]]
    ref = []
    for _ in range(7):
        ref.append(perf_stat("/bin/true")["page-faults"])
    assert abs(statistics.median(mine) - statistics.median(ref)) <= 3, (mine, ref)
    for r in doc["runs"]:
        assert 0 < r["metrics"]["cpu-time"] <= r["metrics"]["wall-time"], r


def test_fork_heavy_switches_equal_the_kernels(tmp_path):
    """The switches of a command that forks: the kernel's own count of its
    children (wait4's ru_nvcsw + ru_nivcsw) plus the parent's (/proc, read
    before its last switch out at exit), within 5% of the processes. (perf
    stat counts about one fewer per child: an exiting task's last switch,
    which the kernel does count, is after perf's per-task counter has been
    taken off it.)"""
    n = 150
    p, doc = pmbpf_stat(tmp_path, WORK, "spawn", n, 1, events="context-switches")
    assert p.returncode == 0, p.stderr
    run = doc["runs"][0]
    assert run["processes"] == n + 1
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    kids = sum(l["nvcsw"] + l["nivcsw"] for l in lines if "child" in l)
    own = [l for l in lines if l.get("what") == "spawn"][0]
    truth = kids + own["nvcsw"] + own["nivcsw"]
    got = run["metrics"]["voluntary-switches"] + run["metrics"]["involuntary-switches"]
    assert got == run["metrics"]["context-switches"]
    # each child switches out at least at its end, but wait4 may reap one before
    # that last switch is in its rusage (a child with 0, seen at load 50)
    assert kids >= 0.95 * n, lines
    assert abs(got - (truth + 1)) <= 0.05 * n, (got, truth, kids)


def test_burn_and_exit_code(tmp_path):
    p, doc = pmbpf_stat(tmp_path, "sh", "-c", f"{WORK} burn 300; exit 7")
    run = doc["runs"][0]
    assert p.returncode == 7 and run["exit_code"] == 7
    burn = json.loads(p.stdout.splitlines()[0])["cpu_ns"]  # the workload's own CPU time
    # plus the shell's start and exit, measured alike just now
    _, ref = pmbpf_stat(tmp_path, "sh", "-c", "exit 7")
    start = ref["runs"][0]["metrics"]["cpu-time"]
    assert abs(run["metrics"]["cpu-time"] - burn - start) <= 0.02 * burn + 5e6, (run, burn, start)
    assert run["processes"] == 2


def test_command_not_found():
    p = subprocess.run([PMBPF, "stat", "--", "/no/such/command"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 127
    assert "pmbpf: cannot run /no/such/command: No such file or directory" in p.stderr


def test_no_command():
    p = subprocess.run([PMBPF, "stat"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stderr.startswith("pmbpf: no command given")


def test_report_on_stderr_command_stdout_its_own():
    """Issue 11: `pmbpf stat -o json -- echo hello | jq` broke on the report."""
    p = subprocess.run([PMBPF, "stat", "-o", "json", "-e", "task-clock", "--", "echo", "hello"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "hello\n"
    docs = [json.loads(l) for l in p.stderr.splitlines() if l.startswith("{")]
    assert len(docs) == 1 and docs[0]["command"] == ["echo", "hello"]
    # the table too
    p = subprocess.run([PMBPF, "stat", "-e", "task-clock", "--", "echo", "hello"],
                       capture_output=True, text=True, timeout=60)
    assert p.stdout == "hello\n" and "Counts for 'echo hello' and its children (1 process):" \
        in p.stderr, p.stderr
    # -O - asks for stdout explicitly
    p = subprocess.run([PMBPF, "stat", "-o", "json", "-O", "-", "-e", "task-clock", "--",
                        "true"], capture_output=True, text=True, timeout=60)
    assert json.loads(p.stdout)["type"] == "stat"


def test_report_write_errors(tmp_path):
    p = subprocess.run([PMBPF, "stat", "-O", "/dev/full", "-e", "task-clock", "--", "true"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1
    assert own_stderr(p.stderr).strip() == "pmbpf: cannot write /dev/full: No space left on device"
    p = subprocess.run([PMBPF, "stat", "-O", str(tmp_path / "no" / "dir"), "--", "true"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and p.stderr.startswith("pmbpf: cannot create ")
    # EPIPE: the reader of the report is gone before it is written
    r, w = os.pipe()
    proc = subprocess.Popen([PMBPF, "stat", "-O", "-", "-e", "task-clock", "--", "true"],
                            stdout=w, stderr=subprocess.PIPE, text=True)
    os.close(w)
    os.close(r)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and own_stderr(err) == "", err


def test_command_gets_default_sigpipe():
    """pmbpf ignores SIGPIPE; the command must not inherit that."""
    p = subprocess.run([PMBPF, "stat", "-e", "task-clock", "--", "sh", "-c",
                        "yes | head -c 1 >/dev/null"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0
    assert "Broken pipe" not in p.stderr, p.stderr


def test_repeat_summary_and_exact_page_faults(tmp_path):
    pages = 2000
    hidden = conftest.init_switch_ins()
    p, doc = pmbpf_stat(tmp_path, WORK, "touch", pages, opts=("-r", "5"))
    hidden = conftest.init_switch_ins() - hidden
    assert p.returncode == 0, p.stderr
    assert doc["schema"] == 1 and doc["repeat"] == 5 and len(doc["runs"]) == 5
    assert doc["host"]["kernel"] == os.uname().release and doc["host"]["cpu_model"]
    assert doc["host"]["pmu"] in ("counting", "none", "not-used")
    assert [e["name"] for e in doc["events"]] == ["page-faults", "task-clock"]
    own = [json.loads(l) for l in p.stdout.splitlines()]
    assert len(own) == 5
    pf = [r["metrics"]["page-faults"] for r in doc["runs"]]
    # the workload's own count (getrusage) less the faults of the child
    # between its fork and its exec, which getrusage has and pmbpf, counting
    # from the exec, has not (20-30 here): each run alone, not inflated by
    # what ran before it (a child that moved itself in was credited the
    # CPU's whole span since the previous run: +100 to +900 in every run
    # after the first). On a loaded machine about one run in 25 takes tens
    # to hundreds more, sometimes two in a row (cause not established): the
    # median run is held to the bound, every run to the floor.
    # The truth is minor plus major faults, as the page-faults event counts
    # them: a fault the kernel retries (VM_FAULT_RETRY: a page lock held by
    # another process mapping the same file, on a busy host) is accounted
    # as a major one (mm_account_fault(): FAULT_FLAG_TRIED).
    # A run below the floor is a span of the command's whose switch-in no
    # tracer saw: this VM reports no switch of its init's threads (pid 1,
    # docs/findings.md), and such a span's counter deltas are split by time
    # (bpf/attribute.bpf.h): 1,610 and 1,988 faults for 2,095. Two such
    # sessions of 280 (/tmp/tidy7/pfstats.py, two at once beside loadgen)
    # had spans_unmatched 1 each, the 278 others 0. So no run falls below
    # unless init's threads switched in meanwhile, and no more runs than they
    # did; a kernel that reports every switch holds every run to the floor.
    truths = [t["minflt"] + t["majflt"] for t in own]
    within = [truth - 40 <= mine <= truth for mine, truth in zip(pf, truths)]
    assert sum(within) >= 3, (pf, own)
    below = [(mine, truth) for mine, truth in zip(pf, truths) if mine < truth - 40]
    assert len(below) <= hidden, (below, hidden, own)
    s = doc["summary"]["page-faults"]
    assert s["n"] == 5 and s["min"] == min(pf) and s["max"] == max(pf)
    assert abs(s["mean"] - statistics.mean(pf)) < 1e-6
    assert abs(s["stddev"] - statistics.stdev(pf)) < 1e-3
    assert abs(s["rsd_pct"] - 100 * statistics.stdev(pf) / statistics.mean(pf)) < 1e-3
    tc = [r["metrics"]["task-clock"] for r in doc["runs"]]
    assert abs(doc["summary"]["task-clock"]["mean"] - statistics.mean(tc)) < 1
    # the table
    p = subprocess.run([PMBPF, "stat", "-r", "3", "-e", "page-faults", "--", WORK, "touch",
                        "100"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0
    assert "3 runs:" in p.stderr and re.search(r"^ page-faults +[\d.]+ ", p.stderr, re.M), p.stderr


def test_repeat_stops_at_a_failing_run(tmp_path):
    p, doc = pmbpf_stat(tmp_path, "sh", "-c", "exit 3", opts=("-r", "4"))
    assert p.returncode == 3 and doc is None
    assert own_stderr(p.stderr).strip() == "pmbpf: run 1 (A) exited with 3: no report"


def test_killed_command_is_not_an_exit_code(tmp_path):
    """Issue 34: a command killed by SIGKILL was reported as "exit code 137"."""
    p, doc = pmbpf_stat(tmp_path, "sh", "-c", "kill -KILL $$")
    run = doc["runs"][0]
    # pmbpf's own status stays a shell's 128 + N; the report says what happened
    assert p.returncode == 128 + signal.SIGKILL
    assert run["exit_code"] is None and run["signal"] == "SIGKILL", run
    p, doc = pmbpf_stat(tmp_path, "sh", "-c", "exit 5")
    assert doc["runs"][0]["exit_code"] == 5 and doc["runs"][0]["signal"] is None
    p = subprocess.run([PMBPF, "stat", "-e", "task-clock", "--", "sh", "-c", "kill -TERM $$"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 128 + signal.SIGTERM
    assert re.search(r"s +wall time, killed by SIGTERM$", p.stderr, re.M), p.stderr
    assert "exit code" not in p.stderr, p.stderr
    p, doc = pmbpf_stat(tmp_path, "sh", "-c", "kill -KILL $$", opts=("-r", "2"))
    assert p.returncode == 128 + signal.SIGKILL and doc is None
    assert own_stderr(p.stderr).strip() == "pmbpf: run 1 (A) was killed by SIGKILL: no report"


def test_cgroup_name_is_unique_per_boot():
    """Issue 11: pmbpf-stat-PID was reused by a later run with the same pid."""
    p = subprocess.run([PMBPF, "stat", "-e", "task-clock", "--", "cat", "/proc/self/cgroup"],
                       capture_output=True, text=True, timeout=60)
    line = [l for l in p.stdout.splitlines() if l.startswith("0::")][0]
    m = re.search(r"/pmbpf-stat-(\d+)-(\d+)/run-1$", line)
    assert m, line
    assert int(m.group(2)) > 0  # the start time of that pmbpf: no later process has both


def test_stale_cgroups_removed_busy_ones_named(tmp_path):
    mnt = cgroup2_mount()
    # this test's own pid with a start time it never had: its pmbpf is gone
    empty = os.path.join(mnt, f"pmbpf-stat-{os.getpid()}-1")
    busy = os.path.join(mnt, f"pmbpf-stat-{os.getpid()}-2")
    os.mkdir(empty)
    os.mkdir(os.path.join(empty, "run-1"))
    os.mkdir(busy)
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        with open(os.path.join(busy, "cgroup.procs"), "w") as f:
            f.write(str(sleeper.pid))
        p = subprocess.run([PMBPF, "doctor"], capture_output=True, text=True, timeout=60)
        assert re.search(r"stale-cgroups +\d+ cgroups? left by a killed pmbpf stat or profile "
                         r"\(\d+ holding processes\)", p.stdout), p.stdout
        p = subprocess.run([PMBPF, "stat", "-e", "task-clock", "--", "true"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0
        assert not os.path.exists(empty)
        assert os.path.isdir(busy)
        assert f"pmbpf: {busy}, left by a killed pmbpf stat or profile, still holds processes" in p.stderr
    finally:
        sleeper.kill()
        sleeper.wait()
        for d in (os.path.join(empty, "run-1"), empty, busy):
            if os.path.isdir(d):
                for _ in range(50):
                    try:
                        os.rmdir(d)
                        break
                    except OSError:
                        time.sleep(0.1)


def start_ignoring(sigs):
    """pmbpf stat of a command that ignores sigs; returns once it runs."""
    proc = subprocess.Popen([PMBPF, "stat", "-e", "task-clock", "--", "sh", "-c",
                             f"trap '' {sigs}; echo ready; exec sleep 60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    return proc


def test_sigterm_forwarded_as_sigterm():
    """Issue 11: SIGTERM went on as SIGINT, so timeout could not stop a command ignoring it."""
    proc = start_ignoring("INT")
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert time.monotonic() - t0 < 20  # not the command's 60 s


def test_repeated_signal_kills():
    proc = start_ignoring("INT TERM")
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    assert proc.poll() is None  # the command ignores it: pmbpf waits
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    assert proc.returncode == 128 + signal.SIGKILL


def stop_before_start(tmp_path, sig, opts=()):
    """pmbpf stat sent sig once as soon as it has its handler, while its
    session opens (the BPF load takes 0.1 s or more): the process, its
    stderr, its JSON report (None when it wrote none) and whether the
    command ran (it touches a file first). None when the signal came too
    late, after the command had started."""
    out = tmp_path / f"stat-{time.monotonic_ns()}.json"
    ran = tmp_path / f"ran-{time.monotonic_ns()}"
    p = subprocess.Popen([PMBPF, "stat", "-o", "json", "-O", str(out), "-e", "task-clock"] +
                         list(opts) + ["--", "sh", "-c", f"touch {ran}; exec sleep 30"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while p.poll() is None and not conftest.catches(p.pid, sig):
            assert time.monotonic() < deadline, "pmbpf took no handler in 30 s"
            time.sleep(0.0002)
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
    finally:
        p.kill()
        p.wait()
    if ran.exists():
        return None
    text = out.read_text() if out.exists() else ""
    return p, err, (json.loads(text) if text else None)


@pytest.mark.parametrize("sig,opts", [(signal.SIGINT, ()), (signal.SIGTERM, ()),
                                      (signal.SIGINT, ("-r", "3"))],
                         ids=["INT", "TERM", "INT-r3"])
def test_stopped_before_the_command_starts(tmp_path, sig, opts):
    """A stop signal while the session opens, before the command started:
    the build before this test printed a report of "0 runs" (or a JSON
    document with no run) and exited 0. Now one line says that the command
    did not run, no report, exit 128 + the signal, as -r N stopped between
    runs does. Ground truth that the command did not run: it touches a file
    first; a signal that came too late (the command ran) is tried again."""
    for _ in range(5):
        got = stop_before_start(tmp_path, sig, opts)
        if got:
            break
    else:
        pytest.fail("the signal came after the command had started in 5 tries of 5")
    p, err, doc = got
    assert p.returncode == 128 + sig, err
    assert own_stderr(err) == "pmbpf: interrupted before the command ran: no report\n", err
    assert doc is None, doc
