# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Setting up: the README's first command works where a fresh Debian 12 has
no make, git, sudo or man; CI runs the README's commands; bash completion
offers commands, options, events, cgroups and PIDs from pmbpf itself.
(The .deb is tested in a fresh Debian root by make debtest, tests/deb/.)"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import PMBPF, ROOT, WORK, allowed_cpus, needs_root

COMPLETION = os.path.join(ROOT, "deploy", "pmbpf.bash-completion")


def readme_text():
    with open(os.path.join(ROOT, "README.md")) as f:
        return f.read()


def readme_block(heading):
    """The command lines of the first ```sh block after a README heading."""
    text = readme_text()
    start = text.index(heading)
    block = re.search(r"```sh\n(.*?)```", text[start:], re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]


def test_readme_setup_starts_without_make():
    """The first command of each set-up block is a script of this tree, not a make target."""
    for heading in ("## Set up and run", "## Set up and test"):
        first = readme_block(heading)[0]
        assert first.split()[0] not in ("make", "sudo", "git", "man"), (heading, first)
        path = os.path.join(ROOT, first.split()[0])
        assert os.access(path, os.X_OK), f"{first}: not an executable file of the tree"
        with open(path) as f:
            assert f.readline() in ("#!/bin/sh\n", "#!/bin/bash\n"), first


def essential_path(tmp_path):
    """A directory with what a fresh (minbase) Debian 12 has on its PATH: the
    files of the Essential packages, and apt. Nothing else (no make, git, sudo)."""
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Essential}\n"],
                         capture_output=True, text=True, check=True).stdout
    pkgs = [line.split()[0] for line in out.splitlines() if line.endswith(" yes")] + ["apt"]
    files = subprocess.run(["dpkg", "-L"] + pkgs, capture_output=True, text=True).stdout
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for f in files.splitlines():
        if re.match(r"^(/usr)?/s?bin/[^/]+$", f) and os.access(f, os.X_OK):
            name = os.path.basename(f)
            if not (bindir / name).exists():
                (bindir / name).symlink_to(os.path.realpath(f))
    return str(bindir)


