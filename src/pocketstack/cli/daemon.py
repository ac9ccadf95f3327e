"""The cloud in the background, for scripts, CI and other languages: `pocketstack up
--detach` starts `pocketstack up` as a process of its own (output in
``<data dir>/pocketstack.log``, its pid in ``<data dir>/pocketstack.pid``) and returns
once every service answers; `pocketstack wait` blocks until then; `pocketstack down`
stops it.

Exit codes: 0 success; 1 the cloud could not start, did not become ready in time or
could not be stopped.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import click

from pocketstack.common import processes

PID_FILE = "pocketstack.pid"
LOG_FILE = "pocketstack.log"
# Every service's root: each answers once the cloud has finished starting (requests to
# services other than identity wait for that).
SERVICE_ROOTS = ("/identity/v3", "/compute/v2.1/", "/image/versions", "/network/",
                 "/volume/")


def pid_path(data_dir: str) -> str:
    return os.path.join(data_dir, PID_FILE)


def read_pid(data_dir: str) -> int | None:
    """The pid in the pid file if that process is still a pocketstack, else None."""
    try:
        with open(pid_path(data_dir)) as f:
            pid = int(f.read().strip())
    except (OSError, ValueError):
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            alive = b"pocketstack" in f.read()
    except OSError:
        alive = False
    return pid if alive else None


def cloud_url(data_dir: str) -> str | None:
    """The cloud's base URL, from the clouds.yaml `pocketstack up` wrote."""
    try:
        with open(os.path.join(data_dir, "clouds.yaml")) as f:
            for line in f:
                key, _, value = line.strip().partition(":")
                if key == "auth_url":
                    return value.strip().removesuffix("/identity")
    except OSError:
        return None
    return None


def wait_ready(url: str, timeout: float, alive=lambda: True) -> str | None:
    """Until every service at ``url`` answers (None), else why not (a message)."""
    import httpx

    deadline = time.monotonic() + timeout
    pending = list(SERVICE_ROOTS)
    last = "nothing answered"
    with httpx.Client(timeout=5) as client:
        while pending:
            if not alive():
                return "the cloud process exited"
            try:
                status = client.get(url + pending[0]).status_code
                if status < 500:  # (a 404: this cloud has no such service)
                    pending.pop(0)
                    continue
                last = f"{pending[0]} answered {status}"
            except httpx.HTTPError as error:
                last = f"{url}: {type(error).__name__}"
            if time.monotonic() > deadline:
                return f"not ready after {timeout:g}s ({last})"
            time.sleep(0.1)
    return None


def start_detached(argv: list[str], data_dir: str, timeout: float) -> None:
    """Run `pocketstack up <argv>` in the background; return once it is ready."""
    pid = read_pid(data_dir)
    if pid is not None:
        raise click.ClickException(f"pocketstack (pid {pid}) is already running on "
                                   f"{data_dir}; `pocketstack down` stops it.")
    parent = os.path.dirname(data_dir)
    os.makedirs(parent, exist_ok=True)
    # The log lives in the data dir; a failed first start removes that dir, so the child
    # writes to a file next to it first and the log moves in once the dir exists.
    log_path = os.path.join(parent, f".pocketstack-{os.getpid()}.log")
    with _owner_only(log_path, os.O_APPEND, "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "pocketstack.cli.main", "up", *argv,
                                 "--data-dir", data_dir], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    url = None
    deadline = time.monotonic() + timeout
    while url is None and proc.poll() is None and time.monotonic() < deadline:
        if "pocketstack is up at" in _read(log_path) or "pocketstack api is up" in \
                _read(log_path):
            url = cloud_url(data_dir)
        time.sleep(0.05)
    if url is None:
        proc.terminate() if proc.poll() is None else None
        proc.wait(30)
        output = _read(log_path).strip()
        os.unlink(log_path)
        raise click.ClickException(output.splitlines()[-1].removeprefix("error: ")
                                   if output else "pocketstack up did not start")
    os.replace(log_path, os.path.join(data_dir, LOG_FILE))
    with _owner_only(pid_path(data_dir), os.O_TRUNC, "w") as f:
        f.write(f"{proc.pid}\n")
    problem = wait_ready(url, max(1.0, deadline - time.monotonic()),
                         alive=lambda: proc.poll() is None)
    if problem:
        raise click.ClickException(f"pocketstack up: {problem}; see "
                                   f"{os.path.join(data_dir, LOG_FILE)}")
    click.echo(_read(os.path.join(data_dir, LOG_FILE)).replace("  Stop with Ctrl-C.",
                                                               "  Stop with `pocketstack down`."),
               nl=False)


def _owner_only(path: str, flags: int, mode: str):
    """Open for writing, created 0600 like every other file of the data dir (this process
    runs with the user's umask: the log and pid file were 0644)."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | flags, 0o600), mode)


def _read(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def stop(data_dir: str, timeout: float) -> str:
    """SIGTERM the background cloud and wait for it to exit; what happened, for people."""
    pid = read_pid(data_dir)
    if pid is None:
        _remove(pid_path(data_dir))
        return f"pocketstack is not running on {data_dir}."
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while read_pid(data_dir) == pid and processes.running(pid):
        if time.monotonic() > deadline:
            raise click.ClickException(f"pocketstack (pid {pid}) did not stop within "
                                       f"{timeout:g}s.")
        time.sleep(0.05)
    _remove(pid_path(data_dir))
    return f"pocketstack (pid {pid}) stopped."


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
