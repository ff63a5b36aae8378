#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""pmbpf overhead benchmark, side by side with the alternatives (issue 8).

Sections (all in one run, monitored and unmonitored runs alternating):
  cost      per-invocation cost of every BPF program of pmbpf and of the
            reference programs (bench/naive.bpf.c), bpftrace and runqlat, from
            kernel.bpf_stats_enabled during `perf bench sched pipe`; pmbpf and
            the naive program with 1, 2, 4, 8 counters give the cost per counter
  slowdown  four workloads unmonitored (A) and monitored (B), A B A B
  scale     userspace CPU per refresh and memory of pmbpf and tiptop with
            0 to 10,000 live processes, idle or running; at 1,000 to 10,000
            active processes and 10,000 active threads also record --threads,
            serve (scraped every second) and the floor (bench/floor: a plain
            batch read of pmbpf's maps), all in the same run

Writes OUT/results.json (every sample) and OUT/summary.md. Run through
`make bench` (root). Needs Debian's bpftrace, libbpf-tools, linux-perf, tiptop
(bench/install-peers.sh installs them).
"""
import argparse
import datetime
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time

SW4 = "cpu-clock,task-clock,page-faults,context-switches"
SW8 = SW4 + ",cpu-migrations,minor-faults,major-faults,alignment-faults"
SW_BY_N = {1: "cpu-clock", 2: "cpu-clock,task-clock", 4: SW4, 8: SW8}
# The hardware default events, named: on a host without a PMU none counts, so
# this is pmbpf's fixed cost per switch (since the software fallback, plain
# "default events" count four software events there).
HW_DEFAULT = "cycles,instructions,LLC-load-misses,dTLB-load-misses"
PMBPF_NONE = "pmbpf (hardware default events: none counting here)"
EMPTY = "empty tp_btf sched_switch"
PMBPF_NODELAYS = "pmbpf no counter --no-delays"
PMBPF_WAKEPROGS = "pmbpf 4 sw counters, wakeup programs (--wakeup-progs)"
PMBPF_NOFOLD = "pmbpf no counter, map path (--thread-fold=off)"
PMBPF_THREADS = "pmbpf no counter --threads"
# the scale section's tools at active processes and threads
REC_JSON = "pmbpf -e SW4 record -o json"
REC_THREADS = "pmbpf -e SW4 record --threads -o json"
SERVE = "pmbpf -e SW4 serve (scraped every 1 s)"
TIPTOP1 = "tiptop -d 1 (software events)"
# tiptop's default screen opens 4 counters per task: 40,000 descriptors at
# 10,000 tasks, above a 20,000 hard limit; this one opens 1 per task
TIPTOP_ONE = "tiptop -d 1, 1 counter per task (cycles -> cpu-clock)"
TIPTOP_ONE_RC = """<tiptop>
  <screen name="one" desc="one counter per task">
    <counter alias="CYCLE" config="CPU_CYCLES" type="HARDWARE" />
    <column header=" %CPU" format="%5.1f" desc="CPU usage" expr="CPU_TOT" />
    <column header="  Mcycle" format="%8.1f" desc="Cycles (millions)"
            expr="delta(CYCLE) / 1000000" />
  </screen>
</tiptop>
"""
FLOOR = "floor: batch read of pmbpf's maps (bench/floor)"
NAIVE_RQ = "naive N=4 + wakeup hash"
BPFTRACE_PROG = "tracepoint:sched:sched_switch { @[pid] = count(); }"
NCPU = os.cpu_count() or 1
# Both ends of the pipe on one CPU: every operation is two context switches on
# that CPU, with no cross-CPU wakeup (IPI, idle exit), whose cost in a VM
# varies far more run to run than the monitors' cost being measured.
PIPE_PIN = ["taskset", "-c", "0"]


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


def med(xs):
    return statistics.median(xs) if xs else None


def stats(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"median": med(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


# ---------------------------------------------------------------------------
# processes


def bpf_prog_ids(pid):
    """Ids of the BPF programs a process holds open (from /proc/PID/fdinfo)."""
    ids = set()
    fd_dir = "/proc/%d/fd" % pid
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return ids
    for fd in fds:
        try:
            if os.readlink(os.path.join(fd_dir, fd)) != "anon_inode:bpf-prog":
                continue
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            continue
    return ids


def fd_kinds(pid):
    kinds = {}
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                t = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                continue
            k = t if t.startswith("anon_inode:") else "other"
            kinds[k] = kinds.get(k, 0) + 1
    except OSError:
        pass
    return kinds


def cpu_ns(pid):
    """CPU time of all threads of pid, in ns (schedstat: exact, not ticks)."""
    total = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    except OSError:
        return None
    return total


def proc_status(pid):
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    out[k] = int(v.split()[0])  # kB
    except OSError:
        pass
    return out


def host_busy_s():
    """CPU time used on the whole host so far (all CPUs, /proc/stat), in s."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")


def host_tasks():
    """Tasks (threads) on the host now: what tiptop opens its counters for."""
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                n += len(os.listdir("/proc/%s/task" % d))
            except OSError:
                pass
    return n