@pytest.mark.skipif(os.geteuid() != 0, reason="install-deps.sh runs as root")
def test_install_deps_runs_with_what_a_fresh_debian_has(tmp_path):
    """deploy/install-deps.sh with only the Essential packages' commands on
    PATH: on this host (everything installed) it checks and exits 0."""
    path = essential_path(tmp_path)
    for absent in ("make", "git", "sudo", "man"):
        assert not os.path.exists(os.path.join(path, absent)), absent
    p = subprocess.run([os.path.join(ROOT, "deploy", "install-deps.sh")],
                       env={"PATH": path, "LC_ALL": "C"}, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "not found" not in p.stderr, p.stderr


def test_ci_runs_the_readme_commands():
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        ci = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    for heading in ("## Set up and run", "## Set up and test"):
        setup = readme_block(heading)[0]
        assert setup in ci, f".ci/run does not run the README's {setup}"
    test = readme_block("## Set up and test")
    assert [c for c in ci if c in test] == test, f".ci/run must run {test} in this order"


def complete(*words):
    """COMPREPLY of the completion function for `words` (the last one is completed)."""
    script = (f"source {COMPLETION}\n"
              "COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _pmbpf\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    env = dict(os.environ, PATH=os.path.dirname(PMBPF) + ":" + os.environ["PATH"])
    p = subprocess.run(["bash", "-c", script, "bash", "pmbpf", *words], capture_output=True,
                       text=True, env=env, timeout=30)
    assert p.returncode == 0 and not p.stderr, p.stderr
    return [w for w in p.stdout.splitlines() if w]


def help_options(cmd):
    out = subprocess.run([PMBPF, cmd, "--help"], capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        m = re.match(r"^ +(-\S.*?)(?:  |$)", line)
        if m:
            names |= set(re.findall(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)", m.group(1)))
    return names


def test_completion_commands_and_options():
    out = subprocess.run([PMBPF, "help"], capture_output=True, text=True).stdout
    assert set(complete("")) == set(re.findall(r"^  ([a-z]+) ", out, re.M))
    assert complete("rec") == ["record"]
    for cmd in ("record", "stat", "top", "serve"):
        assert set(complete(cmd, "-")) - {"--"} == help_options(cmd), cmd
    assert complete("record", "--max") == ["--max-procs"]


def test_completion_arguments():
    events = complete("record", "-e", "task-")
    assert "task-clock" in events
    assert "cycles,task-clock" in complete("top", "--events", "cycles,task-c")
    assert "sched:" in complete("record", "-e", "sch")
    assert "sched:sched_switch" in complete("record", "-e", "sched:sched_sw")
    assert str(os.getpid()) in complete("record", "-p", str(os.getpid()))
    assert set(complete("record", "-o", "")) == {"table", "json", "csv"}
    assert set(complete("record", "-b", "")) == {"process", "thread", "cgroup", "all"}
    assert "/bin/" not in complete("stat", "--", "l"), "a command after --"
    assert "ls" in complete("stat", "-e", "task-clock", "--", "l")


def test_completion_cgroups():
    mnt = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[fields.index("-") + 1] == "cgroup2":
                mnt = fields[4]
                break
    if not mnt:
        pytest.skip("no cgroup v2 hierarchy mounted")
    name = f"pmbpf-comp-{os.getpid()}"
    os.mkdir(os.path.join(mnt, name))
    try:
        got = complete("record", "-G", "/pmbpf-comp-")
        assert f"/{name}/" in got
        assert all(os.path.isdir(mnt + g) for g in got), got
    finally:
        os.rmdir(os.path.join(mnt, name))


@pytest.mark.skipif(not shutil.which("bash"), reason="bash is not installed")
def test_completion_is_valid_bash():
    p = subprocess.run(["bash", "-n", COMPLETION], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


@pytest.mark.skipif(not shutil.which("dpkg"), reason="make deb needs dpkg (Debian)")
def test_deb_failure_names_its_log(tmp_path):
    """When dpkg-buildpackage fails, make deb shows the end of the build log
    and names the log, which exists and holds the build's output."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "dpkg-buildpackage").write_text("#!/bin/sh\necho 'a build step failed here'\nexit 2\n")
    (fake / "dpkg-buildpackage").chmod(0o755)
    env = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}")
    p = subprocess.run(["make", "-s", "deb", f"OUTPUT={tmp_path}/out/"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode != 0
    m = re.search(r"dpkg-buildpackage failed \(log: (\S+)\)", p.stdout + p.stderr)
    assert m, p.stdout + p.stderr
    log = m.group(1) if os.path.isabs(m.group(1)) else os.path.join(ROOT, m.group(1))
    with open(log) as f:
        assert "a build step failed here" in f.read()
    assert "a build step failed here" in p.stdout  # its end, shown


def readme_usage():
    """Per command, the options the README's usage synopsis names (not its comments)."""
    text = readme_text()
    block = re.search(r"```\n(.*?)```", text[text.index("## Usage"):], re.S).group(1)
    usage, cmd = {}, None
    for line in block.splitlines():
        code = line.split("  # ")[0]
        m = re.match(r"pmbpf (\w+)", code)
        if m:
            cmd = m.group(1)
        usage.setdefault(cmd, set()).update(
            re.findall(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)", code))
    return usage


def test_readme_usage_names_real_options():
    """Every command has a line in the README's synopsis, and every option it
    names is one that command's --help describes."""
    usage = readme_usage()
    out = subprocess.run([PMBPF, "help"], capture_output=True, text=True).stdout
    assert set(usage) == set(re.findall(r"^  ([a-z]+) ", out, re.M)) - {"version", "help"}
    for cmd, opts in usage.items():
        p = subprocess.run([PMBPF, cmd, "--help"], capture_output=True, text=True)
        known = set(re.findall(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)", p.stdout + p.stderr))
        assert opts and opts <= known, f"pmbpf {cmd}: {sorted(opts - known)} not in its --help"


def readme_examples(start):
    """(command, output lines) of each README example whose command starts with
    START and that shows what it prints."""
    found = []
    for cmd, out in re.findall(r"```\n\$ (pmbpf [^\n]*)\n(.*?)```", readme_text(), re.S):
        if cmd.startswith(start) and not out.startswith("$ "):
            found.append((cmd, out.rstrip("\n").split("\n")))
    return found


def shape(line):
    """A line of output with its figures, times and widths left out."""
    return re.sub(r"\d+(\.\d+)?", "N", " ".join(line.split()))


no_pmu = pytest.mark.skipif(os.path.exists("/sys/bus/event_source/devices/cpu"),
                            reason="the README's examples are from a host without a hardware PMU")


@needs_root
@no_pmu
def test_readme_record_examples_are_what_record_prints():
    """The README's `pmbpf record ... -c 1` examples, run here: their
    messages, the interval line and the column titles are what pmbpf prints
    today (the rows are that host's; -G of a cgroup this host lacks is left out)."""
    examples = [(c, o) for c, o in readme_examples("pmbpf record ") if " -c 1" in c]
    assert len(examples) >= 4, examples
    for cmd, out in examples:
        cmd = re.sub(r" -G \S+", "", cmd).replace("pmbpf ", PMBPF + " ", 1)
        p = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, cmd + "\n" + p.stderr
        said = [line for line in out if line.startswith("pmbpf: ")]
        # more lines may follow on a busy host (late intervals)
        assert p.stderr.splitlines()[:len(said)] == said, cmd
        table = out[len(said):]
        got = p.stdout.split("\n")
        assert table[0] == got[0] == "", f"{cmd}: a blank line before each interval"
        assert shape(table[1]) == shape(got[1]), cmd
        assert table[2] == got[2], f"{cmd}: column titles"


@needs_root
@no_pmu
def test_readme_error_and_stat_examples_are_what_pmbpf_prints():
    """The README's unknown-event line (up to the first suggestion: the others
    tie, in the order of this host's tracefs) and its stat examples, line by
    line but for the figures."""
    (cmd, out), = readme_examples("pmbpf record -e syscalls:")
    p = subprocess.run([PMBPF] + cmd.split()[1:], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and not p.stdout
    first = out[0].index("', ") + 1
    assert p.stderr.startswith(out[0][:first]), p.stderr
    assert p.stderr.endswith("? (pmbpf list shows every name)\n"), p.stderr
    examples = readme_examples("pmbpf stat ")
    assert len(examples) >= 2, examples
    for cmd, out in examples:
        cmd = cmd.replace("pmbpf ", PMBPF + " ", 1).replace("./build/workloads/work", WORK)
        p = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert p.returncode == 0, cmd + "\n" + p.stderr
        got = p.stderr.replace(WORK, "./build/workloads/work").rstrip("\n").split("\n")
        if out[0].startswith("pmbpf: metric topdown: not supported on this host ("):
            # the CPU it names is the host's
            assert got[0].startswith(out[0][:out[0].index("(")]), got[0]
            out, got = out[1:], got[1:]
        assert [shape(line) for line in got] == [shape(line) for line in out], cmd


TOP_SIZE = (120, 45)  # the terminal of the README's pmbpf top screen


@needs_root
@no_pmu
@pytest.mark.skipif(shutil.which("tmux") is None,
                    reason="tmux is not installed (./deploy/install-deps.sh installs it)")
def test_readme_top_screen_is_what_top_shows():
    """`pmbpf top` in a terminal of the README's size: its header (events,
    the no-PMU lines), the sort line, the column titles and the keys are the
    README's, figures aside."""
    text = readme_text()
    screen = re.search(r"```\n(pmbpf top .*?)```", text, re.S).group(1).rstrip("\n").split("\n")
    assert max(map(len, screen)) <= TOP_SIZE[0]
    sock = os.path.join(tempfile.gettempdir(), f"pmbpf-readme-{os.getpid()}.tmux")
    tmux = ["tmux", "-S", sock, "-f", "/dev/null"]
    subprocess.run(tmux + ["new-session", "-d", "-x", str(TOP_SIZE[0]), "-y", str(TOP_SIZE[1]),
                           f"{PMBPF} top; sleep 60"], check=True)
    try:
        end = time.time() + 30
        while True:
            got = subprocess.run(tmux + ["capture-pane", "-p"], capture_output=True, text=True,
                                 check=True).stdout.rstrip("\n").split("\n")
            if any(re.match(r" +PID ", line) for line in got) or time.time() > end:
                break
            time.sleep(0.2)
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True)
    assert any(re.match(r" +PID ", line) for line in got), "no column titles in 30 s:\n" + \
        "\n".join(got)
    title = next(i for i, line in enumerate(screen) if re.match(r" +PID ", line))
    # the first line (time, host, kernel) and the counts of processes are this host's
    fixed = [shape(line) for line in screen[1:title] if " processes, " not in line]
    assert [shape(line) for line in got[1:title] if " processes, " not in line] == fixed
    assert got[title] == screen[title]
    assert got[-1] == screen[-1], "the keys"


@needs_root
def test_readme_delays_example_reads_what_record_writes():
    """The README's 'who delayed whom' pipeline, on the root cgroup while a
    spinner holds a CPU: it prints a line of the keys the README shows."""
    (cmd, out), = re.findall(r"```\n\$ (pmbpf record -o json -b cgroup \| .*?)\n(\{.*?)```",
                             readme_text(), re.S)
    cmd = cmd.replace("pmbpf record ", f"{PMBPF} record -c 1 ", 1).replace('"/demo-victim"', '"/"')
    cpu, = allowed_cpus(1)
    spin = subprocess.Popen(["taskset", "-c", str(cpu), WORK, "spin", "4"],
                            stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        p = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60)
    finally:
        spin.kill()
        spin.wait()
    assert p.returncode == 0, p.stderr
    want, got = json.loads(out), json.loads(p.stdout)
    assert got["cgroup"] == "/" and got["runq_total_ns"] > 0, got
    assert set(got) == set(want)
    assert got["delayed_by"], "nothing delayed the root cgroup's tasks behind a spinner"
    assert {frozenset(d) for d in got["delayed_by"]} == {frozenset(d) for d in want["delayed_by"]}
