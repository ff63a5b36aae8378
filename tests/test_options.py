# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Each command's options come from one table (user/cmd/cmdopt.c): every option
that pmbpf CMD --help lists is one its parser takes, spelled as listed, with
an argument exactly when --help names one, and handled by the command (not
refused by it as unknown). Parsing stops at an unknown option placed after
it, so nothing is run. tests/unit/test_cmdopt.c checks the tables themselves."""
import re
import subprocess

import pytest

import conftest
from conftest import PMBPF

# A valid argument per option (by long name, else by placeholder), so that the
# command's own check of it passes and parsing goes on to the next option.
BY_NAME = {"metrics": "ipc", "window": "60", "cpi-window": "60", "call-graph": "dwarf,4096",
           "thread-fold": "auto"}
BY_ARG = {"LIST": "task-clock", "NAME": "task-clock", "TIME": "1", "N": "16", "PID": "1",
          "PATH": "/", "FORMAT": "json", "WHAT": "process", "FILE": "/dev/null", "TEXT": "t",
          "HZ": "99", "ADDR:PORT": "127.0.0.1:9465", "NAME=+P%": "ipc=-5%", "K": "3",
          "CPUS": "0.1", "M": "20"}
# an optional argument is listed as --name[=ARG] (long options only)
SPEC = re.compile(r"^  (?:-([A-Za-z0-9]), |    )--([a-z0-9-]+)(?: (\S+)|(\[=\S+\]))?(?:  |$)")


def commands():
    out = subprocess.run([PMBPF, "help"], capture_output=True, text=True, check=True).stdout
    return [m.group(1) for m in re.finditer(r"^  ([a-z]+) ", out, re.M)
            if m.group(1) not in ("help", "version", "list")]


def options(cmd):
    """[(letter or None, long name, placeholder or None)] from pmbpf CMD --help."""
    p = subprocess.run([PMBPF, cmd, "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and not p.stderr, p
    lines = [l for l in p.stdout.splitlines() if re.match(r"^ +-", l)]
    unread = [l for l in lines if not SPEC.match(l)]
    assert not unread, f"option lines not as '  -x, --name ARG  help': {unread}"
    return [(m[0], m[1], m[2] or m[3]) for m in (SPEC.match(l).groups() for l in lines)]


def run(cmd, *args):
    return subprocess.run([PMBPF, cmd, *args], capture_output=True, text=True, timeout=30)


CMDS = commands()


def test_commands_found():
    assert {"record", "stat", "top", "serve", "profile", "doctor", "compare"} <= set(CMDS), CMDS


@pytest.mark.parametrize("cmd", CMDS)
def test_help_lists_options(cmd):
    opts = options(cmd)
    names = [o[1] for o in opts]
    assert "help" in names and ("h", "help", None) in opts, opts
    assert len(names) == len(set(names)), names
    letters = [o[0] for o in opts if o[0]]
    assert len(letters) == len(set(letters)), letters


@pytest.mark.parametrize("cmd", CMDS)
def test_listed_options_are_taken(cmd):
    """Spelled as listed, with an argument exactly when --help names one."""
    bad = []
    for letter, name, arg in options(cmd):
        if arg and arg.startswith("[="):
            # optional: --name=ARG takes it, a separate word is not taken
            p = run(cmd, f"--{name}", "--no-such-option")
            if "unrecognized option '--no-such-option'" not in p.stderr:
                bad.append(f"--{name} without {arg}: {p.stderr.strip()}")
        elif arg:
            p = run(cmd, f"--{name}")
            if f"option '--{name}' requires an argument" not in p.stderr:
                bad.append(f"--{name} without {arg}: {p.stderr.strip()}")
            if letter:
                p = run(cmd, f"-{letter}")
                if f"option requires an argument -- '{letter}'" not in p.stderr:
                    bad.append(f"-{letter} without {arg}: {p.stderr.strip()}")
        else:
            p = run(cmd, f"--{name}=x")
            if f"option '--{name}' doesn't allow an argument" not in p.stderr:
                bad.append(f"--{name}=x: {p.stderr.strip()}")
    assert not bad, bad
    p = run(cmd, "--no-such-option")
    assert p.returncode == 2 and "unrecognized option '--no-such-option'" in p.stderr, p


@pytest.mark.parametrize("cmd", CMDS)
def test_listed_options_are_handled(cmd):
    """The command's parser handles each option (with a valid argument) and
    goes on: to the unknown option after it, or for --help to the help."""
    if any(arg == "PATH" for _, _, arg in options(cmd)) and not conftest.cgroup2_mount():
        pytest.skip("no cgroup2 mount for -G /")
    bad = []
    for letter, name, arg in options(cmd):
        optional = arg and arg.startswith("[=")
        value = [BY_NAME.get(name) or BY_ARG[arg.strip("[=]")]] if arg else []
        spellings = [([f"--{name}"], value)] + ([([f"-{letter}"], value)] if letter else [])
        if optional:
            spellings = [([f"--{name}={value[0]}"], []), ([f"--{name}"], [])]
        for spelling, value in spellings:
            p = run(cmd, *spelling, *value, "--no-such-option")
            if name == "help":
                ok = p.returncode == 0 and p.stdout.startswith("Usage: pmbpf ")
            else:
                ok = (p.returncode == 2 and
                      "unrecognized option '--no-such-option'" in p.stderr)
            if not ok:
                bad.append(f"{spelling} {' '.join(value)}: rc {p.returncode}: {p.stderr.strip()}")
    assert not bad, bad
