# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The man pages: they build, man renders them without warnings, and they
cannot drift from pmbpf: every option of each command's --help is in its page
and every option the page names (OPTIONS, and the examples' command lines) is
in --help; one page per command; the version is debian/changelog's."""
import glob
import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import BUILD, PMBPF, ROOT, needs_root

MAN_DIR = os.path.join(BUILD, "man")
TEMPLATES = sorted(glob.glob(os.path.join(ROOT, "docs", "man", "*.in")))
PAGES = [os.path.basename(t)[:-3] for t in TEMPLATES]
OPT = re.compile(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)")
needs_man = pytest.mark.skipif(not shutil.which("man"),
                               reason="man (man-db) is not installed: ./deploy/install-deps.sh")


@pytest.fixture(scope="module", autouse=True)
def built():
    p = subprocess.run(["make", "-s", "man", f"OUTPUT={BUILD}"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr


def commands():
    out = subprocess.run([PMBPF, "help"], capture_output=True, text=True, check=True).stdout
    return [m.group(1) for m in re.finditer(r"^  ([a-z]+) ", out, re.M)
            if m.group(1) not in ("help", "version")]


def help_options(cmd, usage=False):
    """Option names in the option column of pmbpf CMD --help (with usage: and
    in its usage lines, "pmbpf list --attr LIST")."""
    out = subprocess.run([PMBPF, cmd, "--help"], capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        m = re.match(r"^ +(-\S.*?)(?:  |$)", line)
        if m:
            names |= set(OPT.findall(m.group(1)))
        m = re.match(r"^(?:Usage:)? *pmbpf [a-z]+ (.*?)(?:   |$)", line)
        if usage and m:
            names |= set(OPT.findall(m.group(1)))
    return names


def render(page, width=80):
    env = dict(os.environ, MANWIDTH=str(width), MAN_KEEP_FORMATTING="", LC_ALL="C.UTF-8")
    return subprocess.run(["man", "--warnings", "-l", os.path.join(MAN_DIR, page)],
                          capture_output=True, text=True, env=env, timeout=60)


def sections(text):
    """{SECTION NAME: its lines} of rendered man text."""
    out, name = {}, None
    for line in text.splitlines():
        if line and not line[0].isspace():
            name = line.strip()
            out.setdefault(name, [])
        elif name:
            out[name].append(line)
    return out


def test_a_page_for_every_command():
    missing = [c for c in commands() if f"pmbpf-{c}.8" not in PAGES]
    assert not missing, (f"no man page for {missing}: add docs/man/pmbpf-CMD.8.in "
                         "(copy pmbpf-list.8.in; @OPTIONS@ comes from --help)")
    assert "pmbpf.8" in PAGES and "pmbpf-fields.7" in PAGES


@needs_man
@pytest.mark.parametrize("page", PAGES)
def test_renders_without_warnings(page):
    p = render(page)
    assert p.returncode == 0 and not p.stderr.strip(), p.stderr
    assert "NAME" in p.stdout and "@" not in re.sub(r"\S+@\S+", "", p.stdout)
    # version and name from one place: debian/changelog (as pmbpf --version)
    version = subprocess.run([PMBPF, "--version"], capture_output=True, text=True).stdout.split()[1]
    assert f"pmbpf {version}" in p.stdout.splitlines()[-1], p.stdout.splitlines()[-1]


@needs_man
@pytest.mark.parametrize("cmd", [p[len("pmbpf-"):-2] for p in PAGES if re.match(r"pmbpf-.*\.8$", p)])
def test_options_match_help(cmd):
    """OPTIONS lists exactly the options of --help; example lines only use them."""
    text = render(f"pmbpf-{cmd}.8", width=200).stdout
    sec = sections(text)
    in_man = set()
    for line in sec.get("OPTIONS", []):
        if re.match(r"^ {7}-", line):
            in_man |= set(OPT.findall(line))
    in_help = help_options(cmd)
    assert in_man == in_help, (f"pmbpf {cmd}: only in --help: {sorted(in_help - in_man)}, "
                               f"only in the man page: {sorted(in_man - in_help)}")


@needs_man
@pytest.mark.parametrize("page", PAGES)
def test_command_lines_use_real_options(page):
    """Every `pmbpf CMD ...` line of a page (examples) uses options CMD has."""
    text = render(page, width=200).stdout
    cmds = set(commands())
    bad = []
    for line in text.splitlines():
        m = re.match(r"^\s*pmbpf ([a-z]+)\b(.*)$", line)
        if not m or m.group(1) not in cmds:
            continue
        args = m.group(2).split(" -- ")[0]
        if args.strip().startswith(("prints", "is ", "runs", "samples", "checks")):
            continue  # prose that starts a line with the command's name
        known = help_options(m.group(1), usage=True)
        bad += [f"{line.strip()}: {o}" for o in OPT.findall(args) if o not in known]
    assert not bad, bad


def test_version_from_changelog():
    with open(os.path.join(ROOT, "debian", "changelog")) as f:
        version = re.match(r"^pmbpf \(([^)]+)\)", f.readline()).group(1)
    out = subprocess.run([PMBPF, "--version"], capture_output=True, text=True).stdout
    assert out == f"pmbpf {version}\n"


@needs_man
@needs_root
def test_top_keys_are_the_help_screen():
    """pmbpf-top(8)'s KEYS section is the key table that top itself shows for
    '?': every key line of the screen, its keys and what they do, and no other."""
    from test_top import Pane
    p = Pane("", 160, 50)
    try:
        p.wait(lambda s: s[-1].startswith("?Help"), timeout=30, what="the view")
        p.keys("?")
        # the whole help: its last line (quit) drawn, and the same screen a
        # moment later (under load a capture caught it mid-draw: 14 of 15)
        screen = p.wait(lambda s: s[0].startswith("pmbpf top: keys")
                        and any(" quit" in line for line in s) and s, what="the help")
        last = [screen]

        def stable(s):
            same, last[0] = s == last[0], s
            return same and s
        screen = p.wait(stable, what="the help, drawn", poll=0.3)
    finally:
        p.close()
    shown = []
    for line in screen[2:]:
        if not line.strip():
            break
        gap = list(re.finditer(r" {2,}(?=\S)", line))[-1]  # before what the keys do
        keys = re.sub(r" +or +", " or ", line[:gap.start()].strip())
        shown.append(" ".join(f"{keys} {line[gap.end():]}".split()))
    assert len(shown) >= 10, screen
    p = render("pmbpf-top.8", width=200)
    assert p.returncode == 0 and not p.stderr, p.stderr
    page = " ".join(" ".join(sections(p.stdout)["KEYS"]).split())
    missing = [k for k in shown if k not in page]
    assert not missing, (missing, page)
    with open(os.path.join(MAN_DIR, "pmbpf-top.8")) as f:
        roff = f.read()
    assert roff.split(".SH KEYS", 1)[1].split(".SH ", 1)[0].count(".TP") == len(shown)
