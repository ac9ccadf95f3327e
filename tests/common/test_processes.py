"""Other processes by pid (common/processes.py): an exited process that nobody reaped (a
zombie, what daemons reparented to a container's PID 1 become) does not run, and stopping
one does not wait for it to leave /proc."""
from __future__ import annotations

import os
import subprocess
import sys

from pocketstack.common import processes


def _child(*code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "\n".join(code)])


def test_a_running_process_runs_and_an_unreaped_one_does_not():
    child = _child("import time", "time.sleep(60)")
    try:
        assert processes.running(child.pid)
        assert processes.stop(child.pid, grace=10) is True
        # not reaped yet: its /proc entry is still there, as a zombie
        assert os.path.exists(f"/proc/{child.pid}")
        assert not processes.running(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not processes.running(child.pid)
    assert processes.stop(child.pid, grace=1) is True  # gone already


def test_stop_reports_a_process_that_ignores_sigterm_and_kills_it_when_asked():
    child = subprocess.Popen([sys.executable, "-c", "import signal, time\n"
                              "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                              "print('ready', flush=True)\ntime.sleep(60)"],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "ready\n"
        assert processes.stop(child.pid, grace=0.2) is False
        assert processes.running(child.pid)
        assert processes.stop(child.pid, grace=0.2, kill=True) is True
        assert child.wait(10) == -9
    finally:
        child.kill()
        child.wait()
