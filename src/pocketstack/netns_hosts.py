"""Hosts of one machine as network namespaces: the plumbing `pocketstack lab` (lab.py)
and the overlay tests (tests/helpers/overlay_hosts.py) share. A switch (a bridge in a
namespace of its own), hosts plugged into it, veth links between namespaces, a relay from
a host's loopback to the machine's API, and the processes run for the hosts (spawned,
found, stopped).
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time


def sh(*args, check=True, timeout=60):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=check)


# --- namespaces on a switch --------------------------------------------------------------

def make_switch(ns: str, bridge: str = "sw") -> None:
    """A namespace holding one bridge: the hosts' shared link."""
    sh("ip", "netns", "add", ns)
    sh("ip", "-n", ns, "link", "add", bridge, "type", "bridge")
    sh("ip", "-n", ns, "link", "set", bridge, "up")


def plug_host(switch: str, ns: str, index: int, address: str, bridge: str = "sw",
              physnet_iface: str | None = None) -> None:
    """A host namespace ``ns`` with ``up0`` on the switch holding ``address`` (a CIDR);
    with ``physnet_iface`` a second link to the switch without an address (for flat and
    vlan provider networks)."""
    sh("ip", "netns", "add", ns)
    sh("ip", "-n", switch, "link", "add", f"p{index}", "type", "veth", "peer", "name", "up0",
       "netns", ns)
    sh("ip", "-n", switch, "link", "set", f"p{index}", "master", bridge, "up")
    if physnet_iface:
        sh("ip", "-n", switch, "link", "add", f"q{index}", "type", "veth", "peer", "name",
           physnet_iface, "netns", ns)
        sh("ip", "-n", switch, "link", "set", f"q{index}", "master", bridge, "up")
    for command in ("link set lo up", f"addr add {address} dev up0", "link set up0 up"):
        sh("ip", "-n", ns, *command.split())


def link_namespaces(ns: str, iface: str, other: str, address: str) -> None:
    """A new namespace ``other`` whose ``eth0`` (``address``) is the peer of ``iface``
    (up, no address) in ``ns``."""
    sh("ip", "netns", "add", other)
    sh("ip", "-n", ns, "link", "add", iface, "type", "veth", "peer", "name", "eth0", "netns",
       other)
    sh("ip", "-n", ns, "link", "set", iface, "up")
    for command in ("link set lo up", f"addr add {address} dev eth0", "link set eth0 up"):
        sh("ip", "-n", other, *command.split())


def processes_under(directory: str) -> list[int]:
    """Pids of the processes whose command line names a path in ``directory`` (a lab's or
    fabric's processes and the dnsmasq its agents started), but for this one's own."""
    found, mine = [], _ancestry()
    marker = directory.rstrip("/").encode() + b"/"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if int(pid) not in mine and marker in cmdline:
            found.append(int(pid))
    return found


def _ancestry() -> set[int]:
    """This process and its parents (a `sudo` or `timeout` before `lab down --dir …` names
    the dir too)."""
    pids, pid = set(), os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(") ", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def remove_agent_leftovers(directory: str, agent_dirs) -> None:
    """What stopped agents leave behind: a network node's dnsmasq (started from
    ``directory``), and the qdhcp-/qrouter- namespace names (the machine's, not the host
    namespace's) their state dirs record."""
    for pid in processes_under(directory):
        if _command(pid).startswith("dnsmasq"):
            kill(pid, signal.SIGKILL)
    for agent_dir in agent_dirs:
        for kind, prefix in (("agent", "qdhcp-"), ("l3", "qrouter-")):
            state = os.path.join(agent_dir, "network", kind)
            for name in (os.listdir(state) if os.path.isdir(state) else ()):
                sh("ip", "netns", "del", prefix + name, check=False)


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def kill(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


# --- processes of the hosts -------------------------------------------------------------

def spawn(argv: list[str], log_path: str, pid_path: str, netns: str | None = None,
          module: str = "pocketstack.cli.main") -> int:
    """``pocketstack <argv>`` in the background (in ``netns``: `ip netns exec` execs it, so
    the pid is the process's own), its pid kept in ``pid_path``."""
    command = [sys.executable, "-m", module, *argv]
    if netns:
        command = ["ip", "netns", "exec", netns, *command]
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    with open(pid_path, "w") as f:
        f.write(f"{proc.pid}\n")
    return proc.pid


def running(pid_path: str, marker: str) -> int | None:
    """The pid in ``pid_path`` while that process runs with ``marker`` in its command
    line (a reused pid is not ours)."""
    try:
        with open(pid_path) as f:
            pid = int(f.read().strip())
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            ours = marker.encode() in f.read()
        with open(f"/proc/{pid}/stat") as f:
            zombie = f.read().split(") ", 1)[1][:1] == "Z"
    except (OSError, ValueError):
        return None
    return pid if ours and not zombie else None


def stop(pid_path: str, marker: str, timeout: float = 30.0) -> bool:
    """SIGTERM, then SIGKILL after ``timeout``; whether it was running."""
    pid = running(pid_path, marker)
    if pid is None:
        return False
    kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while running(pid_path, marker) == pid:
        if time.monotonic() > deadline:
            kill(pid, signal.SIGKILL)
            deadline += 10
        time.sleep(0.05)
    return True


class Relay:
    """TCP from 127.0.0.1:``port`` inside namespace ``ns`` (0: a free one, then
    ``self.port``) to ``target``, an address of the machine's: a host reaches the
    controller's API at the same URL as everywhere else, as a real one reaches it over
    the management network. Each connection is piped both ways on threads of its own;
    close() stops accepting."""

    def __init__(self, ns: str, target: tuple[str, int], port: int = 0):
        from pocketstack.network.agent.ip import listening_socket

        self.target = target
        self.sock = listening_socket(ns, "127.0.0.1", port)
        self.port = self.sock.getsockname()[1]
        self._acceptor = threading.Thread(target=self._accept, name=f"relay-{ns}",
                                          daemon=True)
        self._acceptor.start()

    def wait(self) -> None:
        """Until close() (the lab's relay process: forever)."""
        self._acceptor.join()

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept
        except OSError:
            pass
        self.sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.target, timeout=10)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
        back.start()
        _pipe(client, upstream)
        back.join()
        client.close()
        upstream.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for sock, how in ((sink, socket.SHUT_WR), (source, socket.SHUT_RD)):
            try:
                sock.shutdown(how)
            except OSError:
                pass


def namespaces() -> list[str]:
    out = sh("ip", "netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


if __name__ == "__main__" and sys.argv[1:2] == ["relay"]:
    # `relay <netns> <port> <dir>`: the lab's relay process (the dir marks it as the lab's)
    Relay(sys.argv[2], ("127.0.0.1", int(sys.argv[3])), int(sys.argv[3])).wait()
