# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Input from outside: files that never end, hostile names that must not
reach a terminal, descriptors closed at start."""
import json
import os
import resource
import subprocess
import threading

import pytest

import gen_cpi_series as gen
from conftest import PMBPF, needs_root

# Far more than pmbpf may hold of an input (64 MiB), far less than /dev/zero.
MEMORY_LIMIT = 512 << 20
TERMINAL_CONTROLS = [chr(c) for c in range(0x20) if chr(c) not in "\n\t"] + ["\x7f", "\u009b"]


def stat_doc(command="true", metric=None):
    """A 'pmbpf stat -r 3 -o json' document (the layout of docs/fields.md)."""
    runs = []
    for i, (wall, pf) in enumerate([(2879718, 78), (936378, 77), (6427682, 78)]):
        metrics = {"wall-time": wall, "cpu-time": wall // 2, "page-faults": pf}
        if metric:
            metrics[metric] = 5
        runs.append({"run": i + 1, "group": "A", "exit_code": 0, "processes": 1,
                     "metrics": metrics})
    units = {"wall-time": "ns", "cpu-time": "ns", "page-faults": ""}
    if metric:
        units[metric] = ""
    return {"type": "stat", "schema": 1, "pmbpf": "0.1.0",
            "host": {"cpu_model": "x", "kernel": "6", "machine": "x86_64", "cpus": 2,
                     "pmu": "none", "attach": "tp_btf"},
            "events": [{"name": "page-faults", "class": "software", "state": "counting",
                        "group": None, "cpus": 2, "error": None}],
            "command": [command], "repeat": 3, "units": units, "runs": runs}


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(*args, **kw):
    return subprocess.run([PMBPF] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=60, preexec_fn=limited, **kw)


def one_line(p, message):
    assert p.returncode == 2, p
    assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith("pmbpf: "), p.stderr
    assert message in p.stderr, p.stderr
    assert p.stdout == ""


@pytest.fixture
def base(tmp_path):
    path = tmp_path / "base.json"
    path.write_text(json.dumps(stat_doc()))
    return path


def test_compare_input_that_never_ends(base, tmp_path):
    """/dev/zero, a file larger than the limit: one line, exit 2, memory bounded."""
    one_line(run("compare", base, "/dev/zero"), "/dev/zero holds more than 64 MiB")
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(65 << 20)
    one_line(run("compare", base, big), "big.json holds more than 64 MiB")
    one_line(run("compare", base, tmp_path), "Is a directory")


def test_compare_reads_a_fifo(base, tmp_path):
    """A FIFO (`compare base.json <(...)`) is read as a stream, with the same limit."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def write(data):
        with open(fifo, "wb") as f:
            try:
                f.write(data)
            except BrokenPipeError:
                pass

    w = threading.Thread(target=write, args=(base.read_bytes(),))
    w.start()
    p = run("compare", base, fifo)
    w.join()
    assert p.returncode == 0 and "regressions" in p.stdout, p
    w = threading.Thread(target=write, args=(b" " * (65 << 20),))
    w.start()
    p = run("compare", base, fifo)
    w.join()
    one_line(p, "fifo holds more than 64 MiB")


def test_cpi_input_that_never_ends(tmp_path):
    one_line(run("cpi", "/dev/zero"), "/dev/zero:1: a line of more than 64 MiB")
    p = subprocess.run(f"head -c 70000000 /dev/zero | {PMBPF} cpi -", shell=True,
                       capture_output=True, text=True, timeout=60, preexec_fn=limited)
    one_line(p, "standard input:1: a line of more than 64 MiB")


def no_controls(text):
    return not any(c in text for c in TERMINAL_CONTROLS)


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_compare_names_reach_no_terminal(base, tmp_path, fmt):
    """A command and a metric named with escape sequences (the title of the
    terminal, a colour, CSI as C1) are printed with U+FFFD in their place."""
    evil = tmp_path / "evil.json"
    evil.write_text(json.dumps(stat_doc(command="\x1b]0;pwned\x07true",
                                        metric="evil\x1b[31m\u009b2J")))
    p = run("compare", base, evil, "-o", fmt)
    assert p.returncode == 0, p
    assert "\ufffd]0;pwned\ufffdtrue" in p.stdout, p.stdout
    assert "evil\ufffd[31m\ufffd2J" in p.stdout, p.stdout
    assert no_controls(p.stdout.replace("\n", "")), p.stdout
    p = run("compare", base, evil, "-o", "json")
    assert p.returncode == 0 and json.loads(p.stdout), p
    assert "\x1b" not in p.stdout and "\x07" not in p.stdout, p.stdout


def test_errors_echo_no_controls(base, tmp_path):
    """Names echoed in errors: -e events, file names, thresholds."""
    for args in (["list", "--attr", "bogus\x1b]0;x\x07"],
                 ["compare", base, tmp_path / "no\x1b[2Jsuch.json"],
                 ["compare", "-t", "x\x1b[2J=+1%", base, base]):
        p = run(*args)
        assert p.returncode == 2 and p.stderr.startswith("pmbpf: "), p
        assert "\ufffd" in p.stderr and no_controls(p.stderr.replace("\n", "")), p.stderr


def test_cpi_names_reach_no_terminal():
    """A cgroup named with an escape sequence, flagged as the victim."""
    name = gen.VICTIM + "\x1b]0;pwned\x07"
    lines = [line.replace(json.dumps(gen.VICTIM)[1:-1], json.dumps(name)[1:-1])
             for line in gen.generate(7, start=90)]
    p = subprocess.run([PMBPF, "cpi"], input="\n".join(lines) + "\n", capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert f" {gen.VICTIM}\ufffd]0;pwned\ufffd: CPI " in p.stdout, p.stdout
    assert no_controls(p.stdout.replace("\n", "")), p.stdout


def closed_stdout(*args):
    return subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", PMBPF] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=60)


def test_compare_with_stdout_closed_is_a_write_error(base):
    """Exit 1 means "regressed": a write error is 2, as with /dev/full."""
    p = closed_stdout("compare", base, base)
    assert p.returncode == 2, p
    assert p.stderr == "pmbpf: cannot write the comparison: Bad file descriptor\n", p.stderr
    with open("/dev/full", "w") as full:
        p = subprocess.run([PMBPF, "compare", base, base], stdout=full, stderr=subprocess.PIPE,
                           text=True)
    assert p.returncode == 2, p


@needs_root
@pytest.mark.parametrize("args", [["record", "-c", "2", "-i", "100ms"],
                                  ["profile", "-d", "0.3"]])
def test_stdout_closed_is_never_a_bpf_object(args):
    """With stdout closed, the first BPF or perf object opened would take
    descriptor 1: the output must fail as a write to a closed stdout does."""
    p = closed_stdout(*args)
    assert p.returncode == 1, p
    assert "pmbpf: cannot write to standard output: Bad file descriptor" in p.stderr, p.stderr
    assert "Invalid argument" not in p.stderr, p.stderr


@needs_root
def test_stat_command_reaches_no_terminal():
    """stat's report names the command: its arguments pass the same rule."""
    p = subprocess.run([PMBPF, "stat", "-e", "page-faults", "--", "sh", "-c", "true #\x1b[31m"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "Counts for 'sh -c true #\ufffd[31m'" in p.stderr, p.stderr
    assert no_controls(p.stderr.replace("\n", "")), p.stderr
