"""The real `openstack` CLI without its start-up cost: a process that has imported
openstackclient and its command modules once (about 1.5-2.5 s of every `openstack` run)
forks a fresh child per command, which runs the console script's own function,
``openstackclient.shell.main(argv)``, with the command's environment, its stdout/stderr
in files and stdin from /dev/null — a new process per command, as from a shell, only
without importing everything again. (The README's commands still run the installed
`openstack` script from bash: tests/readme/test_readme.py.)

Protocol on a Unix socket: the client sends one JSON request {"args", "env"} and a
newline; the child forked for the connection answers {"pid"} at once and, when the command
ends, {"rc", "stdout", "stderr"}.
"""
from __future__ import annotations

import atexit
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading

# What `openstack` imports for the commands the tests run; importing them here is the
# whole point (a module not listed is imported by the child as usual).
PRELOAD = """
import openstackclient.shell, openstack, keystoneauth1, osc_lib, cliff
import openstackclient.common.clientmanager
from importlib.metadata import entry_points
for group in entry_points().groups:
    if group.startswith("openstack.") and not group.startswith("openstack.cli.extension"):
        for ep in entry_points(group=group):
            try:
                __import__(ep.module)
            except Exception:
                pass
"""

SERVER = r"""
import json, os, signal, socket, sys
exec(compile(PRELOAD, "preload", "exec"))
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reap themselves
listener = socket.socket(socket.AF_UNIX)
listener.bind(PATH)
listener.listen(64)
sys.stdout.write("ready\n"); sys.stdout.flush()
while True:
    conn, _ = listener.accept()
    if os.fork() != 0:
        conn.close()
        continue
    listener.close()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    request = json.loads(conn.makefile("rb").readline())
    conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
    out, err = (os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
                for p in (request["stdout"], request["stderr"]))
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0); os.dup2(out, 1); os.dup2(err, 2)
    os.environ.clear(); os.environ.update(request["env"]); os.chdir(request["cwd"])
    sys.argv = ["openstack", *request["args"]]
    try:
        from openstackclient.shell import main
        rc = main(request["args"])
    except SystemExit as exit:
        rc = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    except BaseException:
        import traceback; traceback.print_exc(); rc = 1
    try:
        sys.stdout.flush(); sys.stderr.flush()
    finally:
        conn.sendall(json.dumps({"rc": rc or 0}).encode() + b"\n")
        os._exit(0)
"""


class Zygote:
    """One per test process, started on first use."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="osc-zygote-")
        self.path = os.path.join(self.dir, "socket")
        code = f"PATH = {self.path!r}\nPRELOAD = {PRELOAD!r}\n{SERVER}"
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the openstack CLI zygote did not start")

    def run(self, args, env: dict, timeout: float) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory(dir=self.dir) as tmp:
            out, err = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
            with socket.socket(socket.AF_UNIX) as sock:
                sock.connect(self.path)
                sock.sendall(json.dumps({"args": list(args), "env": env, "cwd": os.getcwd(),
                                         "stdout": out, "stderr": err}).encode() + b"\n")
                sock.settimeout(timeout)
                answers = sock.makefile("rb")
                pid = json.loads(answers.readline())["pid"]
                try:
                    line = answers.readline()
                except socket.timeout:
                    _kill(pid)
                    raise subprocess.TimeoutExpired(["openstack", *args], timeout) from None
            if not line:
                raise RuntimeError(f"openstack {' '.join(args)}: the CLI process died")
            rc = json.loads(line)["rc"]
            with open(out, errors="replace") as f_out, open(err, errors="replace") as f_err:
                return subprocess.CompletedProcess(["openstack", *args], rc, f_out.read(),
                                                   f_err.read())

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        subprocess.run(["rm", "-rf", self.dir], check=False)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass


_zygote: Zygote | None = None
_lock = threading.Lock()


def zygote() -> Zygote:
    global _zygote
    with _lock:
        if _zygote is None or _zygote.proc.poll() is not None:
            _zygote = Zygote()
            atexit.register(_zygote.stop)
        return _zygote
