# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Event syntax on the real kernel: tracepoints, groups, PMU terms, bad input, defaults."""
import json
import re
import shutil
import subprocess

import pytest

from conftest import PMBPF, WORK, needs_root

pytestmark = needs_root


def stat(events, *cmd):
    p = subprocess.run([PMBPF, "stat", "-o", "json", "-e", events, "--"] + [str(c) for c in cmd],
                       capture_output=True, text=True, timeout=120)
    recs = [json.loads(l) for l in p.stdout.splitlines() if l.startswith('{"type":"command"')]
    assert p.returncode == 0 and len(recs) == 1, p.stdout + p.stderr
    return recs[0]["events"], p


def test_sys_enter_write_counts_every_write():
    # work writes N: N write() calls, then its one-line report (one more write:
    # stdout is a pipe, so the line goes out in one write at exit). Start-up
    # (ld.so, libc) makes no write() call: strace -c shows N + 1 writes.
    n = 5000
    ev, _ = stat("syscalls:sys_enter_write", WORK, "writes", n)
    assert ev["syscalls:sys_enter_write"]["raw"] == n + 1


def perf_stat_counts(events, *cmd):
    p = subprocess.run(["perf", "stat", "-x", ",", "-e", events, "--"] + [str(c) for c in cmd],
                       capture_output=True, text=True, timeout=120)
    return [int(l.split(",")[0]) for l in p.stderr.splitlines() if l and l[0].isdigit()]


def test_tracepoint_modifiers_count_like_perf():
    # The kernel checks only exclude_kernel for tracepoints, against the
    # registers the tracepoint passes: syscall entry passes the user's, so
    # sys_enter_write:u counts every call; sched_switch passes the kernel's,
    # so sched_switch:u counts none. Whatever the rule, the same as perf stat.
    if not shutil.which("perf"):
        pytest.skip("perf is not installed")
    n = 300
    names = ["syscalls:sys_enter_write:u", "syscalls:sys_enter_write:k",
             "sched:sched_process_fork:u"]
    ev, _ = stat(",".join(names), WORK, "writes", n)
    ref = perf_stat_counts(",".join(names), WORK, "writes", n)
    assert [ev[k]["raw"] for k in names] == ref == [n + 1, n + 1, 0]


def test_sched_process_fork_counts_forks():
    forks = 12
    ev, p = stat("sched:sched_process_fork", WORK, "spawn", forks, 1)
    children = sum(1 for l in p.stdout.splitlines() if l.startswith('{"child"'))
    assert children == forks
    # the forking parent is credited; pmbpf's own fork of the command happens
    # outside the command's cgroup
    assert ev["sched:sched_process_fork"]["raw"] == forks


def test_tracepoint_in_a_group_with_software_events():
    # was: a member joining an already-counting software group was never
    # scheduled and read 0
    n = 2000
    ev, _ = stat("{context-switches,syscalls:sys_enter_write,page-faults},"
                 "{syscalls:sys_enter_write,task-clock}", WORK, "writes", n)
    assert ev["syscalls:sys_enter_write"]["raw"] == n + 1
    assert ev["syscalls:sys_enter_write#2"]["raw"] == n + 1
    assert ev["page-faults"]["raw"] > 0
    assert ev["task-clock"]["raw"] > 0
    for e in ev.values():
        assert e["coverage"] == 1.0


def test_group_counts_equal_ungrouped():
    pages = 3000
    ev, _ = stat("{page-faults,context-switches},page-faults", WORK, "touch", pages)
    grouped, alone = ev["page-faults"]["raw"], ev["page-faults#2"]["raw"]
    assert grouped == alone and grouped >= pages


BAD = [
    ("msr/event=/", "missing value for term 'event' of msr"),
    ("msr/bogus=1/", "unknown term 'bogus' for PMU msr"),
    ("cpu/event=0x3c/", "unknown PMU 'cpu'"),
    ("nopmu/x/", "unknown PMU 'nopmu'"),
    ("{cycles,instructions", "unbalanced '{'"),
    ("sched:no_such_tracepoint", "unknown tracepoint 'sched:no_such_tracepoint'"),
    ("syscalls:sys_enter_wrte", "did you mean 'syscalls:sys_enter_write'"),
    ("cycels", "did you mean 'cycles'"),
    ("cycles:q", "unknown modifier"),
]