def raise_nofile():
    """tiptop needs an fd per task and counter: give it the hard limit."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Monitor:
    """A tool running in the background while workloads run."""

    def __init__(self, name, cmd, ready_re=None, ready_fd=None, env=None, settle=0.3,
                 preexec=None, stop_timeout=60):
        self.name, self.cmd, self.ready_re, self.ready_fd = name, cmd, ready_re, ready_fd
        self.env, self.settle, self.preexec, self.stop_timeout = env, settle, preexec, stop_timeout
        self.proc = None
        self.out_path = None
        self.refresh_mark = None

    def start(self, tmp):
        self.out_path = os.path.join(tmp, "monitor.out")
        out = open(self.out_path, "wb")
        env = dict(os.environ)
        env.update(self.env or {})
        self.proc = subprocess.Popen(self.cmd, stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env, cwd=tmp,
                                     preexec_fn=self.preexec)
        out.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with %s at start: %s" %
                                   (self.name, self.proc.returncode, self.output()[-400:]))
            if self.is_ready():
                time.sleep(self.settle)
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("%s not ready after 30 s: %s" % (self.name, self.output()[-400:]))

    def is_ready(self):
        if self.ready_re and not re.search(self.ready_re, self.output()):
            return False
        if self.ready_fd:
            return fd_kinds(self.proc.pid).get(self.ready_fd, 0) > 0
        return True

    def refreshes(self):
        """Refreshes printed so far (refresh_mark counts them in the output)."""
        try:
            with open(self.out_path, "rb") as f:
                return self.refresh_mark(f.read())
        except OSError:
            return 0

    def output(self):
        try:
            with open(self.out_path, "rb") as f:
                return f.read(1 << 16).decode(errors="replace")
        except OSError:
            return ""

    def stop(self):
        if not self.proc:
            return None
        if self.proc.poll() is None:
            # SIGTERM, not SIGINT: a shell that runs `make bench &` has its
            # children ignore SIGINT, and tiptop -b never stops on it
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(self.stop_timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        rc = self.proc.returncode
        self.proc = None
        try:
            os.unlink(self.out_path)
        except OSError:
            pass
        return rc


class ServeMonitor(Monitor):
    """pmbpf serve, scraped every second (tick) as Prometheus would; its
    refreshes are its collections (pmbpf_collections_total)."""

    def __init__(self, name, cmd, port):
        super().__init__(name, cmd, ready_fd="anon_inode:bpf_link", settle=0.5)
        self.port = port
        self.collections = 0

    def scrape(self):
        try:
            import urllib.request
            body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.port,
                                          timeout=5).read()
        except OSError:
            return None
        m = re.search(rb"^pmbpf_collections_total (\d+)", body, re.M)
        return int(m.group(1)) if m else None

    def tick(self):
        c = self.scrape()
        if c is not None:
            self.collections = c

    def refreshes(self):
        self.tick()
        return self.collections


class FloorMonitor(Monitor):
    """bench/floor reading the maps of a pmbpf serve started for it (whose
    own CPU is not counted): the floor of a refresh."""

    def __init__(self, name, floor, provider):
        super().__init__(name, [floor], ready_re=r"ready", settle=0.3)
        self.floor, self.provider = floor, provider

    def start(self, tmp):
        ptmp = os.path.join(tmp, "provider")
        os.makedirs(ptmp, exist_ok=True)
        self.provider.start(ptmp)
        self.cmd = [self.floor, str(self.provider.proc.pid), "1000"]
        try:
            super().start(tmp)
        except Exception:
            self.provider.stop()
            raise

    def stop(self):
        rc = super().stop()
        self.provider.stop()
        return rc


# ---------------------------------------------------------------------------
# set-up


class Bench:
    def __init__(self, args):
        self.args = args
        self.pmbpf = os.path.abspath(args.pmbpf)
        self.bin = os.path.abspath(args.bin)
        self.out = os.path.abspath(args.out)
        self.tmp = os.path.join(self.out, "tmp")
        os.makedirs(self.tmp, exist_ok=True)
        self.tiptop_dir = os.path.join(self.tmp, "tiptop-empty-config")
        os.makedirs(self.tiptop_dir, exist_ok=True)
        self.tiptop_one_dir = os.path.join(self.tmp, "tiptop-one-counter")
        os.makedirs(self.tiptop_one_dir, exist_ok=True)
        with open(os.path.join(self.tiptop_one_dir, ".tiptoprc"), "w") as f:
            f.write(TIPTOP_ONE_RC)
        q = args.quick
        self.cfg = {
            "quick": q,
            "pairs": args.pairs or (2 if q else 5),
            "cost_pipe_loops": 30000 if q else 100000,
            "pipe_loops": 50000 if q else 200000,
            "messaging": ["-g", "2", "-l", "50"] if q else ["-g", "5", "-l", "100"],
            "spin_iters": 150000000 if q else 500000000,
            "forkexec_n": 100 if q else 500,
            "tiptop_delay": "0.5",
            "scale_counts": [0, 2000, 10000] if q else [0, 1000, 2000, 5000, 10000],
            # active processes (and threads) for every tool, floor included
            "scale_active": [1000, 10000] if q else [1000, 5000, 10000],
            "scale_threads": 10000,
            "scale_intervals": 3 if q else 5,
            "scale_warmup_s": 2.0,
            "scale_max_window_s": 40.0,
            # CPU per refresh is the window's CPU over the refreshes in it: a
            # tool slower than its interval (tiptop at 10,000 tasks: about
            # one refresh in 1.5 s) is cut mid-refresh at both ends, so a
            # window of 2-3 of its refreshes was off by up to a third
            "scale_min_refreshes": 3 if q else 10,
            "ran_period_ms": 500,
        }
        if args.scale_active:
            self.cfg["scale_active"] = [int(n) for n in args.scale_active.split(",")]
        if args.scale_threads is not None:
            self.cfg["scale_threads"] = args.scale_threads
        self.results = {"version": 1, "config": self.cfg, "errors": []}

    def error(self, what, e):
        msg = "%s: %s" % (what, e)
        log("ERROR " + msg)
        self.results["errors"].append(msg)

    def mon_pmbpf(self, events=None, name=None, extra=(), fold=None, wakeups=None, binary=None,
                  interval="1"):
        """fold: --thread-fold (on, off; None: pmbpf's own choice by the switch rate);
        wakeups: --wakeup-progs when true (programs at sched_wakeup; None: pmbpf's choice);
        binary: another pmbpf than --pmbpf (--base); interval: record's -i."""
        cmd = [binary or self.pmbpf, "record", "-o", "json", "-i", interval] + list(extra)
        if events:
            cmd += ["-e", events]
        if fold:
            cmd += ["--thread-fold=" + fold]
        if wakeups:
            cmd += ["--wakeup-progs"]
        mon = Monitor(name or ("pmbpf -e " + events if events else "pmbpf (default events)"),
                      cmd, ready_re=r'"type"')
        mon.refresh_mark = lambda out: out.count(b'"type":"system"')  # one per interval
        return mon

    def mon_serve(self, name, extra=()):
        self.port = getattr(self, "port", 19300) + 1
        return ServeMonitor(name, [self.pmbpf, "serve", "-i", "1", "-e", SW4, "-l",
                                   "127.0.0.1:%d" % self.port] + list(extra), self.port)

    def mon_floor(self):
        self.port = getattr(self, "port", 19300) + 1
        provider = Monitor("pmbpf serve (the floor's map owner)",
                           [self.pmbpf, "serve", "-i", "1", "-e", SW4, "-l",
                            "127.0.0.1:%d" % self.port], ready_fd="anon_inode:bpf_link")
        mon = FloorMonitor(FLOOR, os.path.join(self.bin, "floor"), provider)
        mon.refresh_mark = lambda out: out.count(b"refresh ")
        return mon

    def with_binary(self, make, binary):
        """The monitor make() builds, run with another pmbpf binary."""
        mon = make()
        mon.cmd = [binary] + mon.cmd[1:]
        return mon

    def mon_naive(self, name, progs, n=0):
        return Monitor(name, [os.path.join(self.bin, "naive"), "-p", progs, "-n", str(n)],
                       ready_re=r"ready", settle=0.1)

    def mon_bpftrace(self):
        return Monitor("bpftrace @[pid]=count()", ["bpftrace", "-e", BPFTRACE_PROG],
                       ready_re=r"Attaching", ready_fd="anon_inode:[perf_event]", settle=0.5)

    def mon_runqlat(self):
        # its "Tracing..." line sits in a stdio buffer until exit: wait for the links
        return Monitor("runqlat", [self.runqlat], ready_fd="anon_inode:bpf_link", settle=0.3)

    def mon_tiptop(self, delay, threads=False, one=False):
        """one: only the screen of TIPTOP_ONE_RC (one counter per task)."""
        cfg = self.tiptop_one_dir if one else self.tiptop_dir
        mon = Monitor(TIPTOP_ONE if one else "tiptop -d %s (software events)" % delay,
                       ["tiptop", "-b", "-d", str(delay), "-n", "1000000", "-W", cfg]
                      + (["--only-conf"] if one else []) + (["-H"] if threads else []),
                       ready_fd="anon_inode:[perf_event]", settle=0.3,
                      env={"LD_PRELOAD": os.path.join(self.bin, "tiptop_sw.so"),
                           "HOME": cfg},
                      preexec=raise_nofile)
        # batch mode: a header with one blank line, then every refresh ends
        # with a blank line (even one with no rows)
        mon.refresh_mark = lambda out: max(len(re.findall(b"\n(?=\n)", out)) - 1, 0)
        return mon

    def setup(self):
        if os.geteuid() != 0:
            sys.exit("bench: run as root (loads BPF programs)")
        for path in ("/sys/kernel/tracing",):
            if not os.path.exists(os.path.join(path, "events")):
                log("mounting tracefs at %s (bpftrace needs it)" % path)
                subprocess.run(["mount", "-t", "tracefs", "nodev", path], check=False)
        self.runqlat = shutil.which("runqlat") or "/usr/sbin/runqlat"
        # measure one binary throughout, even if build/pmbpf is rebuilt meanwhile
        snap = os.path.join(self.tmp, "pmbpf")
        shutil.copy2(self.pmbpf, snap)
        self.pmbpf = snap
        self.pmbpf_base = None
        if self.args.base:
            snap = os.path.join(self.tmp, "pmbpf-base")
            shutil.copy2(self.args.base, snap)
            self.pmbpf_base = snap
        with open("/proc/sys/kernel/bpf_stats_enabled") as f:
            self.stats_was = f.read().strip()
        self.results["machine"] = self.machine()
        self.results["started"] = datetime.datetime.now(datetime.timezone.utc).isoformat()

    def machine(self):
        def run(cmd):
            try:
                return subprocess.run(cmd, capture_output=True, text=True,
                                      timeout=10).stdout.strip()
            except (OSError, subprocess.TimeoutExpired):
                return None

        model, hyper = None, False
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and not model:
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags"):
                    hyper = hyper or " hypervisor" in line
        with open("/proc/meminfo") as f:
            mem_kb = int(f.readline().split()[1])
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        commit = run(["git", "-C", root, "rev-parse", "--short", "HEAD"])
        dirty = run(["git", "-C", root, "status", "--porcelain", "--", "bpf", "user"])
        return {
            "nproc": NCPU,
            "kernel": os.uname().release,
            "cpu_model": model,
            "hypervisor_flag": hyper,
            "virt": run(["systemd-detect-virt"]),
            "mem_mib": mem_kb // 1024,
            "pmu": os.path.exists("/sys/bus/event_source/devices/cpu"),
            "pmbpf_commit": commit,
            "pmbpf_tree_dirty": bool(dirty),
            "versions": {
                p: run(["dpkg-query", "-W", "-f=${Version}", p])
                for p in ("bpftrace", "libbpf-tools", "linux-perf", "tiptop", "bpftool",
                          "libbpf1")
            },
        }

    def foreign_progs(self):
        """BPF programs on the host not started by this benchmark (noise)."""
        try:
            progs = json.loads(subprocess.run(["bpftool", "prog", "show", "-j"],
                                              capture_output=True, text=True).stdout)
        except (ValueError, OSError):
            return None
        return sorted("%s:%s" % (p.get("type"), p.get("name", "?")) for p in progs
                      if p.get("type") in ("tracing", "raw_tracepoint", "tracepoint",
                                           "perf_event", "kprobe"))

    def note_environment(self, section):
        self.results.setdefault("environment", {})[section] = {
            "loadavg": open("/proc/loadavg").read().split()[:3],
            "foreign_bpf_progs": self.foreign_progs(),
        }

    # -----------------------------------------------------------------------
    # workloads

    def workloads(self):
        c = self.cfg
        wl = os.path.join(self.bin, "workload")
        return [
            ("perf bench sched pipe",
             PIPE_PIN + ["perf", "bench", "sched", "pipe", "-l", str(c["pipe_loops"])], "perf"),
            ("perf bench sched messaging",
             ["perf", "bench", "sched", "messaging"] + c["messaging"], "perf"),
            ("CPU-bound loop (%d procs)" % NCPU,
             [wl, "spin", str(NCPU), str(c["spin_iters"])], "json"),
            ("fork+exec storm (%d procs)" % NCPU,
             [wl, "forkexec", str(NCPU), str(c["forkexec_n"])], "json"),
        ]

    def run_workload(self, cmd, kind, wrap=None, cpu=None, other=None):
        """Run a workload; return its own wall time in s. cpu (a list) gets the
        CPU time (user + system) of the whole command tree; other gets the
        CPU time of everything else on the host meanwhile, per second of the
        run (the monitor's process and other users' load)."""
        full = (wrap or []) + cmd
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        h0, t0 = host_busy_s(), time.monotonic()
        r = subprocess.run(full, capture_output=True, text=True, timeout=600, cwd=self.tmp)
        h1, t1 = host_busy_s(), time.monotonic()
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (" ".join(full), r.returncode,
                                                       r.stderr[-300:]))
        mine = ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime
        if cpu is not None:
            cpu.append(mine)
        if other is not None:
            other.append(max(h1 - h0 - mine, 0) / max(t1 - t0, 1e-3))
        if kind == "perf":
            m = re.search(r"Total time:\s+([0-9.]+)", r.stdout)
            if not m:
                raise RuntimeError("no 'Total time' in perf bench output: " + r.stdout[-300:])
            return float(m.group(1))
        return json.loads(r.stdout.strip().splitlines()[-1])["elapsed_s"]

    # -----------------------------------------------------------------------
    # section 1: per-invocation cost

    def bpf_stats(self, ids):
        progs = json.loads(subprocess.run(["bpftool", "prog", "show", "-j"],
                                          capture_output=True, text=True,
                                          check=True).stdout)
        return {p["id"]: (p.get("name", "?"), p.get("run_time_ns", 0), p.get("run_cnt", 0))
                for p in progs if p["id"] in ids}

    def cost_variants(self):
        # The pipe runs for less than pmbpf's first interval, after which pmbpf
        # would choose task storage on such a switch rate: its steady state on
        # a switch-heavy host is forced (on); the map path is a variant of its own.
        v = [("unmonitored", None)]
        v.append((PMBPF_NONE, lambda: self.mon_pmbpf(HW_DEFAULT, PMBPF_NONE, fold="on")))
        v.append((PMBPF_NOFOLD, lambda: self.mon_pmbpf(HW_DEFAULT, PMBPF_NOFOLD, fold="off")))
        v.append((PMBPF_NODELAYS,
                  lambda: self.mon_pmbpf(HW_DEFAULT, PMBPF_NODELAYS, ["--no-delays"], fold="on")))
        # per-thread counting: a map entry per thread, no task-storage fold
        v.append((PMBPF_THREADS,
                  lambda: self.mon_pmbpf(HW_DEFAULT, PMBPF_THREADS, ["--threads"], fold="on")))
        v.append(("pmbpf 4 sw counters --threads",
                  lambda: self.mon_pmbpf(SW4, "pmbpf 4 sw --threads", ["--threads"], fold="on")))
        for n in (1, 2, 4, 8):
            v.append(("pmbpf %d sw counters" % n,
                      lambda n=n: self.mon_pmbpf(SW_BY_N[n], "pmbpf %d sw" % n, fold="on")))
        # Reads during the pipe: from a thread's first fold on, a thread that is
        # its entry's only writer credits the entry itself (6.2+), a path the
        # variants above, whose pipe ends before pmbpf's first read, never take.
        v.append(("pmbpf 4 sw counters, read every 0.1 s",
                  lambda: self.mon_pmbpf(SW4, "pmbpf 4 sw -i 0.1", fold="on", interval="0.1")))
        # run-queue waits timed by programs at sched_wakeup instead of from sched_info
        v.append((PMBPF_WAKEPROGS,
                  lambda: self.mon_pmbpf(SW4, PMBPF_WAKEPROGS, fold="on", wakeups=True)))
        naive = [
            (EMPTY, "empty", 0),
            ("naive N=0", "naive_switch", 0),
            ("naive N=1", "naive_switch", 1),
            ("naive N=2", "naive_switch", 2),
            ("naive N=4", "naive_switch", 4),
            ("naive N=8", "naive_switch", 8),
            (NAIVE_RQ, "naive_switch_rq,naive_wakeup,naive_wake_new", 4),
            ("naive N=4 + wakeup task storage", "naive_sw_ts,naive_wk_ts,naive_wkn_ts", 4),
            ("micro: bpf_ktime_get_ns", "micro_ktime", 0),
            ("micro: bpf_get_current_cgroup_id", "micro_cgroup", 0),
            ("micro: 1 bpf_perf_event_read_value", "micro_read1", 1),
            ("micro: task storage get+write", "micro_tstore", 0),
        ]
        for name, progs, n in naive:
            v.append((name, lambda name=name, progs=progs, n=n: self.mon_naive(name, progs, n)))
        v.append(("bpftrace @[pid]=count()", self.mon_bpftrace))
        v.append(("runqlat (libbpf-tools)", self.mon_runqlat))
        return v

    def section_cost(self):
        log("section cost: per-invocation cost during perf bench sched pipe")
        self.note_environment("cost")
        reps = self.cfg["pairs"]
        pipe = PIPE_PIN + ["perf", "bench", "sched", "pipe", "-l",
                           str(self.cfg["cost_pipe_loops"])]
        variants = self.cost_variants()
        if self.args.variants:
            variants = [v for v in variants if re.search(self.args.variants, v[0])]
        if self.pmbpf_base:
            # each pmbpf variant again with the --base binary, in the same rotation
            base = self.pmbpf_base
            variants = variants + [
                (name + " [base]", lambda make=make: self.with_binary(make, base))
                for name, make in variants if name.startswith("pmbpf") and make]
        raw = {name: [] for name, _ in variants}
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write("1")
        try:
            for rep in range(reps):
                for name, make in variants:
                    mon = make() if make else None
                    sample = {"rep": rep}
                    try:
                        if mon:
                            mon.start(self.tmp)
                            ids = bpf_prog_ids(mon.proc.pid)
                            before = self.bpf_stats(ids)
                        t = self.run_workload(pipe, "perf")
                        sample["pipe_usec_per_op"] = t * 1e6 / self.cfg["cost_pipe_loops"]
                        if mon:
                            after = self.bpf_stats(ids)
                            progs = {}
                            for pid_, (pname, rt, cnt) in after.items():
                                b = before.get(pid_, (pname, 0, 0))
                                d_rt, d_cnt = rt - b[1], cnt - b[2]
                                progs[pname] = {"run_time_ns": d_rt, "run_cnt": d_cnt,
                                                "ns_per_run": d_rt / d_cnt if d_cnt else None}
                            sample["progs"] = progs
                    except (RuntimeError, OSError, ValueError,
                            subprocess.SubprocessError) as e:
                        self.error("cost %s rep %d" % (name, rep), e)
                        sample["error"] = str(e)
                    finally:
                        if mon:
                            mon.stop()
                    raw[name].append(sample)
                    log("cost rep %d %-40s %s" % (rep, name, short_cost(sample)))
        finally:
            with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
                f.write(self.stats_was)
        self.results["cost"] = {"raw": raw, "summary": summarize_cost(raw)}

    # -----------------------------------------------------------------------
    # section 2: workload slowdown

    def slowdown_monitors(self):
        perf_ready = "anon_inode:[perf_event]"
        return [
            ("pmbpf (default events)", lambda: self.mon_pmbpf(), None),
            ("pmbpf -e " + SW4, lambda: self.mon_pmbpf(SW4), None),
            ("perf stat -a -e SW4",
             lambda: Monitor("perf stat -a", ["perf", "stat", "-a", "-e", SW4, "-o",
                                              os.path.join(self.tmp, "perfstat.txt")],
                             ready_fd=perf_ready, settle=0.3), None),
            ("perf stat -e SW4 -- CMD (per task)", None,
             ["perf", "stat", "-e", SW4, "-o", os.path.join(self.tmp, "perfstat-task.txt"),
              "--"]),
            ("tiptop -d %s (software events)" % self.cfg["tiptop_delay"],
             lambda: self.mon_tiptop(self.cfg["tiptop_delay"]), None),
            ("bpftrace @[pid]=count()", self.mon_bpftrace, None),
            ("runqlat (libbpf-tools)", self.mon_runqlat, None),
            ("perf record -F 99 -a -g",
             lambda: Monitor("perf record", ["perf", "record", "-F", "99", "-a", "-g", "-q",
                                             "-o", os.path.join(self.tmp, "perf.data")],
                             ready_fd=perf_ready, settle=0.5), None),
        ]

    def section_slowdown(self):
        log("section slowdown: A (unmonitored) B (monitored) pairs")
        self.note_environment("slowdown")
        wls = self.workloads()
        out = {}
        for mname, make, wrap in self.slowdown_monitors():
            rec = {w[0]: {"A": [], "B": [], "A_cpu": [], "B_cpu": [], "A_other": [],
                          "B_other": []} for w in wls}
            for pair in range(self.cfg["pairs"]):
                try:
                    for w, cmd, kind in wls:
                        rec[w]["A"].append(self.run_workload(cmd, kind, cpu=rec[w]["A_cpu"],
                                                             other=rec[w]["A_other"]))
                    mon = make() if make else None
                    if mon:
                        mon.start(self.tmp)
                    try:
                        for w, cmd, kind in wls:
                            rec[w]["B"].append(self.run_workload(cmd, kind, wrap,
                                                                 cpu=rec[w]["B_cpu"],
                                                                 other=rec[w]["B_other"]))
                    finally:
                        if mon:
                            mon.stop()
                except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as e:
                    self.error("slowdown %s pair %d" % (mname, pair), e)
                    for w in rec.values():
                        n = min(len(w["A"]), len(w["B"]))
                        for k in ("A", "B", "A_cpu", "B_cpu", "A_other", "B_other"):
                            del w[k][n:]
                    continue
                log("slowdown %-45s pair %d: %s" % (mname, pair, " ".join(
                    "%+.1f%%" % (100 * (r["B"][-1] / r["A"][-1] - 1)) for r in rec.values())))
            for w, r in rec.items():
                ratios = [b / a for a, b in zip(r["A"], r["B"])]
                r["slowdown_pct"] = stats([100 * (x - 1) for x in ratios])
                r["cpu_increase_pct"] = stats([100 * (b / a - 1) for a, b in
                                               zip(r["A_cpu"], r["B_cpu"]) if a > 0])
                r["A_other_cpus"] = stats(r["A_other"])
                r["A_s"] = stats(r["A"])
                r["B_s"] = stats(r["B"])
            out[mname] = rec
        for f in ("perf.data", "perf.data.old", "perfstat.txt", "perfstat-task.txt"):
            try:
                os.unlink(os.path.join(self.tmp, f))
            except OSError:
                pass
        self.results["slowdown"] = out

    # -----------------------------------------------------------------------
    # section 3: userspace cost at scale

    def start_idlers(self, n, mode, kind="idlers"):
        if n == 0:
            return None
        p = subprocess.Popen([os.path.join(self.bin, "workload"), kind, str(n), mode,
                              str(self.cfg["ran_period_ms"])], stdout=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, text=True)
        line = p.stdout.readline()
        if line.strip() != "ready":
            p.kill()
            p.wait()
            raise RuntimeError("idlers did not start")
        if mode == "ran":
            time.sleep(self.cfg["ran_period_ms"] / 1000.0 * 2)  # every child has run
        return p

    @staticmethod
    def stop_idlers(p):
        if p:
            p.send_signal(signal.SIGTERM)
            p.wait()

    def measure_tool(self, mon):
        """Start mon, let it warm up, then sample its CPU each interval."""
        mon.start(self.tmp)
        try:
            return self.sample_running(mon)
        finally:
            mon.stop()

    def section_scale(self):
        log("section scale: CPU per 1 s refresh and memory vs live processes")
        self.note_environment("scale")
        tools = [
            ("pmbpf -e " + SW4, lambda: self.mon_pmbpf(SW4)),
            ("tiptop -d 1 (software events)", lambda: self.mon_tiptop(1)),
        ]
        rows = []
        for n in self.cfg["scale_counts"]:
            modes = ["idle", "ran", "ran once"] if n else ["none"]
            for mode in modes:
                for tname, make in tools:
                    if mode == "ran once" and not tname.startswith("pmbpf"):
                        continue
                    row = {"processes": n, "mode": mode, "tool": tname}
                    idlers = None
                    try:
                        if mode == "ran once":
                            # spawned while pmbpf runs: each ran once, then sleeps;
                            # the kernel map holds them all but none runs again
                            mon = make()
                            mon.start(self.tmp)
                            try:
                                idlers = self.start_idlers(n, "idle")
                                time.sleep(1.5)
                                row.update(self.sample_running(mon))
                            finally:
                                mon.stop()
                        else:
                            idlers = self.start_idlers(n, "ran" if mode == "ran" else "idle")
                            row.update(self.measure_tool(make()))
                    except (RuntimeError, OSError, ValueError,
                            subprocess.SubprocessError) as e:
                        self.error("scale %s %d %s" % (tname, n, mode), e)
                        row["error"] = str(e)
                    finally:
                        self.stop_idlers(idlers)
                    rows.append(row)
                    log("scale %-32s %6d %-8s cpu/refresh %s ms (%s refreshes)  rss %s KiB  "
                        "fds %s" % (tname, n, mode, fmt(row.get("cpu_ms_per_refresh"), 2),
                                    row.get("refreshes"), row.get("rss_kib"), row.get("fds")))
        rows += self.scale_active()
        self.results["scale"] = rows

    def render_cost(self):
        """bench/render: the renderers alone on a synthetic 10,000-row
        snapshot (JSON, CSV, serve's refresh), CPU time per row."""
        rows = []
        for extra in ([], ["-t"]):
            p = subprocess.run([os.path.join(self.bin, "render"), "-n", "10000", "-r",
                                "5" if self.cfg["quick"] else "20"] + extra,
                               capture_output=True, text=True, timeout=600)
            if p.returncode:
                self.error("render", p.stderr.strip())
                continue
            rows += [json.loads(line) for line in p.stdout.splitlines()]
        for r in rows:
            log("render %-10s threads=%-5s top_k=%-5s %.3f us per row" % (
                r["format"], r["threads"], r.get("top_k", "-"), r["us_per_row"]))
        self.results["render"] = rows

    def cgroup_read_cost(self):
        """bench/cgroupread: the kernel's per-cgroup files (cpu.stat, PSI)
        read once per refresh for 100 cgroups, kept open or reopened each
        time, CPU time per cgroup and refresh."""
        p = subprocess.run([os.path.join(self.bin, "cgroupread"), "-n", "100", "-r",
                            "10" if self.cfg["quick"] else "50"],
                           capture_output=True, text=True, timeout=600)
        if p.returncode:
            self.error("cgroupread", p.stderr.strip())
            return
        rows = [json.loads(line) for line in p.stdout.splitlines()]
        for r in rows:
            log("cgroup files %-10s %d cgroups  %.3f us per cgroup per refresh" % (
                r["mode"], r["cgroups"], r["us_per_cgroup"]))
        self.results["cgroupread"] = rows

    def scale_active(self):
        """Every tool at active processes and threads (each wakes every
        ran_period_ms), one population started once for all of them."""
        self.render_cost()
        self.cgroup_read_cost()
        tools = [
            (REC_JSON, lambda: self.mon_pmbpf(SW4, name=REC_JSON)),
            (REC_THREADS, lambda: self.mon_pmbpf(SW4, name=REC_THREADS, extra=["--threads"])),
            (SERVE, lambda: self.mon_serve(SERVE)),
            (TIPTOP1, lambda: self.mon_tiptop(1, threads=self.pop_threads)),
            (TIPTOP_ONE, lambda: self.mon_tiptop(1, threads=self.pop_threads, one=True)),
            (FLOOR, self.mon_floor),
        ]
        if self.args.scale_tools:
            tools = [t for t in tools if re.search(self.args.scale_tools, t[0])]
        pops = [(n, "active", "idlers") for n in self.cfg["scale_active"]]
        if self.cfg["scale_threads"]:
            pops.append((self.cfg["scale_threads"], "active threads", "threads"))
        rows = []
        for n, mode, kind in pops:
            self.pop_threads = kind == "threads"  # tiptop -H: a row per thread
            idlers = None
            try:
                idlers = self.start_idlers(n, "ran", kind)
                time.sleep(self.cfg["ran_period_ms"] / 1000.0 * 2)
                for tname, make in tools:
                    row = {"processes": n, "mode": mode, "tool": tname}
                    try:
                        row.update(self.measure_tool(make()))
                    except (RuntimeError, OSError, ValueError,
                            subprocess.SubprocessError) as e:
                        self.error("scale %s %d %s" % (tname, n, mode), e)
                        row["error"] = str(e)
                    rows.append(row)
                    log("scale %-44s %6d %-14s cpu/refresh %s ms (%s refreshes)  rss %s KiB"
                        "  fds %s  host tasks %s"
                        % (tname, n, mode, fmt(row.get("cpu_ms_per_refresh"), 2),
                           row.get("refreshes"), row.get("rss_kib"), row.get("fds"),
                           row.get("host_tasks")))
            except (RuntimeError, OSError) as e:
                self.error("scale %d %s" % (n, mode), e)
            finally:
                self.stop_idlers(idlers)
        return rows

    def sample_running(self, mon):
        """CPU of the tool per refresh: CPU time over a window / refreshes it
        printed in that window; the spread is that of the CPU per second."""
        pid = mon.proc.pid
        time.sleep(self.cfg["scale_warmup_s"])
        per_s = []
        first = last = cpu_ns(pid)
        r0 = mon.refreshes()
        t0 = time.monotonic()
        # until the tool has refreshed scale_min_refreshes times in the
        # window (a slow one: tiptop at 10,000 tasks), up to scale_max_window_s
        while len(per_s) < self.cfg["scale_intervals"] or (
                mon.refreshes() - r0 < self.cfg["scale_min_refreshes"]
                and time.monotonic() - t0 < self.cfg["scale_max_window_s"]):
            time.sleep(1.0)
            if hasattr(mon, "tick"):
                mon.tick()
            now = cpu_ns(pid)
            per_s.append((now - last) / 1e6)
            last = now
        wall = time.monotonic() - t0
        refreshes = mon.refreshes() - r0
        st = proc_status(pid)
        per_refresh = (last - first) / 1e6 / refreshes if refreshes else None
        return {"cpu_ms_per_refresh": per_refresh, "refreshes": refreshes,
                "host_tasks": host_tasks(),
                "window_s": round(wall, 3), "cpu_ms_per_s": stats(per_s), "samples_ms": per_s,
                "rss_kib": st.get("VmRSS"), "hwm_kib": st.get("VmHWM"),
                "fds": sum(fd_kinds(pid).values())}

    # -----------------------------------------------------------------------

    def run(self):
        self.setup()
        t0 = time.monotonic()
        sections = self.args.sections.split(",")
        try:
            if "cost" in sections:
                self.section_cost()
            if "slowdown" in sections:
                self.section_slowdown()
            if "scale" in sections:
                self.section_scale()
            elif "scale-active" in sections:
                log("section scale (active processes and threads only)")
                self.note_environment("scale")
                self.results["scale"] = self.scale_active()
        finally:
            self.results["duration_s"] = round(time.monotonic() - t0, 1)
            self.results["targets"] = targets(self.results)
            path = os.path.join(self.out, "results.json")
            with open(path, "w") as f:
                json.dump(self.results, f, indent=1)
            md = summary_md(self.results, self.args)
            with open(os.path.join(self.out, "summary.md"), "w") as f:
                f.write(md)
            shutil.rmtree(self.tmp, ignore_errors=True)
        print(md)
        log("results: %s, summary: %s (%.0f s)" % (
            path, os.path.join(self.out, "summary.md"), self.results["duration_s"]))
        return 1 if self.results["errors"] else 0


# ---------------------------------------------------------------------------
# analysis


def fmt(x, nd=0):
    if x is None:
        return "-"
    return ("%%.%df" % nd) % x


def short_cost(sample):
    if "error" in sample:
        return "ERROR"
    s = "pipe %.2f us/op" % sample["pipe_usec_per_op"]
    for name, p in sorted(sample.get("progs", {}).items()):
        s += "  %s %s ns x %d" % (name, fmt(p["ns_per_run"]), p["run_cnt"])
    return s


SWITCH_NAMES = ("switch", "empty", "sched_switch", "naive_sw_ts", "micro_")


def switch_prog(progs):
    """The program of a variant that runs at sched_switch, by name."""
    names = [n for n in progs if any(k in n for k in SWITCH_NAMES)]
    if len(names) == 1:
        return names[0]
    if len(progs) == 1:
        return next(iter(progs))
    return names[0] if names else None


def summarize_cost(raw):
    base = med([s["pipe_usec_per_op"] for s in raw.get("unmonitored", [])
                if "pipe_usec_per_op" in s])
    out = {}
    for name, samples in raw.items():
        ok = [s for s in samples if "error" not in s]
        row = {"pipe_usec_per_op": stats([s["pipe_usec_per_op"] for s in ok])}
        if base and row["pipe_usec_per_op"]:
            row["pipe_slowdown_pct"] = 100 * (row["pipe_usec_per_op"]["median"] / base - 1)
        progs = {}
        for s in ok:
            for pname, p in s.get("progs", {}).items():
                progs.setdefault(pname, {"ns": [], "runs": []})
                progs[pname]["ns"].append(p["ns_per_run"])
                progs[pname]["runs"].append(p["run_cnt"])
        row["progs"] = {pn: {"ns_per_run": stats(v["ns"]), "runs": stats(v["runs"])}
                        for pn, v in progs.items()}
        # all BPF time of the variant per sched_switch call (wakeup programs included)
        per_switch = []
        for s in ok:
            p = s.get("progs", {})
            sw = switch_prog(p)
            if sw and p[sw]["run_cnt"]:
                per_switch.append(sum(x["run_time_ns"] for x in p.values()) / p[sw]["run_cnt"])
        row["switch_prog"] = switch_prog(row["progs"]) if row["progs"] else None
        row["bpf_ns_per_switch_all_progs"] = stats(per_switch)
        out[name] = row
    return out


def switch_ns(summary, variant):
    row = summary.get(variant)
    if not row or not row.get("switch_prog"):
        return None
    st = row["progs"][row["switch_prog"]]["ns_per_run"]
    return st["median"] if st else None


def all_ns(summary, variant):
    row = summary.get(variant)
    st = row and row.get("bpf_ns_per_switch_all_progs")
    return st["median"] if st else None


def paired_ratio(raw, a, b):
    """Median [min, max] of per-rep ratios of the sched_switch program costs."""
    out = []
    for sa, sb in zip(raw.get(a, []), raw.get(b, [])):
        pa, pb = sa.get("progs", {}), sb.get("progs", {})
        na, nb = switch_prog(pa), switch_prog(pb)
        if na and nb and pa[na]["ns_per_run"] and pb[nb]["ns_per_run"]:
            out.append(pa[na]["ns_per_run"] / pb[nb]["ns_per_run"])
    return stats(out)


def slope(points):
    """Least-squares slope of (x, y) points."""
    pts = [(x, y) for x, y in points if y is not None]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den if den else None


def event_rate(results):
    cost = results.get("cost")
    if not cost:
        return None
    s = cost["summary"]
    # with no PMU, pmbpf's default (hardware) events open no counter at all
    pm = [(0, switch_ns(s, PMBPF_NONE) if not results["machine"]["pmu"] else None)]
    pm += [(n, switch_ns(s, "pmbpf %d sw counters" % n)) for n in (1, 2, 4, 8)]
    nv = [(n, switch_ns(s, "naive N=%d" % n)) for n in (0, 1, 2, 4, 8)]
    return {"pmbpf": pm, "naive": nv, "pmbpf_ns_per_counter": slope(pm),
            "naive_ns_per_counter": slope(nv)}


def scale_row(results, tool_prefix, n, mode):
    for r in results.get("scale", []):
        if r["tool"].startswith(tool_prefix) and r["processes"] == n and r["mode"] == mode:
            return r
    return None


def scale_cpu(results, tool_prefix, n, mode):
    r = scale_row(results, tool_prefix, n, mode)
    return r.get("cpu_ms_per_refresh") if r else None


def targets(results):
    t = []

    def add(name, value, goal, met, note=""):
        t.append({"target": name, "value": value, "goal": goal,
                  "met": met if value is not None else None, "note": note})

    cost = results.get("cost")
    if cost:
        s, raw = cost["summary"], cost["raw"]
        for ref in (NAIVE_RQ, "naive N=4"):
            r = paired_ratio(raw, "pmbpf 4 sw counters", ref)
            add("pmbpf sched_switch (4 counters) / %s sched_switch" % ref,
                r and round(r["median"], 3), "<= 0.7 (stretch 0.6)",
                r is not None and r["median"] <= 0.7,
                "per-rep ratios %s..%s; pmbpf %s ns, %s %s ns; all programs per switch "
                "(wakeups included): pmbpf %s ns, %s %s ns" % (
                    fmt(r and r["min"], 2), fmt(r and r["max"], 2),
                    fmt(switch_ns(s, "pmbpf 4 sw counters")), ref, fmt(switch_ns(s, ref)),
                    fmt(all_ns(s, "pmbpf 4 sw counters")), ref, fmt(all_ns(s, ref))))
    sd = results.get("slowdown")
    if sd:
        pipe = "perf bench sched pipe"

        def pct(m):
            for k, v in sd.items():
                if k.startswith(m) and v[pipe]["slowdown_pct"]:
                    return v[pipe]["slowdown_pct"]["median"]
            return None
        def cpu_pct(m):
            for k, v in sd.items():
                if k.startswith(m) and v[pipe].get("cpu_increase_pct"):
                    return v[pipe]["cpu_increase_pct"]["median"]
            return None
        for metric, f in (("wall time", pct), ("CPU time", cpu_pct)):
            pm = f("pmbpf -e")
            for peer in ("perf stat -e SW4 -- CMD", "tiptop"):
                pp = f(peer)
                add("pipe slowdown (%s): pmbpf -e SW4 < %s" % (metric, peer),
                    "%+.1f%% vs %+.1f%%" % (pm, pp) if None not in (pm, pp) else None,
                    "pmbpf lower", None not in (pm, pp) and pm < pp)
    if results.get("scale"):
        p, tt = scale_cpu(results, "pmbpf", 2000, "idle"), scale_cpu(results, "tiptop", 2000,
                                                                        "idle")
        add("CPU per refresh at 2,000 idle processes: pmbpf / tiptop",
            p is not None and tt and round(p / tt, 3) or None, "<= 0.1",
            p is not None and tt and p / tt <= 0.1,
            "pmbpf %s ms, tiptop %s ms" % (fmt(p, 2), fmt(tt, 2)))
        worst = None
        for r in results["scale"]:
            if (r["tool"].startswith("pmbpf") and r["processes"] == 10000 and r.get("hwm_kib")
                    and r["mode"] in ("idle", "ran", "ran once")):
                worst = max(worst or 0, r["hwm_kib"])
        add("pmbpf peak RSS (VmHWM) at 10,000 processes", worst and "%.1f MiB" % (worst / 1024),
            "< 32 MiB", worst is not None and worst < 32 * 1024)
        n = max(results["config"].get("scale_active") or [0])
        fl = scale_cpu(results, FLOOR, n, "active")
        # tiptop with its default 4 counters per task, and with 1 (TIPTOP_ONE:
        # fewer descriptors, less work per task, so the ratio against it is
        # the higher, the harder to meet, of the two)
        for tip in (TIPTOP1, TIPTOP_ONE):
            tt = scale_cpu(results, tip, n, "active")
            for tool, goal in ((SERVE, 1 / 20), (REC_JSON, 1 / 5)):
                p = scale_cpu(results, tool, n, "active")
                add("CPU per refresh at %s active processes: %s / %s" % (n, tool, tip),
                    p is not None and tt and round(p / tt, 3) or None, "<= %.2f" % goal,
                    p is not None and tt and p / tt <= goal,
                    "%s %s ms, tiptop %s ms, floor %s ms" % (tool, fmt(p, 2), fmt(tt, 2),
                                                             fmt(fl, 2)))
        nt = results["config"].get("scale_threads")
        p = scale_cpu(results, REC_THREADS, nt, "active threads")
        tt = scale_cpu(results, TIPTOP1, nt, "active threads")
        t1 = scale_cpu(results, TIPTOP_ONE, nt, "active threads")
        add("CPU per refresh at %s active threads: %s / %s" % (nt, REC_THREADS, TIPTOP_ONE),
            p is not None and t1 and round(p / t1, 3) or None, "<= 0.33",
            p is not None and t1 and p / t1 <= 1 / 3,
            "pmbpf %s ms, tiptop %s ms" % (fmt(p, 2), fmt(t1, 2)))
        for r in results.get("render", []):
            if r["format"] in ("json", "csv"):
                add("%s rendering per row (bench/render, 10,000 %s)" % (
                    r["format"], "threads" if r["threads"] else "processes"),
                    "%.3f us" % r["us_per_row"], "<= 2 us", r["us_per_row"] <= 2)
        add("CPU per refresh at %s active threads: %s / tiptop" % (nt, REC_THREADS),
            p is not None and tt and round(p / tt, 3) or None, "<= 0.33",
            p is not None and tt and p / tt <= 1 / 3,
            "pmbpf %s ms, tiptop %s ms, floor %s ms" % (
                fmt(p, 2), fmt(tt, 2),
                fmt(scale_cpu(results, FLOOR, nt, "active threads"), 2)))
        c0 = scale_cpu(results, "pmbpf", 0, "none")
        ci = scale_cpu(results, "pmbpf", 10000, "idle")
        co = scale_cpu(results, "pmbpf", 10000, "ran once")
        cr = scale_cpu(results, "pmbpf", 10000, "ran")
        small = [n for n in results["config"]["scale_counts"] if 0 < n < 10000]
        cs = small and scale_cpu(results, "pmbpf", small[0], "ran")
        if None not in (c0, ci, cr):
            grow_idle = ci - c0
            grow_ran = cr - c0
            lin = None
            if cs is not None and cs - c0 > 0:
                lin = (grow_ran / 10000) / ((cs - c0) / small[0])
            met = grow_idle <= max(0.1 * grow_ran, 1.0) and (lin is None or lin <= 1.5)
            add("pmbpf CPU per refresh grows with processes that ran, not all processes",
                "idle 10k: %+.2f ms, ran-once 10k: %s ms, ran 10k: %+.2f ms over 0 processes"
                % (grow_idle, "%+.2f" % (co - c0) if co is not None else "-", grow_ran),
                "idle growth ~0; ran growth at most linear", met,
                "per-ran-process cost at 10k vs at %s: %sx" % (small[0] if small else "-",
                                                               fmt(lin, 2)))
    return t


def summary_md(res, args):
    L = []
    m = res.get("machine", {})
    L.append("# pmbpf benchmark results\n")
    L.append("Run %s, %s s%s. Machine: %s CPUs (%s), kernel %s, %s, virt: %s "
             "(hypervisor flag: %s), %s MiB RAM, hardware PMU: %s. pmbpf commit %s%s.\n" % (
                 res.get("started", "?")[:19], res.get("duration_s"),
                 " (QUICK)" if res["config"]["quick"] else "", m.get("nproc"),
                 m.get("cpu_model"), m.get("kernel"), "x86_64", m.get("virt"),
                 m.get("hypervisor_flag"), m.get("mem_mib"), m.get("pmu"),
                 m.get("pmbpf_commit"), " + uncommitted bpf/ or user/ changes"
                 if m.get("pmbpf_tree_dirty") else ""))
    L.append("Peers: " + ", ".join("%s %s" % kv for kv in m.get("versions", {}).items()) + ".\n")
    env = res.get("environment", {})
    foreign = sorted({p for e in env.values() for p in (e.get("foreign_bpf_progs") or [])})
    if foreign:
        L.append("Other BPF tracing programs were loaded on the host during the run (noise): "
                 + ", ".join(foreign) + ".\n")
    cost = res.get("cost")
    if cost:
        s = cost["summary"]
        L.append("## Per-invocation cost of BPF programs (during `perf bench sched pipe`)\n")
        L.append("ns per call from `kernel.bpf_stats_enabled=1` and `bpftool prog show -j` "
                 "(run_time_ns / run_cnt), median [min-max] over %d runs; 'all progs / switch' "
                 "adds the wakeup programs' time per sched_switch call.\n" %
                 res["config"]["pairs"])
        L.append("| variant | program | ns per call | calls per run | all progs / switch (ns) "
                 "| pipe us/op | pipe slowdown |")
        L.append("|---|---|---|---|---|---|---|")
        for name, row in s.items():
            pipe = row["pipe_usec_per_op"]
            progs = row["progs"] or {"-": None}
            first = True
            for pname, p in sorted(progs.items(), key=lambda kv: kv[0] != row["switch_prog"]):
                ns = p and p["ns_per_run"]
                L.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                    name if first else "", pname,
                    "%s [%s-%s]" % (fmt(ns["median"]), fmt(ns["min"]), fmt(ns["max"]))
                    if ns else "-",
                    fmt(p and p["runs"]["median"]),
                    rng(row["bpf_ns_per_switch_all_progs"]) if first else "",
                    rng(pipe, 2) if first else "",
                    ("%+.1f%%" % row["pipe_slowdown_pct"]) if first and
                    row.get("pipe_slowdown_pct") is not None else ""))
                first = False
        er = event_rate(res)
        if er:
            L.append("\n### Event rate: sched_switch cost per number of counters\n")
            L.append("| counters | pmbpf switch (ns) | naive switch (ns) |")
            L.append("|---|---|---|")
            pm, nv = dict(er["pmbpf"]), dict(er["naive"])
            for n in (0, 1, 2, 4, 8):
                L.append("| %d | %s | %s |" % (n, fmt(pm.get(n)), fmt(nv.get(n))))
            L.append("\nCost per counter (least-squares slope): pmbpf %s ns, naive %s ns. "
                     "pmbpf with no counter (hardware default events, none counting here): %s ns; "
                     "empty program (floor): %s ns; pmbpf's fixed cost above the floor: %s ns.\n" % (
                         fmt(er["pmbpf_ns_per_counter"], 1), fmt(er["naive_ns_per_counter"], 1),
                         fmt(switch_ns(s, PMBPF_NONE)), fmt(switch_ns(s, EMPTY)),
                         fmt(switch_ns(s, PMBPF_NONE) - switch_ns(s, EMPTY)
                             if switch_ns(s, PMBPF_NONE) is not None and
                             switch_ns(s, EMPTY) is not None else None)))
    sd = res.get("slowdown")
    if sd:
        wls = list(next(iter(sd.values())).keys())
        L.append("## Workload slowdown\n")
        L.append("Monitored (B) vs unmonitored (A) runs, alternating A B A B, %d pairs; "
                 "median of per-pair slowdowns [min..max]. Unmonitored medians: %s.\n" % (
                     res["config"]["pairs"], "; ".join(
                         "%s %s s" % (w, fmt((next(iter(sd.values()))[w]["A_s"] or {})
                                             .get("median"), 3)) for w in wls)))
        L.append("| monitor | " + " | ".join(wls) + " |")
        L.append("|---|" + "---|" * len(wls))
        for mname, rec in sd.items():
            cells = []
            for w in wls:
                p = rec[w]["slowdown_pct"]
                cells.append("%+.1f%% [%+.1f..%+.1f]" % (p["median"], p["min"], p["max"])
                             if p else "-")
            L.append("| %s | %s |" % (mname, " | ".join(cells)))
        others = [x for rec in sd.values() for w in wls for x in rec[w]["A_other"]]
        if others:
            L.append("\nOther load on the host during the unmonitored runs (CPU time of "
                     "everything but the workload, in CPUs, from /proc/stat): median %.2f, "
                     "max %.2f of %d. Wall-time slowdowns are only meaningful when this is "
                     "near 0." % (med(others), max(others), NCPU))
        L.append("\nCPU time (user + system) of the workload's whole process tree, same runs: "
                 "the in-kernel cost charged to the workload's own tasks, less sensitive to "
                 "other load on the host than wall time; it leaves out the monitor's own "
                 "process and, for per-task `perf stat`, includes perf's start-up.\n")
        L.append("| monitor | " + " | ".join(wls) + " |")
        L.append("|---|" + "---|" * len(wls))
        for mname, rec in sd.items():
            cells = []
            for w in wls:
                p = rec[w].get("cpu_increase_pct")
                cells.append("%+.1f%% [%+.1f..%+.1f]" % (p["median"], p["min"], p["max"])
                             if p else "-")
            L.append("| %s | %s |" % (mname, " | ".join(cells)))
        L.append("")
    if res.get("scale"):
        L.append("## Userspace cost at scale (1 s refresh)\n")
        L.append("CPU time of the tool (all threads, /proc/PID/task/*/schedstat) over a window of "
                 "at least %d s and %d refreshes (at most %.0f s) after %.0f s warm-up, divided "
                 "by the refreshes it printed in the window; "
                 "CPU ms per second as median [min-max] of the 1 s samples; RSS and peak RSS "
                 "(VmHWM) at the end; open fds. idle: processes sleep and never run; ran: each "
                 "wakes every %d ms; ran once: spawned while pmbpf runs, then idle (the kernel "
                 "map holds them); active: each of N processes wakes every %d ms, every tool "
                 "measured on the same population; active threads: N threads of one process "
                 "(tiptop with -H); serve is scraped every second; the floor is bench/floor, a "
                 "plain batch read of the maps of a pmbpf serve (its own CPU only).\n" % (
                     res["config"]["scale_intervals"],
                     res["config"].get("scale_min_refreshes", 2),
                     res["config"]["scale_max_window_s"],
                                         res["config"]["scale_warmup_s"],
                                         res["config"]["ran_period_ms"],
                                         res["config"]["ran_period_ms"]))
        L.append("| processes | mode | tool | CPU ms / refresh | refreshes | CPU ms / s "
                 "| RSS MiB | peak RSS MiB | fds | host tasks |")
        L.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in res["scale"]:
            L.append("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["processes"], r["mode"], r["tool"],
                fmt(r.get("cpu_ms_per_refresh"), 2) if not r.get("error") else "error",
                r.get("refreshes", "-"), rng(r.get("cpu_ms_per_s"), 1),
                fmt(r.get("rss_kib") and r["rss_kib"] / 1024, 1),
                fmt(r.get("hwm_kib") and r["hwm_kib"] / 1024, 1), r.get("fds", "-"),
                r.get("host_tasks", "-")))
        L.append("")
    if res.get("render"):
        L.append("## Rendering alone (bench/render, 10,000 rows)\n")
        L.append("CPU time (user + system) per row of a synthetic snapshot of 10,000 processes "
                 "(or threads) with 4 software events, rendered to /dev/null; serve: "
                 "prom__update + prom__render per refresh after two full ones, a tenth of the "
                 "rows in each (the others' series unchanged), per row and per changed row.\n")
        L.append("| format | threads | top K | us / row | us / changed row |")
        L.append("|---|---|---|---|---|")
        for r in res["render"]:
            L.append("| %s | %s | %s | %s | %s |" % (
                r["format"], r["threads"], r.get("top_k", "-"), fmt(r["us_per_row"], 3),
                fmt(r.get("us_per_changed_row"), 3)))
        L.append("")
    if res.get("cgroupread"):
        L.append("## The kernel's per-cgroup files (bench/cgroupread)\n")
        L.append("CPU time (user + system) to read a cgroup's cpu.stat, cpu.pressure, "
                 "memory.pressure and io.pressure once per refresh (record, serve and top do "
                 "for the cgroups they show), 100 cgroups: with the files kept open and read "
                 "again from offset 0 (pmbpf, up to 256 cgroups and a sixteenth of the "
                 "descriptor limit), and opened, read and closed each time.\n")
        L.append("| mode | cgroups | files open | us / cgroup / refresh |")
        L.append("|---|---|---|---|")
        for r in res["cgroupread"]:
            L.append("| %s | %d | %d | %s |" % (r["mode"], r["cgroups"], r["files_open"],
                                               fmt(r["us_per_cgroup"], 2)))
        L.append("")
    if res.get("targets"):
        L.append("## Targets\n")
        L.append("| target | value | goal | met |")
        L.append("|---|---|---|---|")
        for t in res["targets"]:
            L.append("| %s | %s | %s | %s |" % (
                t["target"] + (" (%s)" % t["note"] if t["note"] else ""), t["value"], t["goal"],
                {True: "met", False: "MISSED", None: "not measured"}[t["met"]]))
        L.append("")
    if res.get("errors"):
        L.append("## Errors\n")
        L += ["- " + e for e in res["errors"]]
        L.append("")
    L.append("Command: `make bench%s` (bench/run.py %s).\n" % (
        " QUICK=1" if res["config"]["quick"] else "", " ".join(sys.argv[1:])))
    return "\n".join(L)


