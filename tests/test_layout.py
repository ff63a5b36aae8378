# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""user/ shows its layers in its folders (docs/architecture.md), and its
includes only go down: a module includes headers of its own folder and of
the folders below it, never above (a renderer never a command's header, a
renderer never collection's: it reads the snapshot, not a map). The ABI
headers of bpf/ may be included anywhere, a BPF skeleton only by collection
and by commands. No C file is left at the top of user/, each folder is
one -I of the Makefile, and no file of user/ is over MAX_LINES lines."""
import glob
import os
import re

from conftest import ROOT

USER = os.path.join(ROOT, "user")
# Each folder and the folders its files may include, bottom to top.
MAY_INCLUDE = {
    "lib": {"lib"},
    "host": {"lib", "host"},
    "account": {"lib", "host", "account"},
    "collect": {"lib", "host", "account", "collect"},
    "render": {"lib", "host", "account", "render"},
    "cmd": {"lib", "host", "account", "collect", "render", "cmd"},
}
SKEL_OK = {"collect", "cmd"}
# issue 32: a file past this holds several things; cut it along its seams
# (docs/architecture.md names one concern per module)
MAX_LINES = 900
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def headers():
    """Header name -> folder, for every header in user/*/."""
    where = {}
    for path in glob.glob(os.path.join(USER, "*", "*.h")):
        name, folder = os.path.basename(path), os.path.basename(os.path.dirname(path))
        assert name not in where, f"{name} in user/{where[name]}/ and user/{folder}/"
        where[name] = folder
    return where


def violations(files, where, bpf_headers):
    """(file, included header, why) for each include that goes up or is
    unknown; files maps 'folder/name' to its text."""
    bad = []
    for rel, text in files.items():
        folder = rel.split("/")[0]
        for inc in INCLUDE.findall(text):
            if inc.endswith(".skel.h"):
                if folder not in SKEL_OK:
                    bad.append((rel, inc, "a BPF skeleton outside collect/ and cmd/"))
            elif inc in bpf_headers:
                continue
            elif inc not in where:
                bad.append((rel, inc, "no such header in user/*/ or bpf/"))
            elif where[inc] not in MAY_INCLUDE[folder]:
                bad.append((rel, inc, f"user/{folder}/ may not include user/{where[inc]}/"))
    return bad


def user_files():
    files = {}
    for folder in MAY_INCLUDE:
        paths = glob.glob(os.path.join(USER, folder, "*.[ch]"))
        assert paths, f"user/{folder}/ holds no C file"
        for p in paths:
            files[f"{folder}/{os.path.basename(p)}"] = open(p).read()
    return files


def bpf_headers():
    return {os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "bpf", "*.h"))}


def test_user_has_only_layer_folders():
    top = [f for f in os.listdir(USER) if not f.startswith(".")]
    assert sorted(top) == sorted(MAY_INCLUDE), top


def test_includes_only_go_down():
    files = user_files()
    n = sum(len(INCLUDE.findall(t)) for t in files.values())
    assert len(files) > 60 and n > 150, (len(files), n)  # the check saw the code
    assert violations(files, headers(), bpf_headers()) == []


def test_the_check_catches_an_include_going_up():
    where = headers()
    files = {
        "render/x.c": '#include "commands.h"\n#include "session.h"\n#include "snapshot.h"\n',
        "lib/y.c": '#include "pmbpf.h"\n#include "pmbpf.skel.h"\n#include "nope.h"\n',
    }
    got = violations(files, where, bpf_headers())
    assert [(f, i) for f, i, _ in got] == [
        ("render/x.c", "commands.h"), ("render/x.c", "session.h"),
        ("lib/y.c", "pmbpf.skel.h"), ("lib/y.c", "nope.h")]


def test_makefile_names_each_folder():
    mk = open(os.path.join(ROOT, "Makefile")).read()
    m = re.search(r"^USER_DIRS := (.*)$", mk, re.M)
    assert m, "USER_DIRS not found in the Makefile"
    assert m.group(1).split() == [f"user/{f}" for f in MAY_INCLUDE]


def test_no_user_file_over_max_lines():
    sizes = {rel: text.count("\n") for rel, text in user_files().items()}
    assert len(sizes) > 60 and max(sizes.values()) > MAX_LINES / 2, sizes  # the check saw the code
    big = {rel: n for rel, n in sizes.items() if n > MAX_LINES}
    assert big == {}, f"user/ files over {MAX_LINES} lines, to cut along their seams: {big}"