@pytest.mark.parametrize("events,says", BAD, ids=[b[0] for b in BAD])
@pytest.mark.parametrize("cmd", ["record", "stat"])
def test_bad_event_one_line_exit_2(cmd, events, says):
    if events.startswith("msr/") and not shutil.os.path.isdir(
            "/sys/bus/event_source/devices/msr"):
        pytest.skip("no msr PMU on this host")
    args = [PMBPF, cmd, "-e", events] + (["--", "true"] if cmd == "stat" else ["-c", "1"])
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pmbpf: ") and says in lines[0], p.stderr
    assert "pmbpf list" in lines[0] or "unknown PMU" not in lines[0]


def perf_attr(event):
    """type/config/exclude bits perf stat -vv prints for event (first attempt)."""
    p = subprocess.run(["perf", "stat", "-vv", "-e", event, "true"], capture_output=True,
                       text=True, timeout=60)
    block = p.stderr.split("perf_event_attr:")
    if len(block) < 2:
        return None
    attr = {}
    for line in block[1].split("-----")[0].splitlines():
        m = re.match(r"\s+(\w+)\s+(\S+)", line)
        if m:
            attr[m.group(1)] = m.group(2)
    return attr


def pmbpf_attr(event):
    p = subprocess.run([PMBPF, "list", "--attr", event], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    f = p.stdout.split(": ", 1)[1].split()
    return dict(zip(f[0::2], f[1::2]))


ENCODINGS = ["msr/tsc/", "msr/event=0x3/", "msr/event=0x3,config=0x4/u", "msr/event=0x1/k",
             "tsc", "power/energy-pkg/", "cs:u", "page-faults:k"]


@pytest.mark.parametrize("event", ENCODINGS)
def test_encoding_matches_perf(event):
    if not shutil.which("perf"):
        pytest.skip("perf is not installed")
    pmu = event.split("/")[0] if "/" in event else None
    if pmu and not shutil.os.path.isdir(f"/sys/bus/event_source/devices/{pmu}"):
        pytest.skip(f"no {pmu} PMU on this host")
    if event == "tsc" and not shutil.os.path.isdir("/sys/bus/event_source/devices/msr"):
        pytest.skip("no msr PMU on this host")
    ref = perf_attr(event)
    if ref is None:
        pytest.skip(f"perf stat -vv printed no attr for {event}")
    ours = pmbpf_attr(event)
    assert int(ours["type"]) == int(ref["type"])
    assert int(ours["config"], 16) == int(ref.get("config", "0"), 16)
    for bit in ("exclude_user", "exclude_kernel", "exclude_hv"):
        assert int(ours[bit]) == int(ref.get(bit, "0")), (bit, ours, ref)


def session_of(args):
    p = subprocess.run([PMBPF, "record", "-o", "json", "-c", "1"] + args, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    recs = [json.loads(l) for l in p.stdout.splitlines()]
    return p, recs[0], [r for r in recs if r["type"] == "event"]


def doctor_pmu():
    p = subprocess.run([PMBPF, "doctor", "-o", "json"], capture_output=True, text=True,
                       timeout=120)
    return json.loads(p.stdout)["pmu"]


def test_default_events_follow_the_pmu():
    p, session, events = session_of([])
    names = [e["name"] for e in events]
    notice = [l for l in p.stderr.splitlines() if "no hardware PMU" in l]
    if session["pmu"]:
        assert names == ["cycles", "instructions", "LLC-load-misses", "dTLB-load-misses"]
        assert not notice
    else:
        # perf's fallback: software events, said in one line
        assert names == ["task-clock", "page-faults", "context-switches", "cpu-migrations"]
        assert all(e["state"] == "counting" for e in events)
        assert len(notice) == 1, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_pmu_has_one_meaning():
    # was: "pmu": true with only software events asked for on a host without one
    _, default, _ = session_of([])
    _, sw, _ = session_of(["-e", "cs"])
    _, hw, _ = session_of(["-e", "cycles,cs"])
    assert default["pmu"] == sw["pmu"] == hw["pmu"] == doctor_pmu()
    hw_counting = [e for e in session_of(["-e", "cycles"])[2] if e["state"] == "counting"]
    assert bool(hw_counting) == sw["pmu"]


def test_list_shows_pmus_tracepoints_and_filters():
    p = subprocess.run([PMBPF, "list"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0
    assert "Generic events" in p.stdout and "cycles" in p.stdout
    assert re.search(r"^  sched:\* \(\d+\)$", p.stdout, re.M), p.stdout[-2000:]
    assert "PMU software (type 1" in p.stdout
    p = subprocess.run([PMBPF, "list", "sys_enter_write"], capture_output=True, text=True,
                       timeout=60)
    assert "  syscalls:sys_enter_write\n" in p.stdout
    assert "cycles" not in p.stdout
