# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""pmbpf top, driven for real in tmux: keys in with send-keys, the screen out with capture-pane.

Workloads run under a command name of their own (a copy of tests/workloads/work)
so that the filter can single them out on a busy host; the spinning one runs at
nice -20 so that it gets a whole CPU even while other tests share the two cores.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import BUILD, PMBPF, WORK, cgroup2_mount, claimed_cpu, needs_root

pytestmark = needs_root

TMUX = shutil.which("tmux")
needs_tmux = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (make deps installs it)")

EVENTS = "task-clock,page-faults"
# The workloads' command name, this run's own: the filter matches a part of
# the name, and another suite's test_top running beside this one must not
# show in its rows. The pid in a fixed width (pid_max is at most 2^22: 7
# digits), so that no run's name is a part of another's; 11 characters, in
# the 15 a command name keeps.
COMM = f"ptop{os.getpid():07d}"


class Pane:
    """One `pmbpf top` in its own tmux server; the shell reports how it ended."""

    def __init__(self, args, x=200, y=60):
        self.sock = os.path.join(tempfile.gettempdir(),
                                 f"pmbpf-top-{os.getpid()}-{time.monotonic_ns()}.tmux")
        # no core file from the crash test; afterwards, the exit code and the tty mode
        cmd = (f"ulimit -c 0; {PMBPF} top {args}; echo EXIT=$?; "
               "stty -a | grep -ow -e -icanon -e icanon; sleep 120")
        subprocess.run(self.tmux("new-session", "-d", "-s", "t", "-x", str(x), "-y", str(y),
                                 "-c", "/", cmd), check=True)

    def tmux(self, *args):
        return [TMUX, "-S", self.sock, "-f", "/dev/null"] + list(args)

    def keys(self, *keys):
        subprocess.run(self.tmux("send-keys", "-t", "t") + list(keys), check=True)

    def literal(self, text):
        subprocess.run(self.tmux("send-keys", "-t", "t", "-l", text), check=True)

    def screen(self):
        return subprocess.run(self.tmux("capture-pane", "-p", "-t", "t"), check=True,
                              capture_output=True, text=True).stdout.rstrip("\n").split("\n")

    def selected(self):
        """PID (or cgroup) on the highlighted row: cyan background, or reverse video."""
        lines = subprocess.run(self.tmux("capture-pane", "-e", "-p", "-t", "t"), check=True,
                               capture_output=True, text=True).stdout.rstrip("\n").split("\n")
        for line in lines[:-1]:
            plain = re.sub(r"\x1b\[[0-9;]*m", "", line)
            if re.match(r"\s*(PID|PROCS) ", plain):
                continue
            if re.search(r"\x1b\[([0-9;]*;)?(46|7)(;[0-9;]*)?m", line) and plain.split():
                return plain.split()[0]
        return None

    def resize(self, x, y):
        subprocess.run(self.tmux("resize-window", "-t", "t", "-x", str(x), "-y", str(y)),
                       check=True)

    def wait(self, pred, timeout=15, what="screen", poll=0.1):
        end = time.time() + timeout
        while True:
            s = self.screen()
            r = pred(s)
            if r:
                return r
            if time.time() > end:
                raise AssertionError(f"timed out waiting for {what}:\n" + "\n".join(s))
            time.sleep(poll)

    def top_pid(self):
        shell = subprocess.run(self.tmux("display-message", "-p", "-t", "t", "#{pane_pid}"),
                               check=True, capture_output=True, text=True).stdout.strip()
        for task in os.listdir(f"/proc/{shell}/task"):
            with open(f"/proc/{shell}/task/{task}/children") as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        return None

    def close(self):
        subprocess.run(self.tmux("kill-server"), capture_output=True)
        if os.path.exists(self.sock):
            os.unlink(self.sock)


