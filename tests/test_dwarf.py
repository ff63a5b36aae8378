# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""pmbpf profile --call-graph dwarf: stacks through code without frame pointers,
demangled C++ names, JIT names from /tmp/perf-PID.map, truncated stacks."""
import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import BUILD, PMBPF, needs_root
from test_profile import folded, of_comm, profiler, share  # noqa: F401 (fixture)

DWARFLOAD = os.path.join(BUILD, "workloads", "dwarfload")
DWARFCPP = os.path.join(BUILD, "workloads", "dwarfcpp")
DWARF_SUMMARY = re.compile(r"pmbpf: dwarf: (\d+) stacks unwound \(([\d.]+) us each\), "
                           r"(\d+) truncated at (\d+) bytes, (\d+) lost")
SUMMARY = re.compile(r"pmbpf: (\d+) samples of \S+, (\d+) lost")

# What Debian 12's glibc 2.36 shows between the caller and the callback:
# qsort() tail-calls qsort_r() (so qsort itself is no frame), which sorts with
# msort_with_tmp (a recursive merge sort, as msort_with_tmp.part.0), and that
# calls the comparison function. Older or newer glibcs may show qsort or
# __qsort_r, or the introsort's internal names: accepted too.
QSORT_PATH = re.compile(r"(?:^|;)main;sort_items;(?:qsort|qsort_r|__qsort_r)"
                        r"(?:;(?:msort_with_tmp|msort|qsort_r|__qsort_r|_quicksort|"
                        r"insertion_sort|heapsort|introsort)[^;]*)*;cmp_items$")


def user_part(stack):
    """The stack without its kernel frames (a sample in an interrupt)."""
    return ";".join(f for f in stack.split(";") if not f.endswith("_[k]"))


def profile_workload(profiler, cmd, *args, name="out"):
    """Profile one run of cmd (-p), until -d; returns (output, profiler)."""
    w = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.DEVNULL)
    try:
        p = profiler("-e", "cpu-clock", "-p", w.pid, *args, name=name)
        out = p.stop(sig=None)
    finally:
        w.kill()
        w.wait()
    return out, p


def dwarf_summary(p):
    m = DWARF_SUMMARY.search(p.stderr)
    assert m, p.stderr
    return [float(g) if "." in g else int(g) for g in m.groups()]


@needs_root
def test_qsort_callback_reaches_main_with_dwarf(profiler):
    """libc's qsort has no frame pointers: with dwarf, >= 90% of the samples
    are main -> sort_items -> qsort_r -> msort_with_tmp... -> cmp_items, and
    every sample the kernel counted is in the output."""
    out, p = profile_workload(profiler, [DWARFLOAD, "sort", 10], "--call-graph", "dwarf",
                              "-F", 499, "-d", 2)
    stacks = of_comm(folded(out), "dwarfload")
    total = sum(stacks.values())
    assert total >= 100, p.stderr
    through = sum(c for s, c in stacks.items() if QSORT_PATH.search(user_part(s)))
    assert through >= 0.9 * total, (through, total, out)
    # with libc's symbol table (libc6-dbg), glibc's versioned names
    # ("__libc_start_main@@GLIBC_2.34") are shown without their version
    assert not any("@" in s for s in stacks), out
    samples, lost = map(int, SUMMARY.search(p.stderr).groups())
    unwound, us_each, truncated, size, _ = dwarf_summary(p)
    assert sum(folded(out).values()) == samples - lost, p.stderr
    assert unwound == samples - lost and truncated == 0 and size == 8192, p.stderr
    assert us_each > 0


@needs_root
def test_qsort_callback_is_cut_off_with_frame_pointers(profiler):
    """The same workload with fp: the kernel's frame-pointer walk cannot get
    through libc's qsort, so the callback is not under main. (Should fp
    start to unwind it, this fails, and the tests above lose their point.)"""
    out, p = profile_workload(profiler, [DWARFLOAD, "sort", 10], "--call-graph", "fp",
                              "-F", 499, "-d", 1)
    stacks = of_comm(folded(out), "dwarfload")
    total = sum(stacks.values())
    assert total >= 50, p.stderr
    assert share(stacks, "cmp_items") >= 0.8, out
    under_main = sum(c for s, c in stacks.items() if "main" in s.split(";") and
                     "cmp_items" in s.split(";"))
    assert under_main <= 0.1 * total, out
    assert "pmbpf: dwarf:" not in p.stderr


@needs_root
def test_cpp_names_are_demangled_in_folded_and_svg(profiler):
    out, p = profile_workload(profiler, [DWARFCPP, 10], "--call-graph", "dwarf", "-F", 499,
                              "-d", 1)
    stacks = of_comm(folded(out), "dwarfcpp")
    hot = "main;pmbpf_test::hot_work;pmbpf_test::Mixer<unsigned long>::churn"
    assert sum(c for s, c in stacks.items() if hot in s) >= 0.8 * sum(stacks.values()), out
    assert not any(f.startswith("_Z") for s in stacks for f in s.split(";")), out
    svg, p = profile_workload(profiler, [DWARFCPP, 10], "--call-graph", "dwarf", "-F", 499,
                              "-d", 1, "--svg", name="cpp.svg")
    assert "pmbpf_test::Mixer&lt;unsigned long&gt;::churn" in svg, svg[:3000]
    assert "pmbpf_test::hot_work" in svg and "_ZN10pmbpf_test" not in svg


HOT_JS = """
function pmbpfHotLoop(n) {
    let x = 0;
    for (let i = 0; i < n; i++)
        x = (x * 31 + i) % 1000003;
    return x;
}
const end = Date.now() + 10000;
let s = 0;
while (Date.now() < end)
    s += pmbpfHotLoop(100000);
