# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Where the output goes wrong: a reader that goes away, a full disk."""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import PMBPF, needs_root


def run_into(args, stdout, timeout=60):
    return subprocess.run([PMBPF] + args, stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=timeout)


def run_into_closed_pipe(args, timeout=60):
    """Run with stdout a pipe whose reader has already gone."""
    r, w = os.pipe()
    os.close(r)
    try:
        return run_into(args, w, timeout)
    finally:
        os.close(w)


def check_full(p):
    """A write error: one line naming it, exit status 1."""
    assert p.returncode == 1, p
    lines = [l for l in p.stderr.splitlines() if "No space left on device" in l]
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("pmbpf: "), p.stderr


def check_sigpipe(p):
    """A reader gone: ended as by SIGPIPE, with no message about it."""
    assert p.returncode == -signal.SIGPIPE, p
    assert "pipe" not in p.stderr.lower() and "cannot write" not in p.stderr, p.stderr


@pytest.mark.parametrize("args", [["list"], ["help"], ["record", "--help"], ["serve", "--help"],
                                  ["profile", "--help"], ["top", "--help"]])
def test_full_disk_is_an_error(args):
    with open("/dev/full", "w") as full:
        check_full(run_into(args, full))


@pytest.mark.parametrize("args", [["list"], ["help"], ["record", "--help"]])
def test_closed_pipe_ends_quietly(args):
    check_sigpipe(run_into_closed_pipe(args))


@needs_root
def test_doctor_full_disk():
    with open("/dev/full", "w") as full:
        check_full(run_into(["doctor"], full))


@needs_root
@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_record_full_disk(fmt):
    with open("/dev/full", "w") as full:
        check_full(run_into(["record", "-o", fmt, "-c", "3", "-i", "100ms"], full))