@pytest.fixture
def pane():
    panes = []

    def start(args, x=200, y=60):
        p = Pane(args, x, y)
        panes.append(p)
        p.wait(lambda s: any(re.match(r"\s*(PID|PROCS) ", l) for l in s) and
               "processes, " in "\n".join(s), timeout=30, what="the first interval")
        return p

    yield start
    for p in panes:
        p.close()


@pytest.fixture(scope="module")
def workbin(tmp_path_factory):
    """The test workload under a command name nothing else on the host has."""
    path = str(tmp_path_factory.mktemp("top") / COMM)
    shutil.copy(WORK, path)
    return path


def spawn(*args, cgroup=None, nice=0, stdin=None):
    """Start a workload (in a cgroup); nice < 0 also for its session's autogroup,
    which is what the scheduler weighs against other sessions' work."""
    cmd = [str(a) for a in args]
    pre = f'echo $$ > "{cgroup}/cgroup.procs" && ' if cgroup else ""
    p = subprocess.Popen(["nice", "-n", str(nice), "sh", "-c", pre + 'exec "$0" "$@"'] + cmd,
                         stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, start_new_session=nice < 0)
    if nice < 0:
        try:
            with open(f"/proc/{p.pid}/autogroup", "w") as f:
                f.write(str(nice))
        except OSError:
            pass  # no autogroup in this kernel: nice alone decides
    return p


def stop_and_remove(procs, cg):
    """Kill the workloads, then remove their cgroup once it is empty."""
    for p in procs:
        p.kill()
        p.wait()
    for _ in range(50):
        try:
            os.rmdir(cg)
            break
        except OSError:
            time.sleep(0.1)


def table(screen):
    """The column titles and rows (as dicts, by title) of the table on screen."""
    for i, line in enumerate(screen):
        if re.match(r"\s*(PID|PROCS) ", line):
            head = line.split()
            rows = []
            for l in screen[i + 1:-1]:
                # the lines above the footer (delays, a CPI outlier) are no rows
                if l.startswith("Delayed by:") or " outlier: " in l:
                    break
                cells = l.split()
                if len(cells) == len(head):
                    rows.append(dict(zip(head, cells)))
            return head, rows
    return None, []


def show(screen):
    return "\n" + "\n".join(screen)


def status(screen):
    """The status line (view, sort, filters), wrapped or not."""
    for i, line in enumerate(screen):
        if line.startswith("["):
            end = next((j for j in range(i + 1, len(screen))
                        if re.match(r"\s*(PID|PROCS) ", screen[j])), i + 1)
            return " ".join(screen[i:end])
    return ""


def ms(cell):
    """A clock-event cell (CPU time per second) in ms."""
    m = re.fullmatch(r"([\d.]+)(us|ms|s)", cell)
    assert m, cell
    return float(m.group(1)) * {"us": 1e-3, "ms": 1, "s": 1e3}[m.group(2)]


def count(cell):
    m = re.fullmatch(r"([\d.]+)([KMGTPE]?)", cell)
    assert m, cell
    return float(m.group(1)) * 1000 ** " KMGTPE".index(m.group(2) or " ")


def row_of(screen, pid):
    _, rows = table(screen)
    return next((r for r in rows if r.get("PID") == str(pid)), None)


def proc_truth(pids):
    """CPU seconds (/proc/PID/schedstat, in ns: utime and stime are in ticks,
    too coarse for a few points of a 2 s interval) and page faults
    (/proc/PID/stat) of processes so far."""
    cpu = faults = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            x = f.read().rsplit(")", 1)[1].split()
        faults += int(x[7]) + int(x[9])  # minflt, majflt
        with open(f"/proc/{pid}/schedstat") as f:
            cpu += int(f.read().split()[0]) / 1e9
    return cpu, faults


def cgroup_cpu(path):
    with open(f"{path}/cpu.stat") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("usage_usec")) / 1e6


