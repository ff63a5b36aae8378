# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""deploy/prometheus: the fleet's recording and alerting rules.

promtool (Debian's prometheus package, installed by deploy/install-deps.sh)
checks the rules and runs their unit tests (deploy/prometheus/tests/); every
rule must have a test that expects it to produce something, and every metric
the rules read must be one that pmbpf serve exports today.
"""
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request

import pytest
import yaml

from conftest import PMBPF, ROOT, needs_root

RULES_DIR = os.path.join(ROOT, "deploy", "prometheus")
RULES = os.path.join(RULES_DIR, "pmbpf-rules.yml")
RULE_TESTS = sorted(glob.glob(os.path.join(RULES_DIR, "tests", "*.test.yml")))
PROMTOOL = shutil.which("promtool")

needs_promtool = pytest.mark.skipif(
    not PROMTOOL, reason="promtool is not installed: make deps (Debian's prometheus package)")


def rules():
    with open(RULES) as f:
        return [r for g in yaml.safe_load(f)["groups"] for r in g["rules"]]


def rule_tests():
    out = []
    for path in RULE_TESTS:
        with open(path) as f:
            out += yaml.safe_load(f)["tests"]
    return out


@needs_promtool
def test_promtool_check_rules():
    p = subprocess.run([PROMTOOL, "check", "rules", RULES], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"SUCCESS: {len(rules())} rules found" in p.stdout, p.stdout


@needs_promtool
@pytest.mark.parametrize("path", RULE_TESTS, ids=[os.path.basename(p) for p in RULE_TESTS])
def test_promtool_test_rules(path):
    # relative to the test file's directory, as its rule_files are
    p = subprocess.run([PROMTOOL, "test", "rules", os.path.basename(path)],
                       cwd=os.path.dirname(path), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "SUCCESS" in p.stdout and "FAILED" not in p.stdout, p.stdout


def test_every_rule_has_a_test():
    """Each alert is expected to fire somewhere and each recording rule to give
    samples somewhere (quiet series are checked by exp_alerts listing only the
    noisy ones); the tests cover nothing that is not a rule."""
    firing, quiet, recorded = set(), set(), set()
    for t in rule_tests():
        for a in t.get("alert_rule_test", []):
            (firing if a.get("exp_alerts") else quiet).add(a["alertname"])
        for e in t.get("promql_expr_test", []):
            if e.get("exp_samples"):
                recorded |= set(re.findall(r"[a-z]+:pmbpf_[a-z0-9_]+:[a-z0-9_]+", e["expr"]))
    alerts = {r["alert"] for r in rules() if "alert" in r}
    records = {r["record"] for r in rules() if "record" in r}
    assert alerts - firing == set(), "alerts never expected to fire"
    assert alerts - quiet == set(), "alerts never checked quiet (before their for:, or elsewhere)"
    assert (firing | quiet) - alerts == set(), "tests of alerts that do not exist"
    assert records - recorded == set(), "recording rules without an expected sample"
    assert recorded - records == set(), "tests of recording rules that do not exist"


def exported_names(expr):
    """pmbpf's own metric names read by a PromQL expression (not recording rules)."""
    return set(re.findall(r"(?<![:\w])(pmbpf_[a-z0-9_]+)(?![:\w])", expr))


@needs_root
def test_rules_read_what_serve_exports():
    """Every pmbpf_* series the rules read, and the labels they match on, are in
    today's exposition (software events only: this host may have no PMU, and
    the events a rule names are label values, not families)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    addr = "127.0.0.1:%d" % s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([PMBPF, "serve", "--listen", addr, "-i", "0.5", "-e",
                             "task-clock,page-faults"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        text, end = None, time.time() + 20
        while text is None:
            assert proc.poll() is None, "pmbpf serve exited: " + proc.stderr.read()
            assert time.time() < end, "pmbpf serve did not answer"
            try:
                with urllib.request.urlopen(f"http://{addr}/metrics", timeout=2) as r:
                    text = r.read().decode()
            except OSError:
                time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    labels = {}
    for line in text.splitlines():
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ", line)
        if m:
            labels.setdefault(m.group(1), set()).update(
                re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(2) or ""))
    read = set()
    for r in rules():
        read |= exported_names(r["expr"])
    assert read, "no pmbpf metric found in the rules"
    missing = sorted(n for n in read if n not in labels)
    assert not missing, f"rules read series pmbpf serve does not export: {missing}"
    cgroup_labels = {"cgroup", "runtime", "container_id", "pod_uid"}
    for name in read:
        if name.startswith("pmbpf_cgroup_"):
            assert cgroup_labels <= labels[name], (name, labels[name])
    assert "event" in labels["pmbpf_cgroup_perf_events_total"]
    assert "le" in labels["pmbpf_cgroup_runqueue_latency_seconds_bucket"]
    assert "program" in labels["pmbpf_bpf_program_run_seconds_total"]