@needs_root
@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_record_stops_when_the_reader_goes(fmt):
    """`pmbpf record -o json | head -1` ends soon after head does."""
    p = subprocess.Popen([PMBPF, "record", "-o", fmt, "-i", "100ms"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        assert p.stdout.readline()
        p.stdout.close()
        t0 = time.monotonic()
        rc = p.wait(timeout=20)
        assert time.monotonic() - t0 < 5
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert rc == -signal.SIGPIPE
    err = p.stderr.read().decode()
    assert "pipe" not in err.lower() and "cannot write" not in err, err


@needs_root
@pytest.mark.parametrize("extra", [[], ["--svg"]])
def test_profile_output_errors(extra, tmp_path):
    args = ["profile", "-d", "0.3"] + extra
    with open("/dev/full", "w") as full:
        check_full(run_into(args, full))
    check_full(run_into(args + ["-o", "/dev/full"], subprocess.DEVNULL))
    check_sigpipe(run_into_closed_pipe(args))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # A reader that opens the FIFO and goes away at once.
    reader = subprocess.Popen(["sh", "-c", f"exec 3<{fifo}; exec 3<&-"])
    p = run_into(args + ["-o", str(fifo)], subprocess.DEVNULL)
    reader.wait()
    check_sigpipe(p)


@needs_root
def test_session_record_carries_version_and_schema():
    """The JSON session record names pmbpf's version (the same as --version) and the schema."""
    version = subprocess.run([PMBPF, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[-1]
    out = subprocess.run([PMBPF, "record", "-e", "task-clock", "-c", "1", "-i", "0.1", "-o",
                          "json"], capture_output=True, text=True, check=True).stdout
    session = json.loads(out.splitlines()[0])
    assert session["type"] == "session"
    assert session["version"] == version
    assert session["schema"] == 1


F_SETPIPE_SZ = 1031


def blocked_in_write(pid, timeout=60):
    """Wait until pid sleeps in a pipe write; False when it never does."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/wchan") as f:
                if "pipe_write" in f.read():
                    return True
        except FileNotFoundError:
            return False
        time.sleep(0.05)
    return False


def stop_blocked(cmd, sig, stdout, stderr=subprocess.PIPE):
    """Start cmd, wait until it blocks writing, send sig: (seconds to exit, rc, stderr)."""
    p = subprocess.Popen(cmd, stdout=stdout, stderr=stderr)
    try:
        assert blocked_in_write(p.pid), "pmbpf never blocked in its write"
        t0 = time.monotonic()
        p.send_signal(sig)
        rc = p.wait(timeout=30)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    err = p.stderr.read().decode() if p.stderr else ""
    return took, rc, err


def unread_pipe():
    """A pipe of one page whose reader never reads: (read end, write end)."""
    r, w = os.pipe()
    import fcntl
    fcntl.fcntl(w, F_SETPIPE_SZ, 4096)
    return r, w


@needs_root
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("stderr_too", [False, True], ids=["stdout", "stdout+stderr"])
def test_record_stops_while_its_reader_does_not_read(sig, stderr_too):
    """`pmbpf record -o json | sleep 30`: a stop signal ends it within about a second (exit 0)."""
    r, w = unread_pipe()
    try:
        took, rc, err = stop_blocked([PMBPF, "record", "-o", "json", "-i", "50ms"], sig, w,
                                     w if stderr_too else subprocess.PIPE)
    finally:
        os.close(w)
        os.close(r)
    print(f"stopped {took:.3f} s after {signal.Signals(sig).name}")
    assert took < 1.5, took
    assert rc == 0, (rc, err)
    if not stderr_too:
        assert "the rest was dropped" in err, err


@needs_root
def test_profile_stops_while_its_reader_does_not_read(tmp_path):
    """profile's output, written after the stop signal, to a pipe or a FIFO nobody reads."""
    args = [PMBPF, "profile", "-F", "999"]
    # Enough distinct stacks to fill a page: a busy shell loop on every CPU.
    burners = [subprocess.Popen(["sh", "-c", "while :; do /bin/true; done"])
               for _ in range(2)]
    try:
        r, w = unread_pipe()
        p = subprocess.Popen(args, stdout=w, stderr=subprocess.PIPE)
        try:
            time.sleep(2)
            t0 = time.monotonic()
            p.send_signal(signal.SIGINT)
            rc = p.wait(timeout=60)
            took = time.monotonic() - t0
        finally:
            os.close(w)
            os.close(r)
            if p.poll() is None:
                p.kill()
                p.wait()
        err = p.stderr.read().decode()
        assert rc == 0, (rc, err)
        assert "the rest was dropped" in err, err
        # Symbolization comes first, and takes its time on a busy host.
        print(f"profile stopped {took:.3f} s after SIGINT")
        assert took < 15, took

        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        reader = subprocess.Popen(
            ["/usr/bin/python3", "-c",
             "import fcntl, os, sys, time\n"
             "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
             f"fcntl.fcntl(fd, {F_SETPIPE_SZ}, 4096)\n"
             "time.sleep(60)\n", str(fifo)])
        try:
            p = subprocess.Popen(args + ["-o", str(fifo)], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
            time.sleep(2)
            p.send_signal(signal.SIGINT)
            rc = p.wait(timeout=60)
            err = p.stderr.read().decode()
            assert rc == 0, (rc, err)
            assert "the rest was dropped" in err, err
        finally:
            reader.kill()
            reader.wait()
    finally:
        for b in burners:
            b.kill()
            b.wait()


@needs_root
def test_a_reader_that_pauses_gives_one_long_interval_not_a_burst():
    """Output blocked for 2 s at -i 200ms (as a collection slowed by an exit
    storm would be): the next interval is that long, the ones after it are
    200 ms again. No burst of near-empty intervals at one timestamp to catch
    up; late_intervals counts it and one line says so."""
    r, w = unread_pipe()
    p = subprocess.Popen([PMBPF, "record", "-o", "json", "-i", "200ms"], stdout=w,
                         stderr=subprocess.PIPE)
    os.close(w)
    records = []
    with os.fdopen(r, "rb") as f:
        try:
            while not any(x["type"] == "system" for x in records):
                records.append(json.loads(f.readline()))
            time.sleep(2)
            end = time.monotonic() + 3
            while time.monotonic() < end:
                records.append(json.loads(f.readline()))
        finally:
            p.send_signal(signal.SIGINT)
            f.read()
            p.wait(timeout=30)
    err = p.stderr.read().decode()
    systems = [x for x in records if x["type"] == "system"]
    intervals = [s["interval_s"] for s in systems]
    assert len(systems) >= 8, intervals
    assert max(intervals) >= 1.5, intervals
    # the stop's partial interval (SIGINT) is not among those read
    assert min(intervals) >= 0.15, intervals
    assert len({s["time"] for s in systems}) == len(systems), [s["time"] for s in systems]
    assert systems[-1]["late_intervals"] >= 1, systems[-1]
    assert systems[0]["late_intervals"] == 0, systems[0]
    late = [l for l in err.splitlines() if "collection falls behind" in l]
    assert len(late) == 1, err
    assert late[0].startswith("pmbpf: collection falls behind: an interval of 0.2 s took "), late
