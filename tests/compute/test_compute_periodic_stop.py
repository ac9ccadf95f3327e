"""A periodic task cut short by its process's stop (on SIGTERM a compute host on the
conductor may find the conductor gone, or its transport closed under the call) ends
quietly; a failure while running is still logged with its traceback."""
from __future__ import annotations

import logging
import threading
import time

from pocketstack.common import runtime
from pocketstack.compute.runners import Periodic


def _run(caplog, stop_first: bool) -> list[logging.LogRecord]:
    started, release, failed = threading.Event(), threading.Event(), threading.Event()

    def task():
        if failed.is_set():
            return
        started.set()
        release.wait(5)
        failed.set()
        raise RuntimeError("transport closed under the call")

    with caplog.at_level(logging.INFO, logger="pocketstack.compute.runners"), \
            runtime.Runtime().activated():
        p = Periodic("periodic-test", task, lambda: 0.01)
        assert started.wait(5)
        if stop_first:
            p.stopping.set()
        release.set()
        assert failed.wait(5)
        deadline = time.monotonic() + 5  # its log line comes just after the raise
        while not stop_first and not _records(caplog) and time.monotonic() < deadline:
            time.sleep(0.01)
        p.stop()
    return _records(caplog)


def _records(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "pocketstack.compute.runners"]


def test_a_task_ended_by_the_stop_is_no_error(caplog):
    records = _run(caplog, stop_first=True)
    assert records and all(r.levelno == logging.INFO and r.exc_info is None
                           for r in records)
    assert "ended by the stop" in records[0].getMessage()


def test_a_task_failing_while_running_is_logged_with_its_traceback(caplog):
    records = _run(caplog, stop_first=False)
    assert any(r.levelno == logging.ERROR and r.exc_info for r in records)
