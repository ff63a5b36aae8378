# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Kernel memory of the counts map as the kernel charges it (memlock), against
the value pmbpf says it uses: a value holds the counting slots only. The
shared map (tp_btf: one value per entry, 65,536 entries by default) does not
grow with possible CPUs; the per-CPU fallback (raw_tp, --thread-fold=off) is
entries x value x possible CPUs."""
import json
import subprocess

from conftest import PMBPF, needs_root

pytestmark = needs_root

SW8 = ("cpu-clock,task-clock,page-faults,context-switches,cpu-migrations,minor-faults,"
       "major-faults,alignment-faults")
READING = 24  # struct pmbpf_reading: value, enabled, running
BASE = 240  # struct pmbpf_counts before ev[]: the 10 counts, run-queue histogram, name
SLOT_HEAD = 16  # struct pmbpf_slot before its counts: the key


def possible_cpus():
    n = 0
    with open("/sys/devices/system/cpu/possible") as f:
        for part in f.read().strip().split(","):
            lo, _, hi = part.partition("-")
            n += int(hi or lo) - int(lo) + 1
    return n


def map_bytes(events, *extra):
    out = subprocess.run([PMBPF, "record", "-o", "json", "-c", "1", "-i", "0.1", "-e", events,
                          "-m", "4096", *extra], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    system = [json.loads(l) for l in out.stdout.splitlines() if '"system"' in l][-1]
    return system["map_memory_bytes"], system["thread_fold"]


def doctor_maps():
    out = subprocess.run([PMBPF, "doctor", "-o", "json"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode in (0, 1), out.stderr
    doc = json.loads(out.stdout)
    counting = sum(1 for e in doc["events"] if e["state"] == "counting")
    return doc["bpf_maps"], counting


def test_doctor_counts_map_follows_its_value():
    """The per-CPU counts map's memlock (the fallback) is entries x value
    (rounded to 8) x possible CPUs, plus at most a quarter for the hash's own
    overhead. The shared map's entries are slots of an array (counts_slots:
    entries x (SLOT_HEAD + value), page-rounded) and a hash from key to slot
    (counts_index: its key, slot number, list node and buckets, 88 B per
    entry here, at most 128 B allowed), 65,536 entries by default whatever
    the CPUs; its per-CPU map is left with one entry. The value is the counts
    before the slots and one reading per counting slot."""
    d, counting = doctor_maps()
    maps = {m["name"]: m for m in d["maps"]}
    counts = maps["counts"]
    value = d["counts_value_bytes"]
    assert counts["value_size"] == value
    # doctor opens the default hardware events: none counts without a PMU
    assert value == BASE + counting * READING, (value, counting)
    assert d["possible_cpus"] == possible_cpus()
    rounded = (value + 7) // 8 * 8
    slots, index = maps["counts_slots"], maps["counts_index"]
    if slots["max_entries"] == 1:
        assert counts["percpu"]
        formula = d["max_procs"] * rounded * d["possible_cpus"]
        assert formula <= counts["bytes"] <= formula * 1.25, (counts, formula)
        assert index["max_entries"] == 1, index
    else:
        assert d["max_procs"] == 65536, d
        assert counts["max_entries"] == 1 and not counts["percpu"], counts
        assert slots["max_entries"] == index["max_entries"] == d["max_procs"], (slots, index)
        assert slots["value_size"] == SLOT_HEAD + value, slots
        formula = d["max_procs"] * (SLOT_HEAD + rounded)
        assert formula <= slots["bytes"] <= formula + 4096, (slots, formula)
        assert index["bytes"] <= d["max_procs"] * 128, index
        assert maps["free_slots"]["max_entries"] == d["max_procs"], maps["free_slots"]


def test_unused_slots_cost_nothing():
    """8 counting events against 1 (both on the per-CPU map: the shared one takes
    at most 4 counting events): the counts map grows by 7 readings (7 x 24 B) per
    entry and possible CPU, and by nothing else of note."""
    (one, _), (eight, shared) = map_bytes("cpu-clock", "--thread-fold", "off"), map_bytes(SW8)
    assert not shared
    want = 4097 * 7 * READING * possible_cpus()
    assert abs((eight - one) - want) <= 0.05 * want, (one, eight, want)

