"""Where a warm start of `pocketstack up` spends its CPU, phase by phase (issue 13).

    python bench/startup_phases.py [--runs 3] [--data-dir DIR]

Each run is a fresh interpreter doing what `pocketstack up` does before every service
answers, in order: import the CLI, import ``pocketstack.cloud``, ``Cloud.prepare()``, the
uvicorn server and app, ``warm_up()`` (policy, every REST package, background workers).
It prints the process CPU time of each phase (load from other processes inflates CPU time
far less than wall time) and how many modules were imported. The data dir is made by a
first, unmeasured start. To compare with other code, run it with ``PYTHONPATH`` pointing at
that code's ``src``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

PHASES = r"""
import gc, sys, time
gc.disable()  # as `pocketstack up` does until every service is ready
marks = []
def mark(name):
    marks.append((name, time.process_time()))
mark("start")
import pocketstack.cli.main
mark("import pocketstack.cli.main")
from pocketstack.cloud import Cloud
mark("import pocketstack.cloud")
cloud = Cloud(sys.argv[1], admin_password="bench-admin", overrides={"bind_port": 0})
cloud.prepare(bind=True)
mark("Cloud.prepare")
with cloud.runtime.activated():
    cloud._server = cloud._uvicorn()
mark("uvicorn server + app")
cloud.warm_up()
mark("warm_up")
cloud.close()
print("|".join(f"{name}={(t - marks[i][1]) * 1000:.0f}" for i, (name, t) in
               enumerate(marks[1:])) + f"|modules={len(sys.modules)}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    work = None
    data_dir = args.data_dir
    if data_dir is None:
        work = tempfile.mkdtemp(prefix="bench-startup-phases-")
        data_dir = os.path.join(work, "data")
    try:
        for i in range(args.runs + 1):
            proc = subprocess.run([sys.executable, "-c", PHASES, data_dir], capture_output=True,
                                  text=True, timeout=300)
            if proc.returncode != 0:
                raise SystemExit(proc.stderr[-3000:])
            if i == 0:
                continue  # the first start made the data dir
            fields = dict(f.split("=") for f in proc.stdout.strip().splitlines()[-1].split("|"))
            modules = fields.pop("modules")
            total = sum(int(v) for v in fields.values())
            print("CPU ms: " + ", ".join(f"{k} {v}" for k, v in fields.items())
                  + f"; total {total}; {modules} modules")
    finally:
        if work:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
