"""A/B of a large object's GET: two clouds (two `src` trees) and the static sendfile
server up at once, downloads interleaved round by round, warm and cold, medians.

    .venv/bin/python bench/objectstore_large_ab.py --before /tmp/old/src [--size-mib 1024]
        [--rounds 4] [--cold-only]

On a machine shared with other work a single download's rate moves by 2× with the load;
interleaving the candidates and taking medians over rounds lets a change of 20-30 % show.
``--before``: the `src` of the code to compare with (e.g. ``git archive <commit> src``
unpacked); the other cloud runs this checkout's `src`. Uses objectstore.py's helpers
(curl, eviction with POSIX_FADV_DONTNEED, server CPU); everything is removed at the end.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import objectstore as bench  # noqa: E402

HERE_SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def upload(workdir: str, label: str, src: str, source: str, size_mib: int):
    """(cloud process, GET command, the object's data file) of a cloud running ``src``."""
    os.environ["PYTHONPATH"] = src
    own = os.path.join(workdir, label)
    os.makedirs(own)
    proc, url = bench.start_cloud(own)
    token, storage = bench.token_and_storage_url(url)
    httpx.put(f"{storage}/bench", headers={"X-Auth-Token": token}, timeout=30)
    auth = ["-H", f"X-Auth-Token: {token}", "-sS", "--fail"]
    subprocess.run(["curl", *auth, "-T", source, "-o", "/dev/null",
                    f"{storage}/bench/large"], check=True)
    stored = bench.data_file_of(os.path.join(own, "data", "objects"), size_mib * bench.MiB)
    return proc, ["curl", *auth, "-o", "/dev/null", f"{storage}/bench/large"], stored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the other cloud's src directory")
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--cold-only", action="store_true")
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="pocketstack-objab-", dir=os.environ.get("TMPDIR"))
    procs = []
    try:
        print(f"load average at start: {bench.loadavg()}")
        source = os.path.join(workdir, "large", "large.bin")
        os.makedirs(os.path.dirname(source))
        with open(source, "wb") as f:
            for _ in range(args.size_mib):
                f.write(os.urandom(bench.MiB))
        commands = {}
        for label, src in (("before", args.before), ("after", HERE_SRC)):
            proc, command, stored = upload(workdir, label, src, source, args.size_mib)
            procs.append(proc)
            commands[label] = (command, proc.pid, stored)
        static, static_url = bench.static_server(os.path.dirname(source))
        procs.append(static)
        commands["static"] = (["curl", "-sS", "--fail", "-o", "/dev/null",
                               f"{static_url}/large.bin"], static.pid, source)
        commands["cat"] = (["cat", source], None, source)
        results: dict = {}
        for _ in range(args.rounds):
            for temp in ("cold",) if args.cold_only else ("warm", "cold"):
                for label, (command, pid, data_file) in commands.items():
                    if temp == "cold":
                        bench.evict(data_file)
                    else:  # once to bring it into the page cache
                        subprocess.run(command, stdout=subprocess.DEVNULL, check=True)
                    wall, cpu = bench.timed_with_cpu(command, pid)
                    results.setdefault((temp, label), []).append((args.size_mib / wall, cpu))
        for (temp, label), runs in results.items():
            rates = sorted(rate for rate, _ in runs)
            print(f"{temp} {label:7} median {statistics.median(rates):6.0f} MiB/s (all "
                  f"{', '.join(f'{r:.0f}' for r in rates)}), CPU s median "
                  f"{statistics.median(cpu for _, cpu in runs):.2f}")
        print(f"load average at end: {bench.loadavg()}")
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
