# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Container ids wherever a cgroup is taken (-G), and containers shown as runtime:id12.

Issue 34: `-G 05fc48fc6308` said "No such file or directory" while top's
filter took the id; record's process table showed the tail of a 64-hex cgroup
name. Fake container cgroups are made under the cgroup2 mount, named as podman
and docker lay them out, with a busy process in each; the ids are random, so
that runs of this test on a shared host never match each other's.
"""
import json
import os
import shutil
import subprocess
import time
import uuid

import pytest

from conftest import PMBPF, WORK, cgroup2_mount, needs_root, rmdir_retry

pytestmark = needs_root

COMM = "ctridburn"


def hex_id(prefix=""):
    return (prefix + uuid.uuid4().hex + uuid.uuid4().hex)[:64]


@pytest.fixture(scope="module")
def containers(tmp_path_factory):
    """A podman container (cgroupfs manager) and two docker ones (systemd driver)
    whose ids share their first 12 digits, each with a process inside that
    wakes every 2 ms (seen in every interval, at little CPU cost)."""
    mnt = cgroup2_mount()
    if not mnt:
        pytest.skip("no cgroup v2 hierarchy mounted")
    burner = str(tmp_path_factory.mktemp("ctr") / COMM)
    shutil.copy(WORK, burner)
    root = f"/pmbpf-test-ids-{os.getpid()}"
    shared = uuid.uuid4().hex[:12]
    ids = {"podman": hex_id(), "docker": hex_id(shared), "docker2": hex_id(shared)}
    rel = {"podman": f"{root}/libpod_parent/libpod-{ids['podman']}",
           "docker": f"{root}/system.slice/docker-{ids['docker']}.scope",
           "docker2": f"{root}/system.slice/docker-{ids['docker2']}.scope"}
    procs = {}
    try:
        for name, r in rel.items():
            os.makedirs(mnt + r)
            procs[name] = subprocess.Popen(
                ["sh", "-c", f'echo $$ > "{mnt + r}/cgroup.procs" && exec "$0" sleep 300000 2000',
                 burner])
        for name, r in rel.items():
            for _ in range(100):
                with open(f"{mnt + r}/cgroup.procs") as f:
                    if str(procs[name].pid) in f.read().split():
                        break
                time.sleep(0.02)
        yield {"mnt": mnt, "ids": ids, "rel": rel, "pids": {n: p.pid for n, p in procs.items()},
               "shared": shared, "burner": burner}
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
        # each directory once, the deepest first: a parent is tried only once its
        # children are gone (retrying a parent before them took 5 s a try)
        dirs = set()
        for r in rel.values():
            while r.startswith(root):
                dirs.add(mnt + r)
                r = os.path.dirname(r)
        for d in sorted(dirs, key=lambda d: d.count("/"), reverse=True):
            rmdir_retry(d, 100, 0.05)


def run(*args, timeout=60):
    return subprocess.run([PMBPF] + list(args), capture_output=True, text=True, timeout=timeout)


def is_ancestor(path, of):
    return path == of or path == "/" or of.startswith(path + "/")


def record_json(cgroup):
    p = run("record", "-G", cgroup, "-e", "task-clock", "-i", "400ms", "-c", "2", "-o", "json",
            "-b", "all")
    assert p.returncode == 0, p.stderr
    return [json.loads(l) for l in p.stdout.splitlines()]


@pytest.mark.parametrize("digits", [12, 19, 64])
def test_record_takes_a_container_id(containers, digits):
    """-G ID collects the container's cgroup, as -G PATH does, and nothing else."""
    c = containers
    arg = c["ids"]["podman"][:digits]
    if digits == 19:
        arg = arg.upper()  # ids are hex: case does not matter
    recs = record_json(arg)
    procs = [r for r in recs if r["type"] == "process"]
    assert procs, recs
    assert {r["pid"] for r in procs} == {c["pids"]["podman"]}, procs
    assert all(r["cgroup"] == c["rel"]["podman"] for r in procs), procs
    cgs = [r for r in recs if r["type"] == "cgroup"]
    own = [r for r in cgs if r["cgroup"] == c["rel"]["podman"]]
    assert own and all(r["runtime"] == "podman" and
                       r["container_id"] == c["ids"]["podman"][:12] for r in own), cgs
    # the others are its ancestors, with its roll-up
    assert all(is_ancestor(r["cgroup"], c["rel"]["podman"]) for r in cgs), cgs
    # the same figures as the path gives
    by_path = record_json(c["rel"]["podman"])
    assert {r["pid"] for r in by_path if r["type"] == "process"} == {c["pids"]["podman"]}