console.log(s);
"""


@needs_root
def test_node_jit_function_is_named_from_its_perf_map(profiler, tmp_path):
    """node --perf-basic-prof writes /tmp/perf-PID.map; the hot JavaScript
    function, JIT code in anonymous memory, is named from it."""
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        pytest.skip("node is not installed (Debian: apt-get install nodejs)")
    script = tmp_path / "hot.js"
    script.write_text(HOT_JS)
    w = subprocess.Popen([node, "--perf-basic-prof", str(script)], stdout=subprocess.DEVNULL,
                         cwd=str(tmp_path))
    try:
        p = profiler("-e", "cpu-clock", "-p", w.pid, "--call-graph", "dwarf", "-F", 499,
                     "-d", 2)
        out = p.stop(sig=None)
    finally:
        w.kill()
        w.wait()
        if os.path.exists(f"/tmp/perf-{w.pid}.map"):
            os.unlink(f"/tmp/perf-{w.pid}.map")
    stacks = folded(out)
    total = sum(stacks.values())
    named = sum(c for s, c in stacks.items()
                if any("pmbpfHotLoop" in f for f in user_part(s).split(";")))
    assert total and named >= 0.5 * total, out


@needs_root
def test_perf_map_read_only_from_its_owner(profiler, tmp_path):
    """As perf: /tmp/perf-PID.map is read only when the process's user or
    root owns it and no one else may write it, and never through a link;
    otherwise one line says why and the JIT code stays unnamed."""
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        pytest.skip("node is not installed (Debian: apt-get install nodejs)")
    script = tmp_path / "hot.js"
    script.write_text(HOT_JS.replace("10000", "60000"))  # four profiles
    w = subprocess.Popen([node, "--perf-basic-prof", str(script)], stdout=subprocess.DEVNULL,
                         cwd=str(tmp_path))
    path = f"/tmp/perf-{w.pid}.map"

    def named_share(name):
        p = profiler("-e", "cpu-clock", "-p", w.pid, "--call-graph", "dwarf", "-F", 499,
                     "-d", 1.5, name=name)
        stacks = folded(p.stop(sig=None))
        total = sum(stacks.values())
        named = sum(c for s, c in stacks.items()
                    if any("pmbpfHotLoop" in f for f in user_part(s).split(";")))
        assert total, p.stderr
        return named / total, p.stderr

    try:
        for _ in range(100):
            if os.path.exists(path):
                break
            time.sleep(0.05)
        share, err = named_share("own")
        assert share >= 0.5 and "not read" not in err, (share, err)
        os.chmod(path, 0o666)
        share, err = named_share("writable")
        assert share == 0, err
        assert re.search(rf"^pmbpf: (/proc/{w.pid}/root)?{path} not read, writable by others "
                         rf"\(mode 0666\): JIT code of process {w.pid} stays unnamed$", err,
                         re.M), err
        os.chmod(path, 0o644)
        os.chown(path, 65534, 65534)
        share, err = named_share("other")
        assert share == 0, err
        assert "map not read, owned by uid 65534, neither the process's user (uid 0) nor " \
            "root: JIT" in err, err
        os.chown(path, 0, 0)
        os.rename(path, path + ".real")
        os.symlink(path + ".real", path)
        share, err = named_share("link")
        assert share == 0 and "map not read, a symbolic link: JIT" in err, err
    finally:
        w.kill()
        w.wait()
        for f in (path, path + ".real"):
            if os.path.lexists(f):
                os.unlink(f)


@needs_root
def test_deep_recursion_beyond_size_is_truncated_and_counted(profiler):
    """40 frames of ~500 bytes (20 KiB): cut at 8192 bytes, every such stack
    starts with [truncated] and is counted; with dwarf,32768 the same
    recursion reaches main."""
    out, p = profile_workload(profiler, [DWARFLOAD, "deep", 10, 40], "--call-graph", "dwarf",
                              "-F", 499, "-d", 1)
    stacks = of_comm(folded(out), "dwarfload")
    total = sum(stacks.values())
    cut = sum(c for s, c in stacks.items() if s.startswith("dwarfload;[truncated];deep_recurse"))
    assert total >= 50 and cut >= 0.9 * total, out
    assert not any("main" in s.split(";") for s in stacks if "[truncated]" in s), out
    _, _, truncated, size, _ = dwarf_summary(p)
    assert size == 8192 and truncated == sum(c for s, c in folded(out).items()
                                             if "[truncated]" in s.split(";")), p.stderr

    out, p = profile_workload(profiler, [DWARFLOAD, "deep", 10, 40], "--call-graph",
                              "dwarf,32768", "-F", 499, "-d", 1, name="big")
    stacks = of_comm(folded(out), "dwarfload")
    whole = sum(c for s, c in stacks.items()
                if re.search(r";main(;deep_recurse){40};deep_spin(;|$)", s))
    assert whole >= 0.9 * sum(stacks.values()), out
    assert dwarf_summary(p)[2:4] == [0, 32768], p.stderr

    svg, p = profile_workload(profiler, [DWARFLOAD, "deep", 10, 40], "--call-graph", "dwarf",
                              "-F", 499, "-d", 1, "--svg", name="deep.svg")
    truncated, unwound = dwarf_summary(p)[2], dwarf_summary(p)[0]
    assert "[truncated]" in svg
    assert f"(8192-byte stacks): {truncated} of {unwound} truncated" in svg, svg[:3000]


@pytest.mark.parametrize("arg,pattern", [
    ("dwarf,0", "invalid --call-graph size '0'"),
    ("dwarf,32776", "invalid --call-graph size '32776'"),
    ("dwarf,100", "invalid --call-graph size '100'"),
    ("dwarf,", "invalid --call-graph size ''"),
    ("dwarf,big", "invalid --call-graph size 'big'"),
    ("lbr", "invalid --call-graph 'lbr': give fp or dwarf[,SIZE]"),
    ("fp,8192", "invalid --call-graph 'fp,8192'"),
    ("", "invalid --call-graph ''"),
])
def test_bad_call_graph(arg, pattern):
    p = subprocess.run([PMBPF, "profile", "--call-graph", arg], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 2 and p.stdout == "", p
    assert len(p.stderr.splitlines()) == 1, p.stderr
    assert p.stderr.startswith("pmbpf: ") and pattern in p.stderr, p.stderr


def test_dwarf_with_off_cpu_is_refused():
    p = subprocess.run([PMBPF, "profile", "--off-cpu", "--call-graph", "dwarf"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p
    assert "does not go with --off-cpu" in p.stderr
