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