def test_a_longer_prefix_tells_two_containers_apart(containers):
    c = containers
    for name in ("docker", "docker2"):
        i = next(i for i in range(12, 64) if c["ids"]["docker"][i] != c["ids"]["docker2"][i])
        recs = record_json(c["ids"][name][:i + 1])
        pids = {r["pid"] for r in recs if r["type"] == "process"}
        assert pids == {c["pids"][name]}, (name, pids)


@pytest.mark.parametrize("cmd", [["record", "-c", "1"], ["top"], ["serve"],
                                 ["profile", "-d", "1"]])
def test_ambiguous_or_unknown_ids_are_one_line(containers, cmd):
    c = containers
    p = run(cmd[0], "-G", c["shared"], *cmd[1:], timeout=30)
    assert p.returncode == 2 and p.stdout == "", p
    assert len(p.stderr.splitlines()) == 1, p.stderr
    assert p.stderr.startswith(f"pmbpf: container id {c['shared']} is ambiguous: 2 containers'")
    for name in ("docker", "docker2"):
        assert c["rel"][name] in p.stderr, p.stderr
    unknown = "f" * 11 + "e"  # random ids have 2^-48 odds of it
    p = run(cmd[0], "-G", unknown, *cmd[1:], timeout=30)
    assert p.returncode == 2 and p.stdout == "", p
    assert p.stderr.startswith(f"pmbpf: no container has an id starting {unknown}:"), p.stderr
    assert len(p.stderr.splitlines()) == 1, p.stderr
    # fewer than 12 digits is a path, as before
    p = run(cmd[0], "-G", c["shared"][:11], *cmd[1:], timeout=30)
    assert p.returncode == 2 and "No such file or directory" in p.stderr, p.stderr


def test_profile_takes_a_container_id(containers):
    c = containers
    cg = c["mnt"] + c["rel"]["podman"]
    burn = subprocess.Popen(["sh", "-c", f'echo $$ > "{cg}/cgroup.procs" && exec "$0" burn 1500',
                             c["burner"]], stdout=subprocess.DEVNULL)
    try:
        p = run("profile", "-G", c["ids"]["podman"][:12], "-d", "1", "-F", "199")
    finally:
        burn.kill()
        burn.wait()
    assert p.returncode == 0, p.stderr
    comms = {l.split(";")[0] for l in p.stdout.splitlines() if l.strip()}
    assert comms == {COMM}, p.stdout[:2000]


def test_serve_takes_a_container_id(containers):
    c = containers
    with __import__("socket").socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen([PMBPF, "serve", "-G", c["ids"]["podman"][:14], "-i", "300ms",
                          "--listen", f"127.0.0.1:{port}"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        import urllib.request
        body = ""
        for _ in range(100):
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                              timeout=5).read().decode()
                if 'cgroup="' in body:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        cgs = {l.split('cgroup="')[1].split('"')[0] for l in body.splitlines()
               if l.startswith("pmbpf_") and 'cgroup="' in l}
        assert c["rel"]["podman"] in cgs, cgs
        assert all(is_ancestor(cg, c["rel"]["podman"]) for cg in cgs), cgs
    finally:
        p.terminate()
        p.communicate(timeout=20)


def test_record_table_shows_runtime_and_short_id(containers):
    """Issue 34 item 13: the CGROUP column showed "...<tail of 64 hex digits>"."""
    c = containers
    p = run("record", "-G", f"{c['rel']['podman'].rsplit('/', 2)[0]}", "-e", "task-clock",
            "-i", "400ms", "-c", "1", "-b", "process")
    assert p.returncode == 0, p.stderr
    rows = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) > 3 and f[0].isdigit():
            rows[int(f[0])] = f
    for name in ("podman", "docker", "docker2"):
        row = rows[c["pids"][name]]
        runtime = "podman" if name == "podman" else "docker"
        assert row[1] == COMM and row[2] == f"{runtime}:{c['ids'][name][:12]}", row
    assert c["ids"]["podman"][-12:] not in p.stdout
