#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Put the tables of `pmbpf fields --markdown` into docs/fields.md (make docs).

The catalog (user/account/catalog.c) is the one definition of every figure; the
blocks of docs/fields.md between <!-- begin fields:X --> and
<!-- end fields:X --> are what `pmbpf fields --markdown` prints for X, and
the prose around them is hand-written. With --check nothing is written: the
exit status is 1, with a diff, when the file and the catalog disagree
(tests/test_catalog.py).

Usage: mkfields.py --pmbpf BIN [--check] docs/fields.md
"""
import argparse
import difflib
import re
import subprocess
import sys

BLOCK = re.compile(r"^<!-- begin fields:(\w+) -->\n.*?^<!-- end fields:\1 -->\n", re.M | re.S)


def generated(pmbpf):
    out = subprocess.run([pmbpf, "fields", "--markdown"], capture_output=True, text=True,
                         check=True, timeout=30).stdout
    return {m.group(1): m.group(0) for m in BLOCK.finditer(out)}


def splice(doc, blocks):
    """doc with each block replaced by its generated text; the names it lacks or has too many."""
    seen = set()

    def repl(m):
        seen.add(m.group(1))
        return blocks.get(m.group(1), m.group(0))
    text = BLOCK.sub(repl, doc)
    return text, sorted(set(blocks) - seen), sorted(seen - set(blocks))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pmbpf", required=True)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("doc")
    a = ap.parse_args()
    with open(a.doc) as f:
        doc = f.read()
    text, missing, unknown = splice(doc, generated(a.pmbpf))
    if missing or unknown:
        sys.exit(f"mkfields: {a.doc}: blocks missing {missing}, unknown {unknown}: "
                 "add <!-- begin fields:X --> ... <!-- end fields:X --> where they go")
    if text == doc:
        return
    if a.check:
        sys.stdout.writelines(difflib.unified_diff(doc.splitlines(True), text.splitlines(True),
                                                   a.doc, "pmbpf fields --markdown"))
        sys.exit(f"mkfields: {a.doc} and the figure catalog disagree: run make docs")
    with open(a.doc, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