def next_interval(t, truth):
    """The screen of the next full interval, and the ground truth over it, per second:
    truth() is read as soon as each of two refreshes shows. No keys may be pending;
    the footer is left out, as the last key may have changed only that."""
    s0 = t.screen()
    s1 = t.wait(lambda s: s[:-1] != s0[:-1] and s, what="a refresh", poll=0.01)
    a, ta = truth(), time.monotonic()
    s2 = t.wait(lambda s: s[:-1] != s1[:-1] and s, what="the next refresh", poll=0.01)
    b, tb = truth(), time.monotonic()
    return s2, [(y - x) / (tb - ta) for x, y in zip(a, b)]


def host_has_pmu():
    p = subprocess.run([PMBPF, "record", "-o", "json", "-c", "1", "-i", "0.1"],
                       capture_output=True, text=True, timeout=30)
    return json.loads(p.stdout.splitlines()[0])["pmu"]


def well_formed(screen, width, height):
    assert len(screen) <= height
    assert screen[0].startswith("pmbpf top "), screen[0]
    assert all(len(l) <= width for l in screen), [l for l in screen if len(l) > width]
    head, rows = table(screen)
    assert head and head[0] == "PID" and "CPU%" in head and "COMMAND" in head
    assert sum(1 for l in screen if re.match(r"\s*PID ", l)) == 1
    assert rows, screen
    assert screen[-1].startswith("?Help"), screen[-1]
    return head


