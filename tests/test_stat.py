# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""pmbpf stat -- CMD: totals of a command and its children, against perf stat."""
import json
import subprocess

from conftest import PMBPF, WORK, needs_root

pytestmark = needs_root


def pmbpf_stat(*args):
    p = subprocess.run([PMBPF, "stat", "-o", "json", "-e", "page-faults,task-clock", "--"] +
                       [str(a) for a in args], capture_output=True, text=True, timeout=120)
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.startswith('{"type":"command"')]
    assert len(lines) == 1, p.stdout + p.stderr
    return p, lines[0]


def perf_stat(*args):
    p = subprocess.run(["perf", "stat", "-x", ",", "-e", "page-faults,task-clock", "--"] +
                       [str(a) for a in args], capture_output=True, text=True, timeout=120)
    out = {}
    for line in p.stderr.splitlines():
        f = line.split(",")
        if len(f) > 3 and f[2] in ("page-faults", "task-clock"):
            out[f[2]] = float(f[0])
    return out


def test_children_counted_like_perf_stat():
    n, pages = 30, 800
    p, rec = pmbpf_stat(WORK, "spawn", n, pages)
    assert p.returncode == 0
    assert rec["processes"] == n + 1
    faults = rec["events"]["page-faults"]["raw"]
    assert faults >= n * pages
    ref = perf_stat(WORK, "spawn", n, pages)
    # perf stat counts the same command and children (inherit) in another run:
    # page faults repeat from run to run, CPU time does not (up to +-30% here)
    assert abs(faults - ref["page-faults"]) <= 0.01 * ref["page-faults"], (faults, ref)
    # CPU time against the same run's own accounting: the parent's CPU clock
    # plus its waited-for children's (getrusage)
    own = [json.loads(l) for l in p.stdout.splitlines() if '"what":"spawn"' in l][0]
    truth = own["cpu_ns"] + own["children_cpu_ns"]
    assert abs(rec["events"]["task-clock"]["raw"] - truth) <= 0.05 * truth + 3e6, (rec, own)


def test_burn_and_exit_code():
    p, rec = pmbpf_stat("sh", "-c", f"{WORK} burn 300; exit 7")
    assert p.returncode == 7 and rec["exit_code"] == 7
    burn = json.loads(p.stdout.splitlines()[0])["cpu_ns"]  # the workload's own CPU time
    # plus the shell's few milliseconds
    assert abs(rec["oncpu_ns"] - burn) <= 0.02 * burn + 5e6, (rec["oncpu_ns"], burn)
    assert rec["processes"] == 2


def test_command_not_found():
    p = subprocess.run([PMBPF, "stat", "--", "/no/such/command"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 127
    assert "pmbpf: cannot run /no/such/command: No such file or directory" in p.stderr


def test_no_command():
    p = subprocess.run([PMBPF, "stat"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stderr.startswith("pmbpf: no command given")
