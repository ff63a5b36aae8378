# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Bad input: a clear one-line error and a non-zero exit, never a crash."""
import os
import shutil
import subprocess

import pytest

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