def test_not_a_terminal():
    p = subprocess.run([PMBPF, "top", "-e", EVENTS], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pmbpf: ") and "pmbpf record" in lines[0], p


def test_bad_option():
    p = subprocess.run([PMBPF, "top", "-d", "0"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "invalid interval '0'" in p.stderr


@needs_tmux
def test_small_terminal_header_and_columns(pane):
    """Issue 34: at 80x24 the header took 9 of 24 lines, and the column sorted
    by was dropped while cpu-migrations/s stayed."""
    t = pane("-e page-faults,cpu-migrations")
    for _ in range(30):
        if "Sort: cpu-migrations/s" in status(t.screen()):
            break
        t.keys(">")
        time.sleep(0.15)
    t.wait(lambda s: "Sort: cpu-migrations/s" in status(s), what="sort by cpu-migrations/s")
    t.resize(80, 24)
    t.wait(lambda s: len(s) <= 24 and s[-1].startswith("?Help") and table(s)[0], what="80x24")
    time.sleep(0.6)
    s = t.screen()
    head = well_formed(s, 80, 24)
    # the sort column stays, whatever else goes
    assert "cpu-migrations/s" in head, show(s)
    # the header, column titles included, in 5 lines; each event's state in one
    assert next(i for i, l in enumerate(s) if re.match(r"\s*PID ", l)) <= 4, show(s)
    assert re.search(r"counting: page-faults, cpu-migrations$", s[1]), show(s)
    assert "Sort: cpu-migrations/s" in s[3], show(s)
    # by CPU%: the columns kept are the most useful ones
    t.keys("P")
    t.wait(lambda s: "Sort: CPU%" in status(s), what="sort by CPU%")
    time.sleep(0.6)
    s = t.screen()
    head = well_formed(s, 80, 24)
    assert "cpu-migrations/s" not in head, show(s)
    assert {"PID", "CPU%", "page-faults/s", "CSW/s", "RUNQ-p99", "COMMAND", "CGROUP"} <= \
        set(head), show(s)


@needs_tmux
def test_hot_column(pane):
    """--hot: a HOT column naming the spinner's function, the first to go when narrow."""
    spin = spawn(os.path.join(BUILD, "workloads", "profload"), "spin", 30)
    try:
        t = pane(f"--hot=99 -e {EVENTS} -p {spin.pid}")
        s = t.wait(lambda s: (row_of(s, spin.pid) or {}).get("HOT") == "prof_spin" and s,
                   what="prof_spin in HOT")
        head = table(s)[0]
        assert head.index("HOT") == head.index("COMMAND") + 1, show(s)
        t.resize(80, 24)
        s = t.wait(lambda s: table(s)[0] and "HOT" not in table(s)[0] and s, what="narrow")
        assert "COMMAND" in table(s)[0] and "CPU%" in table(s)[0], show(s)
    finally:
        spin.kill()
        spin.wait()


@needs_tmux
def test_figures_sort_filter_resize_quit(pane, workbin):
    pmu = host_has_pmu()
    spin = spawn(workbin, "spin", 180, nice=-20)
    gate = spawn(workbin, "gate", 500, 180, stdin=subprocess.PIPE, nice=-20)
    try:
        assert json.loads(gate.stdout.readline())["what"] == "ready"
        gate.stdin.write("go\n")
        gate.stdin.flush()
        # 2 s intervals: the page toucher works in bursts every 100 ms, ~20 per interval
        t = pane(f"-e cycles,instructions,{EVENTS} -d 2")
        s = t.screen()
        header = "\n".join(s[:6])
        assert "task-clock counting" in header and "page-faults counting" in header
        if not pmu:
            assert "cycles not-supported" in header
            assert "No hardware PMU on this host" in header
        # unfiltered: many processes; the filter leaves ours only
        assert len(table(s)[1]) > 3
        t.keys("/")
        t.literal(COMM)
        t.keys("Enter")
        t.wait(lambda s: "Filter: " + COMM in status(s) and s[-1].startswith("?Help") and
               row_of(s, spin.pid) and row_of(s, gate.pid), what="filtered rows")
        # against what the kernel says they did over the same interval, within 2
        # points (0.4 seen at load 7; a 4-point error used to pass) (the spinner
        # should get ~100%, but the CPUs are shared with other tests)
        s, (cpu, faults) = next_interval(t, lambda: (proc_truth([spin.pid])[0],
                                                     proc_truth([gate.pid])[1]))
        head, rows = table(s)
        assert {r["COMMAND"] for r in rows} == {COMM}, show(s)
        assert re.search(r"Shown: 2 of \d+", status(s)), show(s)
        sp, gt = row_of(s, spin.pid), row_of(s, gate.pid)
        assert cpu > 0.5 and faults > 1000, (cpu, faults)
        assert abs(float(sp["CPU%"]) - cpu * 100) <= 2, (cpu, show(s))
        assert abs(ms(sp["task-clock/s"]) - cpu * 1000) <= 20, (cpu, show(s))
        assert abs(count(gt["page-faults/s"]) - faults) <= 0.1 * faults, (faults, show(s))
        assert sp["USER"] == "root"
        if not pmu:  # not counting: a dash, never 0
            assert sp["cycles/s"] == sp["instructions/s"] == sp["IPC"] == "-"
            assert gt["cycles/s"] == "-"
        # default sort is CPU%: the spinner first
        assert rows[0]["PID"] == str(spin.pid)
        # the selection stays on its process across refreshes and sort orders
        t.keys("Down")
        t.wait(lambda s: t.selected() == str(gate.pid), what="selection on the 2nd row")
        t.keys("r")
        t.wait(lambda s: "(low first)" in status(s) and table(s)[1][0]["PID"] == str(gate.pid),
               what="reversed")
        assert t.selected() == str(gate.pid)
        t.keys("r")
        next_interval(t, lambda: ())
        assert t.selected() == str(gate.pid)
        t.keys("-")
        t.wait(lambda s: " every 1s " in s[0], what="a shorter interval")
        t.keys("+", "+")
        t.wait(lambda s: " every 3s " in s[0], what="a longer interval")
        # choose page-faults/s with '>': the page toucher comes first
        for _ in range(len(head)):
            if "Sort: page-faults/s" in status(t.screen()):
                break
            t.keys(">")
            time.sleep(0.15)
        s = t.wait(lambda s: "Sort: page-faults/s (high first)" in status(s) and s,
                   what="sort by page-faults/s")
        assert table(s)[1][0]["PID"] == str(gate.pid), show(s)
        t.keys("r")
        s = t.wait(lambda s: "(low first)" in status(s) and s, what="reversed sort")
        assert table(s)[1][0]["PID"] == str(spin.pid), show(s)
        # Esc clears the filter: others are back
        t.keys("Escape")
        t.wait(lambda s: "Filter: -" in status(s) and len(table(s)[1]) > 3, what="unfiltered")

        t.resize(80, 24)
        s = t.wait(lambda s: len(s) <= 24 and s[-1].startswith("?Help") and s, what="80x24")
        time.sleep(0.6)
        head = well_formed(t.screen(), 80, 24)
        assert "PID" in head and "CPU%" in head
        # paused, End and Home scroll to the last and first rows
        t.keys("p")
        t.wait(lambda s: "[PAUSED]" in s[0] + s[1], what="pause")
        t.keys("Home")
        time.sleep(0.3)
        # a screen read mid-redraw on a busy host had no status line yet. At
        # 80 columns the status line is cut there: "Shown: 10071" and no " of"
        # on a host of 10,072 processes (any of 1,000 or more, sorted by
        # page-faults/s), so the count of rows is the header's processes
        s = t.wait(lambda s: re.search(r"Shown: \d", status(s)) and s,
                   what="the status line after Home")
        first = table(s)[1][0]["PID"]
        total = int(re.search(r"^(\d+) processes, ", "\n".join(s), re.M).group(1))
        if total > len(table(s)[1]) + 1:
            t.keys("End")
            t.wait(lambda s: table(s)[1][0]["PID"] != first, what="End")
            t.keys("Home")
            t.wait(lambda s: table(s)[1][0]["PID"] == first, what="Home")
            t.keys("NPage")
            t.wait(lambda s: table(s)[1][0]["PID"] != first, what="PgDn")
            well_formed(t.screen(), 80, 24)
        t.keys("p")
        t.wait(lambda s: "[PAUSED]" not in s[0] + s[1], what="resume")
        t.resize(200, 60)
        t.wait(lambda s: len(s) > 24 and s[-1].startswith("?Help"), what="200x60")
        time.sleep(0.6)
        head = well_formed(t.screen(), 200, 60)
        assert "task-clock/s" in head and "CGROUP" in head

        t.keys("?")
        t.wait(lambda s: s[0].startswith("pmbpf top: keys"), what="help")
        t.keys("x")
        t.wait(lambda s: s[0].startswith("pmbpf top "), what="back from help")
        t.keys("q")
        s = t.wait(lambda s: "EXIT=0" in s and "canon" in s[-1] and s, what="exit")
        assert "icanon" in s and "-icanon" not in s, show(s)  # the terminal is cooked again
        assert not any(l.startswith("pmbpf top ") for l in s), show(s)
    finally:
        for p in (spin, gate):
            p.kill()
            p.wait()


def thread_cpu(pid):
    """CPU seconds of each thread of a process so far, by tid (/proc/PID/task/TID/schedstat)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out[tid] = int(f.read().split()[0]) / 1e9
        except OSError:
            pass
    return out


@needs_tmux
def test_thread_view(pane, workbin):
    """H shows threads (a TID column, each thread under its own name, its CPU%
    against the kernel's figure for the thread), and H again the processes."""
    # two threads that each burn 1 ms and sleep 1 or 2 ms (about 48% and 32%
    # of a CPU) at nice -20: what they get does not depend on the host's load,
    # so that top's interval and the test's readings of the kernel's figures
    # (taken as each refresh shows, later on a busy host) see the same rate.
    # (Two busy threads at nice 0 got what the load left them: 93.4% in top's
    # interval against 59.6% in the test's, on a loaded host.)
    pool = spawn(workbin, "naps", 30000, "1,2", nice=-20, stdin=subprocess.PIPE)
    try:
        t = pane(f"-e {EVENTS} -d 2")
        t.keys("H")
        t.keys("/")
        t.literal("nap-")
        t.keys("Enter")

        def threads(s):
            head, rows = table(s)
            mine = [r for r in rows if r["PID"] == str(pool.pid)]
            return head and "TID" in head and len(mine) == 2 and mine

        s = t.wait(lambda s: status(s).startswith("[threads]") and threads(s) and s,
                   timeout=30, what="the pool's threads")
        assert " threads, " in "\n".join(s[:6]), show(s)
        tids = sorted(t for t in thread_cpu(pool.pid) if t != str(pool.pid))
        assert len(tids) == 2, tids
        s, rates = next_interval(t, lambda: [thread_cpu(pool.pid).get(x, 0) for x in tids])
        rows = threads(s)
        assert rows, show(s)
        assert {r["COMMAND"] for r in rows} == {"nap-0", "nap-1"}, show(s)
        by_tid = dict(zip(tids, rates))
        # still napping (not done: 0% on both sides would prove nothing)
        assert all(r > 0.1 for r in rates), (by_tid, show(s))
        for r in rows:
            # as the process view's test: within 2 points of the kernel's figure
            assert abs(float(r["CPU%"]) - by_tid[r["TID"]] * 100) <= 2, (by_tid, show(s))
        t.keys("H")
        t.keys("Escape")
        t.wait(lambda s: status(s).startswith("[processes]") and "TID" not in table(s)[0] and
               row_of(s, pool.pid), timeout=30, what="back to processes")
        t.keys("q")
        t.wait(lambda s: "EXIT=0" in s, what="exit")
    finally:
        pool.kill()
        pool.wait()


@needs_tmux
def test_cgroup_view_sum_and_descend(pane, workbin):
    mnt = cgroup2_mount()
    if not mnt:
        pytest.skip("no cgroup v2 hierarchy mounted")
    name = f"pmbpf-top-test-{os.getpid()}"
    cg = f"{mnt}/{name}"
    os.makedirs(cg, exist_ok=True)
    procs = []
    try:
        procs.append(spawn(workbin, "spin", 180, cgroup=cg, nice=-20))
        gate = spawn(workbin, "gate", 300, 180, cgroup=cg, stdin=subprocess.PIPE, nice=-20)
        procs.append(gate)
        assert json.loads(gate.stdout.readline())["what"] == "ready"
        gate.stdin.write("go\n")
        gate.stdin.flush()
        t = pane(f"-e {EVENTS} -d 2")
        t.keys("c")
        t.wait(lambda s: status(s).startswith("[cgroups]"), what="cgroup view")
        t.keys("\\")
        t.literal(name)
        t.keys("Enter")

        def mine(s):
            _, rows = table(s)
            r = [r for r in rows if r["CGROUP"] == "/" + name]
            return r[0] if r and r[0]["PROCS"] == "2" else None

        t.wait(lambda s: s[-1].startswith("?Help") and mine(s),
               what="the test cgroup with its two processes")
        s, (cpu, faults) = next_interval(t, lambda: (cgroup_cpu(cg),
                                                     proc_truth([p.pid for p in procs])[1]))
        row = mine(s)
        assert row, show(s)
        t.keys("p")
        assert cpu > 0.5 and faults > 600, (cpu, faults)
        assert abs(float(row["CPU%"]) - cpu * 100) <= 2, (cpu, show(s))
        assert abs(count(row["page-faults/s"]) - faults) <= 0.1 * faults, (faults, show(s))
        s = t.wait(lambda s: "[PAUSED]" in s[0] and s, what="pause")
        row = mine(s)
        # Enter descends: the same (paused) interval, per process; they add up
        t.keys("Enter")
        s = t.wait(lambda s: f"In: /{name}" in status(s) and len(table(s)[1]) == 2 and s,
                   what="the cgroup's processes")
        rows = table(s)[1]
        assert {r["PID"] for r in rows} == {str(p.pid) for p in procs}, show(s)
        assert abs(sum(float(r["CPU%"]) for r in rows) - float(row["CPU%"])) <= 0.2, show(s)
        assert abs(sum(count(r["page-faults/s"]) for r in rows) -
                   count(row["page-faults/s"])) <= 2, show(s)
        assert all(r["CGROUP"] == "/" + name for r in rows)
        t.keys("Escape")
        t.wait(lambda s: status(s).startswith("[cgroups]") and mine(s), what="back")
        t.keys("q")
        t.wait(lambda s: "EXIT=0" in s, what="exit")
    finally:
        stop_and_remove(procs, cg)


@needs_tmux
@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 0), (signal.SIGSEGV, 128 + 11)])
def test_signal_restores_terminal(pane, sig, code):
    t = pane(f"-e {EVENTS} -d 0.5", x=100, y=30)
    pid = t.top_pid()
    assert pid
    os.kill(pid, sig)
    s = t.wait(lambda s: any(l.startswith("EXIT=") for l in s) and "canon" in s[-1] and s,
               what="exit")
    assert f"EXIT={code}" in s, show(s)
    assert "icanon" in s and "-icanon" not in s, show(s)
    assert not any(l.startswith("pmbpf top ") for l in s), show(s)


@needs_tmux
def test_delay_line(pane, workbin):
    """Who delayed the selected process, and whom it delayed: a spinner and a
    sleeper pinned to one CPU name each other on the line above the footer.

    Both run at nice -20, each in an autogroup of its own, so that they
    weigh alike, as two tasks at rest, and the host's other work little
    beside them. Both at nice 0, on a host with a spinner per CPU and a fork
    storm, the host's spinners that shared the CPU waited 200 ms a second
    for the spinner, ahead of the sleeper on its line (record: 55 ms against
    the sleeper's 9). The spinner alone at -20 starved the sleeper (418-588
    ms of waits a second), which left the sleeper's line to whatever else
    ran there: once, beside another suite's -20 spinner and a VM, its waits
    were 38 ms and the spinner not among their three. Both at -20, pmbpf
    record read: at rest the sleeper delayed by the spinner 6.2 ms a second
    and by nothing else, the spinner's delays 6.2 ms to the sleeper and 5 us
    to the next; under the load 24.6 ms against 73 us, and 24.6 against 4.3.
    The CPU is this test's alone among the suites on the host (claimed_cpu()):
    two suites at once pinned their pairs to the same CPU, and each spinner
    was first on the other suite's sleeper's line."""
    with claimed_cpu() as cpu:
        delay_line_on(pane, workbin, cpu)


def delay_line_on(pane, workbin, cpu):
    spin = spawn("taskset", "-c", cpu, workbin, "spin", 180, nice=-20)
    sleeper = spawn("taskset", "-c", cpu, workbin, "sleep", 180000, 1000, nice=-20)
    try:
        t = pane(f"-e {EVENTS}")
        t.keys("/")
        t.literal(COMM)
        t.keys("Enter")
        # the spinner has the most CPU: first, and selected; it delayed the sleeper
        s = t.wait(lambda s: t.selected() == str(spin.pid) and
                   re.search(rf"  Delayed: [^,]*{COMM} \({sleeper.pid}\) ", s[-2]) and s,
                   what="the spinner's delay line")
        assert s[-2].startswith("Delayed by:"), show(s)
        t.keys("Down")
        s = t.wait(lambda s: t.selected() == str(sleeper.pid) and
                   re.match(rf"Delayed by: {COMM} \({spin.pid}\) \S+ \d+%", s[-2]) and s,
                   what="the sleeper's delay line")
    finally:
        for p in (spin, sleeper):
            p.kill()
            p.wait()


def schedstat(pid):
    """On-CPU and run-queue wait seconds of a process so far (/proc/PID/schedstat)."""
    with open(f"/proc/{pid}/schedstat") as f:
        oncpu, delay = (int(x) / 1e9 for x in f.read().split()[:2])
    return oncpu, delay


def test_time_view_shares(pane, workbin):
    """t: each row's time as shares. A spinner is on a CPU or waiting for one
    (ONCPU% + RUNQ% ~100), a sleeper (50 ms naps) asleep; both against their
    own /proc/PID/schedstat over the same interval (on-CPU and run-queue wait
    per second, the rest asleep), within 5 points. IPC stands next to the
    on-CPU share ('-' without a PMU), the selected row's delay line stays,
    and the cgroup view has THROTL% ('-' where cgroup2 has no cpu controller:
    absent, not 0)."""
    mnt = cgroup2_mount()
    if not mnt:
        pytest.skip("no cgroup v2 hierarchy mounted")
    name = f"pmbpf-top-time-{os.getpid()}"
    cg = f"{mnt}/{name}"
    os.makedirs(cg, exist_ok=True)
    procs = []
    try:
        # long enough for a slow run on a loaded host (killed at the end)
        spin = spawn(workbin, "spin", 180, cgroup=cg, nice=-20)
        sleeper = spawn(workbin, "sleep", 3600, 50000, cgroup=cg, nice=-20)
        procs += [spin, sleeper]
        t = pane(f"-e {EVENTS} -d 2")
        t.keys("/")
        t.literal(COMM)
        t.keys("Enter", "t")
        t.wait(lambda s: status(s).startswith("[processes, time]") and
               row_of(s, spin.pid) and row_of(s, sleeper.pid), what="the time view")
        s, rates = next_interval(t, lambda: schedstat(spin.pid) + schedstat(sleeper.pid))
        head, rows = table(s)
        split = "SLEEP%" in head
        off = "SLEEP%" if split else "OFF%"
        assert head[:5] == ["PID", "USER", "CPU%", "ONCPU%", "IPC"], show(s)
        assert "RUNQ%" in head and off in head and "THROTL%" not in head, show(s)
        assert not split or ("BLOCK%" in head and "OTHER%" in head), show(s)
        sp, sl = row_of(s, spin.pid), row_of(s, sleeper.pid)
        assert sp and sl, show(s)
        if not host_has_pmu():
            assert sp["IPC"] == "-", show(s)
        for row, (oncpu, delay) in ((sp, rates[:2]), (sl, rates[2:])):
            assert abs(float(row["ONCPU%"]) - oncpu * 100) <= 5, (oncpu, show(s))
            assert abs(float(row["RUNQ%"]) - delay * 100) <= 5, (delay, show(s))
            asleep = 100 * (1 - oncpu - delay)
            assert abs(float(row[off]) - asleep) <= 5, (asleep, show(s))
            parts = [c for c in head if c.endswith("%") and c not in ("CPU%",)]
            assert abs(sum(float(row[c]) for c in parts) - 100) <= 0.5, (parts, show(s))
        print(show(s), "\nschedstat (on-CPU, run-queue wait per second): spinner %.3f %.3f, "
              "sleeper %.3f %.3f" % tuple(rates))
        assert float(sp["ONCPU%"]) + float(sp["RUNQ%"]) >= 95, show(s)
        assert float(sl[off]) >= 80, show(s)
        # the spinner (most CPU%) is selected: its delay line stays above the keys
        assert s[-2].startswith("Delayed by:"), show(s)
        # the cgroup view: the cgroup's throttled share, absent without cpu.stat's
        t.keys("c", "\\")
        t.literal(name)
        t.keys("Enter")
        s = t.wait(lambda s: status(s).startswith("[cgroups, time]") and
                   any(r["CGROUP"] == "/" + name for r in table(s)[1]) and s,
                   timeout=30, what="the cgroup time view")
        head, rows = table(s)
        row = next(r for r in rows if r["CGROUP"] == "/" + name)
        assert "THROTL%" in head, show(s)
        with open(f"{cg}/cpu.stat") as f:
            has_quota = any(l.startswith("throttled_usec") for l in f)
        if not has_quota:
            assert row["THROTL%"] == "-", show(s)
        # back to the figures
        t.keys("t")
        t.wait(lambda s: status(s).startswith("[cgroups]") and "PSI-CPU/s" in table(s)[0],
               what="the cgroup view's figures")
    finally:
        stop_and_remove(procs, cg)
