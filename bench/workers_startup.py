"""Time-to-ready of `pocketstack up --workers N` (a warm restart), per source tree and per
``[compute] database_access`` mode, runs alternating so that load from elsewhere falls on
all of them alike.

    python bench/workers_startup.py --src before=/path/to/old/src --src after=src \\
        [--modes direct,conductor] [--runs 5] [--workers 2]

Each (tree, mode) has its own data dir, made by a first unmeasured start. A run is
measured from spawning `python -m pocketstack.cli.main up` to its summary line ("pocketstack
is up"), which it prints once every process serves; the figure `up` prints itself (from
the start of its command function) is shown beside it. Then SIGTERM, and the next run
starts once it has exited. Prints the medians of each (time to ready; CPU seconds of all
the cloud's processes from spawn to exit, steadier under load; the difference to the first
(tree, mode) of the same round) and the load average before and after. A start that fails
(or takes longer than --timeout) is counted as failed.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

MODES = {
    "direct": "",
    "conductor": "[compute]\ndatabase_access = conductor\n",
}
CONF = "[identity]\npassword_hash_rounds = 4\n[fake]\nhosts = 2\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def start_once(src: str, data_dir: str, conf: str, workers: int,
               timeout: float) -> tuple[float | None, float | None, float, str]:
    """(seconds to the summary line, the seconds `up` reports, CPU seconds of all its
    processes from spawn to exit, output tail); None, None, ... when it did not come
    up."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src))
    env.pop("POCKETSTACK_HOME", None)
    cmd = [sys.executable, "-m", "pocketstack.cli.main", "up", "--data-dir", data_dir,
           "--config-file", conf, "--port", str(free_port()), "--admin-password", "bench",
           "--workers", str(workers)]
    cpu = _children_cpu()
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            text=True)
    lines: list[str] = []
    ready_at: list[float] = []

    def read():
        for line in proc.stdout:
            lines.append(line)
            if "pocketstack is up" in line and not ready_at:
                ready_at.append(time.monotonic())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = started + timeout
    while not ready_at and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    took = ready_at[0] - started if ready_at else None
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    reader.join(5)
    cpu = _children_cpu() - cpu  # the worker processes' too: `up` waits for them
    said = None
    for line in lines:
        m = re.search(r"(?:bootstrapped|ready) in ([0-9.]+)s", line)
        if m:
            said = float(m.group(1))
    return took, said, cpu, "".join(lines[-5:])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--src", action="append", required=True,
                   help="LABEL=PATH of a source tree (its src directory)")
    p.add_argument("--modes", default="direct,conductor")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--timeout", type=float, default=60.0)
    a = p.parse_args()
    trees = [tuple(item.split("=", 1)) for item in a.src]
    modes = a.modes.split(",")
    work = tempfile.mkdtemp(prefix="bench-workers-startup-")
    try:
        combos = []
        for label, src in trees:
            for mode in modes:
                conf = os.path.join(work, f"{label}-{mode}.conf")
                with open(conf, "w") as f:
                    f.write(CONF + MODES[mode])
                data_dir = os.path.join(work, f"{label}-{mode}")
                took, _, _, tail = start_once(src, data_dir, conf, a.workers, a.timeout)
                if took is None:
                    print(f"{label}/{mode}: the first start failed; left out:\n{tail}")
                    continue
                combos.append((label, src, mode, data_dir, conf))
        print(f"load average before: {os.getloadavg()}")
        results: dict = {(c[0], c[2]): ([], [], []) for c in combos}
        paired: dict = {(c[0], c[2]): [] for c in combos}  # minus the same round's first
        failed: dict = {(c[0], c[2]): 0 for c in combos}
        for run in range(a.runs):
            first = None
            for label, src, mode, data_dir, conf in combos:
                took, said, cpu, _ = start_once(src, data_dir, conf, a.workers, a.timeout)
                if took is None:
                    failed[(label, mode)] += 1
                    continue
                results[(label, mode)][0].append(took)
                results[(label, mode)][1].append(said)
                results[(label, mode)][2].append(cpu)
                if (label, mode) == (combos[0][0], combos[0][2]):
                    first = took
                elif first is not None:
                    paired[(label, mode)].append(took - first)
                print(f"run {run + 1} {label}/{mode}: {took:.2f}s to the summary "
                      f"(up says {said}s), {cpu:.2f}s CPU start to exit, load "
                      f"{os.getloadavg()[0]:.2f}", flush=True)
        print(f"load average after: {os.getloadavg()}")
        for (label, mode), (took, said, cpu) in results.items():
            if took:
                diffs = paired[(label, mode)]
                print(f"{label}/{mode}: median {statistics.median(took):.2f}s to the "
                      f"summary (up says {statistics.median(said):.2f}s), CPU "
                      f"{statistics.median(cpu):.2f}s, {len(took)} runs, "
                      f"{failed[(label, mode)]} failed; all: "
                      f"{', '.join(f'{t:.2f}' for t in took)}"
                      + (f"; median of the differences to {combos[0][0]}/{combos[0][2]} "
                         f"of the same round {statistics.median(diffs):+.2f}s"
                         if diffs else ""))
            else:
                print(f"{label}/{mode}: no run came up ({failed[(label, mode)]} failed)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
