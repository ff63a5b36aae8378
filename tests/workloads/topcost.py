#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The CPU use of `pmbpf top` itself, with many processes on the host (docs/top.md).

Starts N processes (`sleep 300`: idle; or `work sleep`: each wakes every 0.5 s,
so every one of them is a row in every interval), runs `pmbpf top` in a tmux
pane, and reads its utime + stime from /proc/PID/stat over a window. Then
scrolls (PgDn/PgUp, one key every 20 ms) and reports the CPU time per key.
Run as root from the repository: tests/workloads/topcost.py --procs 2000
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pmbpf", default=os.path.join(ROOT, "build", "pmbpf"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "workloads", "work"))
    ap.add_argument("--procs", type=int, default=2000)
    ap.add_argument("--kind", choices=["idle", "waking"], default="idle")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--args", default="-e task-clock,page-faults")
    ap.add_argument("--screen", help="write the screen at the end of the window here")
    a = ap.parse_args()

    sock = f"/tmp/pmbpf-topcost-{os.getpid()}.tmux"
    tmux = ["tmux", "-S", sock, "-f", "/dev/null"]
    cmd = ["sleep", "300"] if a.kind == "idle" else [a.work, "sleep", "100000", "500000"]
    procs = []
    try:
        for _ in range(a.procs):
            procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL))
        subprocess.run(tmux + ["new-session", "-d", "-s", "t", "-x", "200", "-y", "60",
                               f"{a.pmbpf} top {a.args}; sleep 60"], check=True)
        time.sleep(1)
        shell = subprocess.run(tmux + ["display-message", "-p", "-t", "t", "#{pane_pid}"],
                               capture_output=True, text=True, check=True).stdout.strip()
        with open(f"/proc/{shell}/task/{shell}/children") as f:
            top = int(f.read().split()[0])
        time.sleep(3)  # BPF loaded, first intervals drawn
        c0, t0 = cpu_s(top), time.monotonic()
        time.sleep(a.seconds)
        c1, t1 = cpu_s(top), time.monotonic()
        screen = subprocess.run(tmux + ["capture-pane", "-p", "-t", "t"], capture_output=True,
                                text=True, check=True).stdout
        rows = next((l for l in screen.splitlines() if " processes, " in l), "?")
        print(f"{a.procs} {a.kind} processes, {a.args}: pmbpf top used "
              f"{(c1 - c0) / (t1 - t0) * 100:.2f}% of one CPU over {t1 - t0:.1f}s ({rows.strip()})")
        if a.screen:
            with open(a.screen, "w") as f:
                f.write(screen)
        keys = 100
        c0 = cpu_s(top)
        for i in range(keys):
            subprocess.run(tmux + ["send-keys", "-t", "t", "NPage" if i % 20 < 10 else "PPage"],
                           check=True)
            time.sleep(0.02)
        c1 = cpu_s(top)
        print(f"scrolling: {(c1 - c0) / keys * 1e3:.2f} ms of CPU per PgDn/PgUp "
              f"(including interval refreshes meanwhile)")
        subprocess.run(tmux + ["send-keys", "-t", "t", "q"], check=True)
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True)
        if os.path.exists(sock):
            os.unlink(sock)
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
