# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A cgroup's pressure (PSI) in its cgroup record, against the cgroup's own
*.pressure files read in the same intervals (issue 33 point 2).

Two spinners pinned to one CPU in a cgroup of their own: one of them always
waits for the CPU, so the cgroup's cpu "some" pressure grows at about 100% of
the wall time. A thread of the test reads the cgroup's cpu.pressure,
memory.pressure and io.pressure every 10 ms with the wall-clock time; each
interval's growth of a file is taken between pmbpf's interval ends (its
records' time and interval_s), interpolated between the two readings around
each end. pmbpf reads the files right after each collection: the bound
allows for that lag (a collection's poll_ms and the scheduling of a loaded
host) and the 10 ms between readings."""
import datetime
import os
import subprocess
import threading
import time

import pytest

from conftest import BUILD, Cgroup, allowed_cpus, needs_root

WORK = os.path.join(BUILD, "workloads", "work")
FILES = ("cpu", "memory", "io")
# |pmbpf - the file| per interval: 2% of the interval + 30 ms (the lag of
# pmbpf's reads after its interval end on a host at load 8-20, twice, and
# the readings' 10 ms spacing)
REL, ABS_NS = 0.02, 30e6


def read_pressure(path):
    """{(resource, some|full): total ns} of a cgroup's pressure files."""
    out = {}
    for res in FILES:
        with open(f"{path}/{res}.pressure") as f:
            for line in f:
                kind, *fields = line.split()
                out[(res, kind)] = int(dict(x.split("=") for x in fields)["total"]) * 1000
    return out


class Sampler:
    """The cgroup's pressure totals every 10 ms, with CLOCK_REALTIME."""

    def __init__(self, path):
        self.path, self.samples, self.done = path, [], threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done.is_set():
            t0 = time.time()
            v = read_pressure(self.path)
            t1 = time.time()
            self.samples.append(((t0 + t1) / 2, t1 - t0, v))
            time.sleep(0.01)

    def stop(self):
        self.done.set()
        self.thread.join(5)

    def at(self, t, key):
        """The total at wall time t, interpolated; and the gap of the two readings."""
        for (ta, _, a), (tb, _, b) in zip(self.samples, self.samples[1:]):
            if ta <= t <= tb:
                return a[key] + (b[key] - a[key]) * (t - ta) / (tb - ta), tb - ta
        raise AssertionError(f"no readings around {t}")


def end_time(rec):
    return datetime.datetime.fromisoformat(rec["time"].replace("Z", "+00:00")).timestamp()


@needs_root
def test_cpu_pressure_against_the_cgroups_file(recorder):
    if not os.path.exists("/proc/pressure/cpu"):
        pytest.skip("no PSI in this kernel (CONFIG_PSI, or psi=0 on the command line)")
    cpu, = allowed_cpus(1)
    cg = Cgroup("psi", "cpu")
    spinners = []
    try:
        if not os.path.exists(cg.path + "/cpu.pressure"):
            pytest.skip("cgroup2 has no cpu.pressure here")
        rec = recorder("-i", "1", "-G", cg.rel, "--by", "cgroup")
        sampler = Sampler(cg.path)
        spin_start = time.time()
        for _ in range(2):
            spinners.append(subprocess.Popen(["taskset", "-c", str(cpu), WORK, "spin", "8"],
                                             preexec_fn=cg.enter, stdout=subprocess.DEVNULL))
        spin_end = spin_start + 8
        rec.wait_intervals(7, timeout=60)
        records = rec.stop()
        sampler.stop()
    finally:
        for p in spinners:
            p.kill()
            p.wait()
        cg.remove()
    rows = [r for r in records if r["type"] == "cgroup" and r["cgroup"] == cg.rel]
    assert rows, "no record of the cgroup"
    # the cgroup existed at the start: read then, it has figures from its first interval on
    checked, report = 0, []
    for r in rows:
        end = end_time(r)
        start = end - r["interval_s"]
        if start < sampler.samples[0][0] or end > sampler.samples[-1][0]:
            continue
        # a whole interval: one shortened by a late collection before it (0.0099 s
        # seen under load) is compared with the file above, but its pressure is
        # then mostly the reads' lag (30 ms allowed there), not the interval's
        spinning = spin_start + 0.5 < start and end < spin_end - 0.5 and \
            r["interval_s"] >= 0.5
        for res in FILES:
            for kind in ("some", "full"):
                got = r["psi"][res][kind + "_ns"]
                assert got is not None, (res, kind, r["psi"])
                a, gap_a = sampler.at(start, (res, kind))
                b, gap_b = sampler.at(end, (res, kind))
                want = b - a
                tol = REL * r["interval_s"] * 1e9 + ABS_NS + (gap_a + gap_b) * 1e9
                report.append(f"{res}.{kind}: {got / 1e6:.1f} ms, file {want / 1e6:.1f} ms")
                assert abs(got - want) <= tol, (res, kind, got, want, tol, report)
        if spinning:
            # one spinner (or both) always waits: cpu some is most of the interval
            some = r["psi"]["cpu"]["some_ns"]
            assert some >= 0.5 * r["interval_s"] * 1e9, (some, r["interval_s"], report)
            checked += 1
    print("\n".join(report))
    assert checked >= 3, (checked, len(rows), report)


@needs_root
def test_new_cgroup_is_null_in_its_first_record(recorder):
    """A cgroup made after pmbpf started has no earlier reading: its first
    record's PSI figures are null (absent, never 0), the next ones have them;
    throttling is null throughout where cgroup2 has no cpu controller."""
    rec = recorder("-i", "500ms", "--by", "cgroup")
    rec.wait_intervals(1)
    cg = Cgroup("psi", "new")
    spinner = None
    try:
        if not os.path.exists(cg.path + "/cpu.pressure"):
            pytest.skip("cgroup2 has no cpu.pressure here")
        spinner = subprocess.Popen([WORK, "spin", "30"], preexec_fn=cg.enter,
                                   stdout=subprocess.DEVNULL)
        end = time.time() + 30
        while len([r for r in rec.records if r["type"] == "cgroup" and
                   r["cgroup"] == cg.rel]) < 3:
            assert time.time() < end and rec.proc.poll() is None, rec.stalled(30)
            time.sleep(0.1)
        with open(cg.path + "/cpu.stat") as f:
            quota = any(l.startswith("throttled_usec") for l in f)
        records = rec.stop()
    finally:
        if spinner:
            spinner.kill()
            spinner.wait()
        cg.remove()
    rows = [r for r in records if r["type"] == "cgroup" and r["cgroup"] == cg.rel]
    assert all(v is None for res in FILES for v in rows[0]["psi"][res].values()), rows[0]["psi"]
    for r in rows[1:]:
        assert all(isinstance(v, int) for res in FILES for v in r["psi"][res].values()), r["psi"]
    if not quota:
        assert all(r[k] is None for r in rows for k in ("nr_periods", "nr_throttled",
                                                       "throttled_ns")), rows
    # the cgroup's own figures are its record's, not its processes'
    assert "psi" not in rows[-1]["self"] and "throttled_ns" not in rows[-1]["self"]
