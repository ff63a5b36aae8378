# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Bad input: a clear one-line error and a non-zero exit, never a crash."""
import json
import os
import shutil
import subprocess
import time

import pytest

import conftest
from conftest import PMBPF, needs_root


def run(*args, user=None):
    cmd = [PMBPF] + list(args)
    if user:
        cmd = ["setpriv", "--reuid", user, "--regid", user, "--clear-groups",
               "--inh-caps=-all"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30)


def check_error(p, pattern, code=None):
    assert p.returncode > 0, p  # > 0: an exit, not a signal (no crash)
    if code is not None:
        assert p.returncode == code
    first = p.stderr.splitlines()[0]
    assert first.startswith("pmbpf: ") and pattern in first, p.stderr
    assert p.stdout == ""


def test_unknown_event_is_one_line_with_close_matches():
    # was: the unknown name followed by some eighty valid ones
    p = run("record", "-e", "cycles,bogus-event")
    check_error(p, "unknown event 'bogus-event'", 2)
    assert len(p.stderr.splitlines()) == 1 and "pmbpf list" in p.stderr
    p = run("record", "-e", "cycles,page-fualts")
    check_error(p, "did you mean 'page-faults'", 2)
    assert len(p.stderr.splitlines()) == 1


@pytest.mark.parametrize("args,pattern", [
    (["record", "-i", "abc"], "invalid interval 'abc'"),
    (["record", "-i", "0"], "invalid interval '0'"),
    (["record", "-i", "5ms"], "invalid interval '5ms'"),
    (["record", "-c", "-3"], "invalid count '-3'"),
    (["record", "-d", "1y"], "invalid duration '1y'"),
    (["record", "-p", "x12"], "invalid PID 'x12'"),
    (["record", "-o", "xml"], "unknown output format 'xml'"),
    (["record", "-m", "3"], "invalid --max-procs '3'"),
    (["record", "-e", "cycles,cycles"], "given twice"),
    (["record", "-e", "a,b,c,d,e,f,g,h,i"], "unknown event 'a'"),
    (["record", "-e", "cycles,instructions,cache-misses,branch-misses,page-faults,"
      "cpu-clock,task-clock,cs,faults"], "at most 8 events"),
    (["record", "extra"], "unexpected argument 'extra'"),
    (["frobnicate"], "unknown command 'frobnicate'"),
])
def test_malformed_options(args, pattern):
    check_error(run(*args), pattern, 2)


@needs_root
def test_pid_that_does_not_exist():
    check_error(run("record", "-p", "2147483647"), "no process with PID 2147483647", 1)


@needs_root
def test_cgroup_that_does_not_exist():
    check_error(run("record", "-G", "/no/such/cgroup"), "cgroup /no/such/cgroup")


@needs_root
def test_without_privileges():
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) is not installed")
    p = run("record", "-c", "1", user="65534")
    check_error(p, "missing capabilities CAP_BPF and CAP_PERFMON", 1)


def test_help_and_list():
    p = run("record", "--help")
    assert p.returncode == 0 and "--events" in p.stdout
    p = run("list")
    assert p.returncode == 0 and "dTLB-load-misses" in p.stdout


@pytest.mark.parametrize("args,pattern", [
    (["record", "-i", "0x10"], "invalid interval '0x10'"),
    (["record", "-i", "1e9"], "invalid interval '1e9'"),
    (["record", "-i", "2h"], "invalid interval '2h'"),
    (["record", "-i", "3601"], "invalid interval '3601'"),
    (["record", "-d", "1e9"], "invalid duration '1e9'"),
    (["record", "-d", "31622401"], "invalid duration '31622401'"),
    (["profile", "-d", "0x10"], "invalid duration '0x10'"),
    (["profile", "--folded", "--svg"], "either --folded or --svg"),
])
def test_numbers_and_combinations_refused(args, pattern):
    check_error(run(*args), pattern, 2)


def cgroup2_mount():
    mnt = conftest.cgroup2_mount()
    if not mnt:
        pytest.skip("no cgroup2 mount")
    return mnt


@needs_root
def test_cgroup_paths_are_resolved_before_use():
    """'.', '..' and relative forms name the cgroup they point to, and collect it."""
    mount = cgroup2_mount()
    name = f"pmbpf-test-resolve-{os.getpid()}"
    path = os.path.join(mount, name)
    os.mkdir(path)
    burner = subprocess.Popen(["sh", "-c", f"echo $$ > {path}/cgroup.procs; "
                               "while :; do :; done"])
    try:
        for arg in (f"./{name}", f"{name}/.", f"{mount}/./{name}", f"/{name}/",
                    f"{mount}/../{os.path.basename(mount)}/{name}"):
            p = run("record", "-G", arg, "-c", "1", "-i", "300ms", "-o", "json", "-b",
                    "process")
            assert p.returncode == 0, (arg, p.stderr)
            pids = [r.get("pid") for r in map(json.loads, p.stdout.splitlines())
                    if r["type"] == "process"]
            assert burner.pid in pids, (arg, pids)
    finally:
        burner.kill()
        burner.wait()
        for _ in range(100):
            try:
                os.rmdir(path)
                break
            except OSError:
                time.sleep(0.05)


@needs_root
def test_cgroup_paths_refused():
    mount = cgroup2_mount()
    check_error(run("record", "-G", ""), "empty cgroup path", 2)
    check_error(run("record", "-G", f"{mount}/.."), "outside the cgroup v2 hierarchy", 2)
    check_error(run("record", "-G", "/proc"), "not a cgroup v2 directory", 2)
    check_error(run("profile", "-p", "1", "-G", "/"), "either -p", 2)
    v1 = [os.path.join("/sys/fs/cgroup", d) for d in ("memory", "cpu", "pids", "systemd")]
    v1 = [d for d in v1 if os.path.isdir(d) and subprocess.run(
        ["stat", "-f", "-c", "%T", d], capture_output=True, text=True).stdout.strip()
        == "cgroupfs"]
    if not v1:
        return  # a cgroup v2-only host: no v1 directory to name
    check_error(run("record", "-G", v1[0]), "is a cgroup v1 directory", 2)


@needs_root
@pytest.mark.parametrize("cmd", ["record", "profile"])
def test_zombie_is_not_running(cmd):
    child = subprocess.Popen(["true"])
    try:
        for _ in range(200):
            with open(f"/proc/{child.pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            time.sleep(0.01)
        p = subprocess.run([PMBPF, cmd, "-p", str(child.pid)], capture_output=True,
                           text=True, timeout=30)
        check_error(p, f"process {child.pid} is not running", 1)
    finally:
        child.wait()
