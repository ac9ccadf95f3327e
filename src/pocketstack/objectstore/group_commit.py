"""Object rows of concurrent uploads written many to a transaction, by one thread.

SQLite takes one writer at a time. Ten clients uploading small objects each ran their own
transaction, and spent ~9 ms of a ~16 ms PUT waiting for the write lock: each holder needs
the GIL back between its statements while nine threads and the event loop want it too.
Here the uploads hand their row writes to one thread, which runs all that are waiting in a
single transaction (one lock, one BEGIN and one fsynced COMMIT for the batch: the rows
and a small object's bytes are on disk before the 201) and answers each once the COMMIT is
done, as a database's group commit does. A write that refuses (a ``SwiftError``:
the container is gone, If-None-Match, a quota) must do so before it changes anything, so
the others of its batch go on; any other error rolls the batch back and each write is run
again in a transaction of its own, so one write's failure is only its own.
"""
from __future__ import annotations

import concurrent.futures
import queue
import threading
from typing import Any, Callable

from pocketstack.common import db, runtime
from pocketstack.objectstore.errors import SwiftError

Write = Callable[[Any], Any]  # (sqlite3.Connection in a transaction) -> result

MAX_BATCH = 64  # writes a transaction takes at most: the first waits for the others
IDLE_EXIT = 2.0  # seconds without work before the thread ends (a new write starts it again)


class _Committer:
    def __init__(self):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._running = False
        self._runtime = runtime.current()

    def submit(self, write: Write):
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put((write, future))
        with self._lock:
            if not self._running:
                self._running = True
                threading.Thread(target=self._run, name="object-rows", daemon=True).start()
        return future.result()

    def _run(self) -> None:
        with self._runtime.activated():
            while True:
                try:
                    first = self._queue.get(timeout=IDLE_EXIT)
                except queue.Empty:
                    with self._lock:
                        if self._queue.empty():
                            self._running = False
                            return
                    continue
                self._commit(first)

    def _take(self, batch: list) -> None:
        while len(batch) < MAX_BATCH:
            try:
                batch.append(self._queue.get_nowait())
            except queue.Empty:
                return

    def _commit(self, first) -> None:
        batch, outcomes = [first], []
        try:
            with db.sqlite_transaction(durable=True) as driver:
                # Taken once the lock is ours: what arrived while another process's
                # commit held it joins this one (batches of 1.1-3.4 rows when taken
                # before; see bench/results/objectstore.md).
                self._take(batch)
                _write_all(driver, batch, outcomes)
        except BaseException:  # noqa: BLE001 - rolled back: each again on its own
            for write, future in batch:
                _alone(write, future)
            return
        for future, result, refused in outcomes:
            if refused is None:
                future.set_result(result)
            else:
                future.set_exception(refused)


def _write_all(driver, batch: list, outcomes: list) -> None:
    for write, future in batch:
        try:
            outcomes.append((future, write(driver), None))
        except SwiftError as refused:
            outcomes.append((future, None, refused))


def _alone(write: Write, future: concurrent.futures.Future) -> None:
    try:
        with db.sqlite_transaction(durable=True) as driver:
            result = write(driver)
    except BaseException as error:  # noqa: BLE001 - the uploader's to raise
        future.set_exception(error)
    else:
        future.set_result(result)


def run(write: Write):
    """``write(driver)``'s result once its transaction has committed (its exception if it
    failed). Inside a transaction this thread has open, it runs there at once."""
    if getattr(db._local, "session", None) is not None:
        with db.sqlite_transaction() as driver:  # that transaction's own commit
            return write(driver)
    return runtime.current().slot(__name__, _Committer).submit(write)