def rng(st, nd=0):
    if not st:
        return "-"
    return "%s [%s-%s]" % (fmt(st["median"], nd), fmt(st["min"], nd), fmt(st["max"], nd))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pmbpf", required=True, help="pmbpf binary")
    ap.add_argument("--base", help="cost: each pmbpf variant also with this pmbpf binary "
                    "(before/after in the same run, the variant's name + ' [base]')")
    ap.add_argument("--bin", required=True, help="directory of naive, workload, tiptop_sw.so")
    ap.add_argument("--out", required=True, help="directory for results.json and summary.md")
    ap.add_argument("--quick", action="store_true", help="scaled-down smoke run (~3 min)")
    ap.add_argument("--pairs", type=int, help="A/B pairs and cost repetitions (default 5)")
    ap.add_argument("--sections", default="cost,slowdown,scale",
                    help="comma-separated subset of cost,slowdown,scale (scale-active: "
                    "only scale's active processes and threads, every tool)")
    ap.add_argument("--variants", help="cost: only the variants whose name matches this regex")
    ap.add_argument("--scale-active", help="scale: active process counts (default 1000,5000,10000)")
    ap.add_argument("--scale-threads", type=int, help="scale: active threads (default 10000; 0: none)")
    ap.add_argument("--scale-tools", help="scale: only the active-population tools whose name "
                    "matches this regex")
    args = ap.parse_args()
    for f in ("naive", "workload", "tiptop_sw.so", "floor"):
        if not os.path.exists(os.path.join(args.bin, f)):
            sys.exit("bench: %s missing in %s: run through `make bench`" % (f, args.bin))
    return Bench(args).run()


if __name__ == "__main__":
    sys.exit(main())
