# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""One schema (pmbpf issue 12): the figure catalog (user/account/catalog.c) against
every output. tests/unit/test_catalog.c renders one synthetic snapshot
(processes and cgroups; cycles and instructions in a group, a multiplexed miss
event, a miss event that does not count, a clock, two -M metrics, one of them
not supported; a run-queue histogram) to the table, JSON Lines, CSV,
Prometheus, pmbpf stat's text and JSON and top's cells, and dumps the
catalog's value of every figure of every row. This walks the catalog (pmbpf
fields --json) and finds each figure in each output it is declared for, under
its name there, with that value (to the output's precision), and nowhere
where it is not declared. docs/fields.md's tables are the catalog's."""
import csv
import io
import json
import math
import os
import re
import subprocess

import pytest

from conftest import BUILD, PMBPF, ROOT, needs_root

HARNESS = os.path.join(BUILD, "tests", "test_catalog")
CATALOG = json.loads(subprocess.run([PMBPF, "fields", "--json"], capture_output=True, text=True,
                                    check=True).stdout)
FIGURES = CATALOG["figures"]
SELF = CATALOG["self"]
OUTPUTS = ["table", "json", "csv", "prometheus", "top", "stat", "system"]
DECIMALS = {"count": 0, "ns": 0, "pct": 2, "ratio": 4, "fraction": 4, "share": 4}
HUMAN = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    d = tmp_path_factory.mktemp("catalog")
    p = subprocess.run([HARNESS, "--dump", str(d)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    files = {f: open(os.path.join(d, f)).read() for f in os.listdir(d)}
    files["expected"] = json.loads(files["expected.json"])
    files["records"] = [json.loads(l) for l in files["records.jsonl"].splitlines()]
    return files


def nan(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


def near(got, want, decimals):
    """got (as printed with decimals) is want rounded."""
    if nan(want):
        return nan(got)
    return not nan(got) and abs(got - want) <= 0.5 * 10 ** -decimals * 1.0001 + 1e-9 * abs(want)


def instances(out, kind, k):
    """(row id, expected instance) of figure k in the rows of one kind."""
    for row in out["expected"]["rows"]:
        if row["kind"] == kind:
            for fig in row["figures"]:
                if fig["figure"] == k:
                    yield row, fig


def path(fd, fig):
    keys = []
    for c in fd["name"].split("."):
        keys += fig["parts"] if c == "%s" else [c]
    return keys


def reading(fd):
    return fd["source"] in ("event", "event_raw", "event_enabled", "event_running",
                            "event_coverage")


def json_check(fd, fig, rec):
    """One figure in one JSON object: null for an event that does not count."""
    obj = rec
    keys = path(fd, fig)
    for key in keys[:-1]:
        assert isinstance(obj, dict) and key in obj, (keys, rec)
        obj = obj[key]
        if obj is None:
            assert reading(fd) and not fig["counting"], (keys, "null")
            return
    assert keys[-1] in obj, (keys, obj)
    got, want = obj[keys[-1]], fig["value"]
    if fd["format"] == "hist":
        hist = fig["hist"]
        while hist and not hist[-1]:
            hist = hist[:-1]
        assert got == hist and sum(hist) == want, (keys, got, fig)
    elif fd["format"] == "bool":
        assert got is (want == 1), (keys, got, want)
    else:
        assert got is None if nan(want) else near(got, want, DECIMALS[fd["format"]]), \
            (keys, got, want)


def json_records(out, kind):
    for rec in out["records"]:
        if rec["type"] == "process" and kind == "process":
            yield str(rec["pid"]), rec
        elif rec["type"] == "cgroup" and kind == "cgroup":
            yield rec["cgroup"], rec
        elif rec["type"] == "cgroup" and kind == "cgroup_self":
            yield rec["cgroup"], rec["self"]
        elif rec["type"] == "system" and kind == "system":
            yield "", rec
    if kind == "command":
        yield "/", json.loads(out["command.json"])


def row_id(row):
    return row.get("pid", row.get("cgroup", row.get("system")))


def check_json(fd, k, out, kinds):
    for kind in kinds:
        recs = dict(json_records(out, kind))
        seen = 0
        for row, fig in instances(out, kind, k):
            json_check(fd, fig, recs[row_id(row)])
            seen += 1
        assert seen, f"{fd['name']}: no {kind} instance to check"


def check_csv(fd, k, out):
    for kind, name, key in (("process", "processes.csv", "pid"), ("cgroup", "cgroups.csv", "cgroup")):
        rows = {r[key]: r for r in csv.DictReader(io.StringIO(out[name]))}
        for row, fig in instances(out, kind, k):
            col = fig["names"]["csv"] if fd["csv"] else fig["names"]["csv"].replace(".", "_")
            got = rows[row_id(row)][col]
            assert near(float(got) if got else None, fig["value"],
                        DECIMALS[fd["format"]]), (col, got, fig["value"])


def parse_human(text, fd, fig, top=False):
    """A table or top cell as a number, and the tolerance of its format."""
    if text == "-":
        return None, 0
    if fig["ns"] and (top or fd["format"] == "ns"):
        if top:
            m = re.fullmatch(r"([\d.]+)(us|ms|s)", text)
            v = float(m.group(1)) * {"us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]
            decimals = len(m.group(1).partition(".")[2])
            return v, 0.5 * 10 ** -decimals * {"us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]
        return float(text) * 1e3, 0.5e3  # the table's ns columns are in us
    if fig["ns"]:
        return float(text[:-2]) * 1e6, 0.05e6  # a clock event's count, in ms
    if fd["format"] == "count":
        if text[-1] in HUMAN:
            decimals = len(text[:-1].partition(".")[2])
            return float(text[:-1]) * HUMAN[text[-1]], 0.5 * 10 ** -decimals * HUMAN[text[-1]]
        return float(text), 0.5
    decimals = len(text.rstrip("*").partition(".")[2])
    scale = 100 if fd["format"] == "share" else 1
    return float(text.rstrip("*")) / scale, 0.5 * 10 ** -decimals / scale


def table_blocks(text):
    """{(kind, row id): {column title: cell}} of record's table."""
    cells = {}
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if line.startswith("    PID COMM"):
            kind, ident, titles = "process", 3, line.split()[3:]
        elif line.startswith("CGROUP (incl. descendants)"):
            kind, ident, titles = "cgroup", 4, line.split()[6:]
        else:
            continue
        for row in lines[n + 1:]:
            tok = row.split()
            if len(tok) != ident + len(titles):
                break
            cells[(kind, tok[0])] = dict(zip(titles, tok[ident:]))
    return cells


def check_table(fd, k, out):
    cells = table_blocks(out["table.txt"])
    for kind in ("process", "cgroup"):
        for row, fig in instances(out, kind, k):
            got = cells[(kind, row_id(row))][fig["names"]["table"]]
            v, tol = parse_human(got, fd, fig)
            want = fig["value"]
            assert (v is None) if nan(want) else (v is not None and abs(v - want) <= tol * 1.0001), \
                (fig["names"]["table"], got, want)


def check_top(fd, k, out):
    interval = out["expected"]["interval_ns"] / 1e9
    for kind, name, key in (("process", "top-processes.tsv", "PID"),
                            ("cgroup", "top-cgroups.tsv", "CGROUP")):
        lines = out[name].splitlines()
        titles = lines[0].split("\t")
        rows = {r[key]: r for r in (dict(zip(titles, l.split("\t"))) for l in lines[1:])}
        for row, fig in instances(out, kind, k):
            got = rows[row_id(row)][fig["names"]["top"]]
            v, tol = parse_human(got, fd, fig, top=True)
            want = fig["value"]
            if not nan(want) and fd["kind"] == "counter":
                want /= interval  # top shows counters per second
            assert (v is None) if nan(want) else (v is not None and abs(v - want) <= tol * 1.0001), \
                (fig["names"]["top"], got, want)


def prom_samples(text):
    """[(name, {label: value}, value)] of an exposition."""
    out = []
    for line in text.splitlines():
        m = re.fullmatch(r'(\w+)(?:\{(.*)\})? (\S+)', line)
        if m and not line.startswith("#"):
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
            out.append((m.group(1), labels, float(m.group(3))))
    return out


def check_prom(fd, k, out):
    samples = prom_samples(out["metrics.prom"])
    wanted = dict(re.findall(r'(\w+)="([^"]*)"', fd["prom_labels"] or ""))
    suffix = "_count" if fd["source"] == "runq_hist" else ""
    kinds = [("cgroup", "pmbpf_cgroup_", "cgroup")]
    if not fd["prom_cgroup_only"]:
        kinds.append(("process", "pmbpf_process_", "pid"))
    for kind, prefix, label in kinds:
        for row, fig in instances(out, kind, k):
            # a clock event's count (ns) is in its family of seconds
            clock = fig["ns"] and fd["prom_time"]
            family = fd["prom_time"] if clock else fd["prom"]
            found = [v for name, labels, v in samples
                     if name == prefix + family + suffix and labels.get(label) == row_id(row)
                     and wanted.items() <= labels.items()
                     and all(p in labels.values() for p in fig["parts"])]
            want = fig["value"]
            if not fig["counting"]:
                assert not found, (fd, row, found)  # an event or metric not counting here
                continue
            if nan(want):
                # not counted: no sample, or a counter that did not grow
                assert not found or (fd["kind"] == "counter" and found == [0]), (fd, row, found)
                continue
            if fd["unit"] == "ns" or clock:
                want /= 1e9
            assert len(found) == 1 and abs(found[0] - want) <= 1e-9 * max(1, abs(want)), \
                (prefix + family, row_id(row), fig["parts"], found, want)


# pmbpf stat's notes: (the row they are on, their text) for figures without a row of their own.
def stat_notes(fd, fig):
    v, p = fig["value"], fig["parts"]
    name = fd["name"]
    if name == "cpu_pct":
        return "on-CPU time", None if nan(v) else f"# {v / 100:.3f} CPUs utilized"
    if name == "events.%s.coverage":
        return p[0], f"({v * 100:.1f}% counted)" if not nan(v) and v < 1 else None
    if name == "mpki.%s":
        return p[0], None if nan(v) else f"# {v:.2f} per 1000 instructions"
    if name == "ipc_same_group":
        return "IPC", None if nan(v) else "# one group" if v == 1 else \
            "# cycles and instructions not in one group"
    if name == "runq.count":
        return "run-queue latency p99", f"({v:.0f} waits"
    if name == "runq.max_ns":
        return "run-queue latency p99", f"max {v / 1e3:.1f} us)"
    raise AssertionError(f"{name}: in pmbpf stat without a label nor a note here")


def check_stat(fd, k, out):
    rows = {}
    for line in out["stat.txt"].splitlines():
        if len(line) > 24 and line[18] == " " and line[21:24] == "   ":
            rows.setdefault(line[24:], (line[:18].strip(), line[19:21].strip()))
    for row, fig in instances(out, "command", k):
        label, v = fig["names"]["label"], fig["value"]
        if fd["source"] == "metric" and not fig["asked"]:
            assert any(re.match(re.escape(fig["parts"][0]) + r" +# not supported$", r)
                       for r in rows), rows
            continue
        if label is None:
            host, note = stat_notes(fd, fig)
            line = [r for r in rows if r == host or r.startswith(host + " ")]
            assert len(line) == 1, (host, rows)
            assert note is None or note in line[0], (note, line[0])
            continue
        line = [r for r in rows if r == label or re.match(re.escape(label) + r" +[#(]", r)]
        if nan(v) and not line:
            continue  # a gauge without a value is left out
        assert len(line) == 1, (label, rows)
        text, unit = rows[line[0]]
        if nan(v):
            assert text == "-", (label, text)
        elif unit:
            scale, decimals = (1e6, 3) if unit == "ms" else (1e3, 1)
            assert near(float(text), v / scale, decimals), (label, text, v)
        else:
            decimals = 3 if fd["format"] == "ratio" else DECIMALS[fd["format"]]
            assert near(float(text), v, decimals), (label, text, v)


def check_cgroup_json(fd, k, out):
    """A cgroup's own file figure (cpu.stat, PSI): in cgroup records, null where
    it was not read; in no process record, no cgroup's self, no command."""
    check_json(fd, k, out, ["cgroup"])
    assert any(not nan(fig["value"]) for _, fig in instances(out, "cgroup", k)), fd["name"]
    assert any(nan(fig["value"]) for _, fig in instances(out, "cgroup", k)), fd["name"]
    for kind in ("process", "cgroup_self", "command"):
        assert not list(instances(out, kind, k)), (fd["name"], kind)
        for _, rec in json_records(out, kind):
            obj = rec
            for key in fd["name"].split(".")[:-1]:
                obj = obj.get(key, {})
            assert fd["name"].split(".")[-1] not in obj, (fd["name"], kind)


CHECKS = {
    "json": lambda fd, k, out: check_cgroup_json(fd, k, out) if fd["source"] == "cgroup" else
    check_json(fd, k, out, ["process", "cgroup", "cgroup_self", "command"]),
    "system": lambda fd, k, out: check_json(fd, k, out, ["system"]),
    "csv": check_csv,
    "table": check_table,
    "top": check_top,
    "prometheus": check_prom,
    "stat": check_stat,
}


@pytest.mark.parametrize("k,output", [(k, o) for k, fd in enumerate(FIGURES)
                                      for o in fd["outputs"]],
                         ids=[f"{fd['name'].replace('%s', 'NAME')}-{o}" for fd in FIGURES
                              for o in fd["outputs"]])
def test_figure_in_output(k, output, out):
    """Every figure, in every output it is declared for, with the catalog's value."""
    CHECKS[output](FIGURES[k], k, out)


def test_undeclared_figures_are_not_shown(out):
    """A figure is in no column, CSV column or JSON key of an output it is not declared for."""
    table = table_blocks(out["table.txt"])
    titles = set(next(v for (kind, _), v in table.items() if kind == "process"))
    header = next(csv.reader(io.StringIO(out["processes.csv"])))
    top = out["top-processes.tsv"].splitlines()[0].split("\t")
    rec = next(r for r in out["records"] if r["type"] == "process")
    for row, figs in ((r, r["figures"]) for r in out["expected"]["rows"] if r["kind"] == "process"):
        for fig in figs:
            fd = FIGURES[fig["figure"]]
            names = fig["names"]
            if "table" not in fd["outputs"] and names["table"]:
                assert names["table"] not in titles, names
            if "top" not in fd["outputs"] and names["top"]:
                assert names["top"] not in top, names
            col = names["csv"] if fd["csv"] else names["csv"].replace(".", "_")
            if "csv" not in fd["outputs"]:
                assert col not in header, col
            if "json" not in fd["outputs"]:
                obj = rec
                for key in path(fd, fig):
                    obj = obj.get(key) if isinstance(obj, dict) else None
                assert obj is None, path(fd, fig)
        break
    # the columns are exactly the declared figures'
    declared = {f["names"]["table"] for r in out["expected"]["rows"] if r["kind"] == "process"
                for f in r["figures"] if "table" in FIGURES[f["figure"]]["outputs"]}
    assert titles == declared


def test_self_statistics(out):
    """pmbpf's statistics about itself in the system record, Prometheus and the table's footer."""
    system = next(r for r in out["records"] if r["type"] == "system")
    samples = {name: v for name, labels, v in prom_samples(out["metrics.prom"]) if not labels}
    values = {s["name"]: s["value"] for s in out["expected"]["self"]}
    footer = out["table.txt"].splitlines()[-1]
    notes = {"overflow_credits": r"(\d+) credits folded", "exit_records_lost": r"exit records lost: (\d+)",
             "exit_records_dropped": r"exit records dropped: (\d+)"}
    for sf in SELF:
        if sf["source"] == "serve":
            # serve's own (its process, collections, series): no snapshot value; its family
            # is in the exposition with the catalog's help and kind (those of clock events
            # and of --threads when there are such: tests/unit/test_prom.c)
            family = "# HELP %s %s\n# TYPE %s %s\n" % (sf["prom"], sf["help"], sf["prom"],
                                                       sf["kind"])
            conditional = ("pmbpf_system_perf_event_seconds_total", "pmbpf_exported_threads",
                           "pmbpf_tracked_threads")
            assert family in out["metrics.prom"] or sf["prom"] in conditional, sf
            assert sf["outputs"] == ["prometheus"], sf
            continue
        v = values[sf["name"]]
        if "json" in sf["outputs"]:
            if sf["json_ms"]:
                assert near(system[sf["name"]], v / 1e6, 3), sf
            else:
                assert system[sf["name"]] == v, sf
        else:
            assert sf["name"] not in system, sf
        if "prometheus" in sf["outputs"]:
            want = v / 1e9 if sf["unit"] == "ns" else v
            assert abs(samples[sf["prom"]] - want) <= 1e-9 * max(1, want), (sf, samples.get(sf["prom"]))
        if "table" in sf["outputs"]:
            assert int(re.search(notes[sf["name"]], footer).group(1)) == v, (sf, footer)


def test_entries():
    """Each plain count, derived figure and BPF statistic has exactly one entry (the harness's own checks)."""
    p = subprocess.run([HARNESS], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.endswith(" passed, 0 failed\n"), p.stdout + p.stderr


def test_catalog_of_the_harness_is_pmbpfs(out):
    """The harness and pmbpf fields read the same catalog (same figures, same order)."""
    for row in out["expected"]["rows"]:
        for fig in row["figures"]:
            assert fig["names"]["json"].startswith(FIGURES[fig["figure"]]["name"].split("%s")[0])


def defines_test(path, name):
    """Whether the test file path (below tests/) defines the test name: a
    pytest function, a C unit test's function, a VM guest's shell check."""
    full = os.path.join(ROOT, "tests", path)
    if not os.path.isfile(full):
        return False
    with open(full) as f:
        src = f.read()
    n = re.escape(name)
    if path.endswith(".py"):
        return re.search(rf"^def {n}\(", src, re.M) is not None and name.startswith("test_")
    if path.endswith(".c"):
        return re.search(rf"^static (void|int) {n}\(void\)", src, re.M) is not None and \
            re.search(rf"^\s*{n}\(\);", src, re.M) is not None
    if path.endswith(".sh"):
        return re.search(rf"^{n}\(\) \{{", src, re.M) is not None and \
            re.search(rf"^\s*{n}\b(?!\()", src, re.M) is not None
    return False


def test_defines_test_finds_only_real_tests():
    assert defines_test("test_record.py", "test_migrations_credited")
    assert not defines_test("test_record.py", "test_no_such_test")
    assert not defines_test("test_nosuch.py", "test_migrations_credited")
    assert not defines_test("test_record.py", "recorder")  # a fixture, not a test
    assert defines_test("unit/test_metrics.c", "test_row")
    assert not defines_test("unit/test_metrics.c", "test_rows")
    assert defines_test("vm/guest/arm64.sh", "check_pmbpf_multiplex")
    assert not defines_test("vm/guest/arm64.sh", "check_pmbpf_nothing")


@pytest.mark.parametrize("fd", FIGURES + [CATALOG["pair"]], ids=lambda fd: fd["name"])
def test_figure_names_its_ground_truth_tests(fd):
    """Each figure names the tests that check it against ground truth (shown
    in docs/fields.md), and each of them exists (a C test is also called, a
    guest check also run)."""
    assert fd["tests"], f"{fd['name']} names no test (user/account/catalog.c .tests)"
    for t in fd["tests"]:
        path, sep, name = t.partition("::")
        assert sep and defines_test(path, name), f"{fd['name']}: no test {t} below tests/"


def test_docs_fields_md_is_the_catalog():
    """docs/fields.md's tables are pmbpf fields --markdown (make docs writes them)."""
    p = subprocess.run([os.environ.get("PYTHON", "/usr/bin/python3"),
                        os.path.join(ROOT, "docs", "mkfields.py"), "--pmbpf", PMBPF, "--check",
                        os.path.join(ROOT, "docs", "fields.md")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr


def test_fields_text():
    """pmbpf fields: every figure and statistic, with its unit, kind and outputs."""
    text = subprocess.run([PMBPF, "fields"], capture_output=True, text=True, check=True).stdout
    for fd in FIGURES:
        name = fd["name"].replace("%s", "METRIC.VALUE" if fd["source"] == "metric" else "NAME")
        assert re.search(rf"^  {re.escape(name)} +{fd['unit']} +{fd['kind']} ", text, re.M), name
    for sf in SELF:
        assert re.search(rf"^  {sf['name']} .*\({sf['prom']}\)$", text, re.M), sf["name"]


@needs_root
def test_stat_repeat_names():
    """stat -r's figures keep their names (compare reads stored baselines by them): the
    catalog's stat names of the events asked for, after wall-time."""
    p = subprocess.run([PMBPF, "stat", "-r", "2", "-o", "json", "-e",
                        "task-clock,page-faults,cycles,instructions,LLC-load-misses", "--", "true"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stderr.splitlines()[-1])
    names = [list(r["metrics"]) for r in doc["runs"]]
    assert names[0] == names[1] == [
        "wall-time", "cpu-time", "task-clock", "page-faults", "cycles", "instructions",
        "LLC-load-misses", "ipc", "LLC-load-misses-mpki", "voluntary-switches",
        "involuntary-switches", "migrations", "offcpu-time", "offcpu-sleep", "offcpu-blocked",
        "offcpu-other", "runq-wait"], names
    assert doc["units"]["cpu-time"] == doc["units"]["task-clock"] == "ns"
    assert doc["units"]["page-faults"] == doc["units"]["ipc"] == ""
