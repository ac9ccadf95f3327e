"""Which cloud the running code belongs to, so several clouds can share one process.

Everything that belongs to one cloud — its configuration, database engine, message bus,
policy enforcer, key and catalog caches, service token — lives in that cloud's
``Runtime``, never in a module global. Modules keep their state in a slot of the current
runtime::

    def _state() -> _FernetState:
        return runtime.current().slot(__name__, _FernetState)

``current()`` is the runtime of the code running now: the one a ``Cloud`` activated in this
context (its HTTP server, RPC workers and background threads run inside it), else the most
recently started cloud that is still running (so code outside any cloud, like a test's
direct database write, finds the only cloud there usually is), else a process-wide
runtime (the CLI commands, the scale-out agents: one cloud per process).

Threads do not inherit a context: whoever starts a thread for a cloud passes its target
through ``bind`` (or gives a thread pool ``initializer=runtime.current().enter``).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import itertools
import threading
from typing import Any, Callable, Iterator, TypeVar

T = TypeVar("T")

_names = itertools.count(1)


class Runtime:
    """The per-cloud state of one cloud in this process."""

    def __init__(self, name: str | None = None):
        self.name = name or f"cloud-{next(_names)}"
        self._slots: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<Runtime {self.name}>"

    def slot(self, key: str, factory: Callable[[], T]) -> T:
        """The object stored under ``key``, made by ``factory`` on first use."""
        try:
            return self._slots[key]
        except KeyError:
            with self._lock:
                if key not in self._slots:
                    self._slots[key] = factory()
                return self._slots[key]

    def enter(self) -> None:
        """Make this the current runtime of the calling thread's context (for a thread
        pool's initializer: the worker thread serves this cloud for its whole life)."""
        _current.set(self)

    @contextlib.contextmanager
    def activated(self) -> Iterator["Runtime"]:
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)


_current: contextvars.ContextVar[Runtime | None] = contextvars.ContextVar(
    "pocketstack_runtime", default=None)
_running: list[Runtime] = []  # runtimes of the clouds running in this process, newest last
_running_lock = threading.Lock()
_process = Runtime("process")


def current() -> Runtime:
    rt = _current.get()
    if rt is not None:
        return rt
    running = _running
    return running[-1] if running else _process


def started(rt: Runtime) -> None:
    with _running_lock:
        if rt not in _running:
            _running.append(rt)


def stopped(rt: Runtime) -> None:
    with _running_lock:
        if rt in _running:
            _running.remove(rt)


def bind(func: Callable[..., T]) -> Callable[..., T]:
    """``func`` made to run in the runtime current now, from whichever thread calls it."""
    rt = current()

    @functools.wraps(func)
    def run(*args, **kwargs):
        with rt.activated():
            return func(*args, **kwargs)

    return run
