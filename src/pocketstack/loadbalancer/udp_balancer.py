"""A userspace UDP load balancer: the haproxy data plane's UDP listeners (HAProxy carries
no UDP; Octavia's amphora uses LVS through keepalived, which needs the ip_vs module a
container's kernel may not load). One process per load balancer, run in its namespace by
the data plane (dataplane.py) and left serving while the cloud process is away, as
HAProxy is. Standard library only: it runs as a plain script.

    python udp_balancer.py <dir> [--daemon]

reads <dir>/udp.json (written by the data plane), writes its pid to <dir>/udp.pid and,
every half second when it changed, the members' health and the listeners' counters to
<dir>/udp-status.json. SIGHUP reads the configuration again (flows to members that stay
are kept); SIGTERM stops it. With --daemon it detaches once its sockets are bound (a
failure to bind is the caller's exit status and message).

Each client (address, port) is a flow: its first datagram picks a member (ROUND_ROBIN
weighted, LEAST_CONNECTIONS, SOURCE_IP, SOURCE_IP_PORT; backups only when no other is
up; SOURCE_IP session persistence keeps a client address on its member for
persistence_timeout), later ones go to the same member from the same socket, whose
answers go back to the client from the VIP; a flow idle for the listener's
timeout_client_data goes. Health monitors: UDP-CONNECT (a datagram; an ICMP port
unreachable is down, as `nc -uz` in Octavia's udp_check.sh), PING, TCP and HTTP, with
max_retries to rise and max_retries_down to fall.
"""
from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import math
import os
import shutil
import signal
import socket
import sys
import time

CONFIG, STATUS, PIDFILE = "udp.json", "udp-status.json", "udp.pid"
UP, DOWN, MAINT = "UP", "DOWN", "MAINT"


def _family(address: str) -> int:
    return socket.AF_INET6 if ":" in address else socket.AF_INET


class Member:
    def __init__(self, conf: dict, previous: "Member | None"):
        self.id = conf["id"]
        self.address, self.port = conf["address"], int(conf["port"])
        self.weight = int(conf.get("weight", 1))
        self.backup = bool(conf.get("backup"))
        self.enabled = bool(conf.get("enabled", True))
        self.check_address = conf.get("monitor_address") or self.address
        self.check_port = int(conf.get("monitor_port") or self.port)
        # The health a reload keeps (None: not checked yet or not monitored).
        self.state = previous.state if previous is not None else None
        self.ups = self.downs = 0
        self.flows = 0
        self.current = 0  # smooth weighted round robin

    def usable(self, monitored: bool) -> bool:
        # Not checked yet counts as up, as HAProxy starts its servers.
        return self.enabled and self.weight > 0 and (not monitored or self.state != DOWN)


class Pool:
    def __init__(self, conf: dict, previous: "Pool | None"):
        old = {m.id: m for m in previous.members} if previous is not None else {}
        self.id = conf["id"]
        self.algorithm = conf.get("algorithm", "ROUND_ROBIN")
        self.members = [Member(m, old.get(m["id"])) for m in conf.get("members", [])]
        self.monitor = conf.get("monitor")
        persistence = conf.get("persistence") or {}
        self.sticky_timeout = float(persistence.get("timeout") or 0) \
            if persistence.get("type") == "SOURCE_IP" else 0.0
        self.sticky: dict[str, tuple[str, float]] = previous.sticky if previous else {}

    def candidates(self) -> list[Member]:
        monitored = self.monitor is not None
        up = [m for m in self.members if m.usable(monitored)]
        return [m for m in up if not m.backup] or [m for m in up if m.backup]

    def pick(self, client: tuple) -> Member | None:
        members = self.candidates()
        if not members:
            return None
        if self.sticky_timeout:
            held = self.sticky.get(client[0])
            if held and held[1] > time.monotonic():
                member = next((m for m in members if m.id == held[0]), None)
                if member is not None:
                    self.sticky[client[0]] = (member.id, time.monotonic() + self.sticky_timeout)
                    return member
        if self.algorithm in ("SOURCE_IP", "SOURCE_IP_PORT"):
            key = client[0] if self.algorithm == "SOURCE_IP" else f"{client[0]}:{client[1]}"
            member = max(members, key=lambda m: _score(key, m))  # weighted rendezvous
        elif self.algorithm == "LEAST_CONNECTIONS":
            member = min(members, key=lambda m: (m.flows / m.weight, m.id))
        else:  # ROUND_ROBIN, weighted and smooth (nginx's)
            total = sum(m.weight for m in members)
            for m in members:
                m.current += m.weight
            member = max(members, key=lambda m: m.current)
            member.current -= total
        if self.sticky_timeout:
            self.sticky[client[0]] = (member.id, time.monotonic() + self.sticky_timeout)
        return member


def _score(key: str, member: Member) -> float:
    digest = hashlib.blake2b(f"{key}|{member.id}".encode(), digest_size=8).digest()
    unit = (int.from_bytes(digest, "big") + 1) / 2 ** 64
    return -member.weight / math.log(unit) if unit < 1 else float("inf")


class Flow:
    """A client's datagrams to its member, from a socket of its own (the member's
    answers come back on it)."""

    def __init__(self, listener: "Listener", client: tuple, member: Member):
        self.listener, self.client, self.member = listener, client, member
        self.sock = socket.socket(_family(member.address), socket.SOCK_DGRAM)
        self.sock.setblocking(False)
        self.sock.connect((member.address, member.port))
        self.used = time.monotonic()
        member.flows += 1
        listener.loop.add_reader(self.sock.fileno(), self.answer)

    def send(self, data: bytes) -> None:
        self.used = time.monotonic()
        try:
            self.sock.send(data)
        except OSError:  # buffer full, or the member's ICMP error: dropped, as UDP is
            self.listener.counters["request_errors"] += 1

    def answer(self) -> None:
        for _ in range(64):
            try:
                data = self.sock.recv(65535)
            except BlockingIOError:
                return
            except OSError:  # an ICMP error for an earlier datagram
                continue
            self.used = time.monotonic()
            self.listener.reply(data, self.client)

    def close(self) -> None:
        self.listener.loop.remove_reader(self.sock.fileno())
        self.sock.close()
        self.member.flows -= 1


class Listener:
    def __init__(self, loop, conf: dict):
        self.loop = loop
        self.id = conf["id"]
        self.key = (conf["address"], int(conf["port"]))
        self.sock = socket.socket(_family(conf["address"]), socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(self.key)
        self.sock.setblocking(False)
        self.flows: dict[tuple, Flow] = {}
        self.counters = dict(bytes_in=0, bytes_out=0, total_connections=0,
                             request_errors=0)
        self.configure(conf, None)
        loop.add_reader(self.sock.fileno(), self.receive)

    def configure(self, conf: dict, pool: Pool | None) -> None:
        self.pool = pool
        self.allowed = [ipaddress.ip_network(c, strict=False)
                        for c in conf.get("allowed_cidrs") or []]
        self.limit = int(conf.get("connection_limit") or -1)
        self.idle = max(float(conf.get("timeout", 50000)) / 1000.0, 1.0)
        ids = {m.id: m for m in pool.members} if pool is not None else {}
        for client, flow in list(self.flows.items()):
            member = ids.get(flow.member.id)
            if member is None or (member.address, member.port) != (
                    flow.member.address, flow.member.port) or not self.admits(client):
                self.drop(client)
            else:  # the same member of the reloaded pool
                flow.member.flows -= 1
                flow.member = member
                member.flows += 1

    def receive(self) -> None:
        for _ in range(64):
            try:
                data, client = self.sock.recvfrom(65535)
            except BlockingIOError:
                return
            except OSError:
                continue
            self.counters["bytes_in"] += len(data)
            flow = self.flows.get(client)
            if flow is None:
                flow = self.open(client)
                if flow is None:
                    self.counters["request_errors"] += 1
                    continue
            flow.send(data)

    def admits(self, client: tuple) -> bool:
        address = ipaddress.ip_address(client[0])
        return not self.allowed or any(address in net for net in self.allowed)

    def open(self, client: tuple) -> Flow | None:
        if not self.admits(client):
            return None
        if self.pool is None or 0 <= self.limit <= len(self.flows):
            return None
        member = self.pool.pick(client)
        if member is None:
            return None
        try:
            flow = Flow(self, client, member)
        except OSError:
            return None
        self.flows[client] = flow
        self.counters["total_connections"] += 1
        return flow

    def reply(self, data: bytes, client: tuple) -> None:
        try:
            self.sock.sendto(data, client)
            self.counters["bytes_out"] += len(data)
        except OSError:
            self.counters["request_errors"] += 1

    def drop(self, client: tuple) -> None:
        flow = self.flows.pop(client, None)
        if flow is not None:
            flow.close()

    def expire(self) -> None:
        now = time.monotonic()
        for client, flow in list(self.flows.items()):
            if now - flow.used > self.idle:
                self.drop(client)

    def close(self) -> None:
        for client in list(self.flows):
            self.drop(client)
        self.loop.remove_reader(self.sock.fileno())
        self.sock.close()

    def stats(self) -> dict:
        return dict(self.counters, active_connections=len(self.flows))


# --- health checks ---------------------------------------------------------------------

async def _check(monitor: dict, member: Member) -> bool:
    kind, timeout = monitor["type"], float(monitor.get("timeout", 5))
    address, port = member.check_address, member.check_port
    try:
        if kind == "PING":
            ping = shutil.which("ping")
            args = [ping, "-n"] if ping else [shutil.which("busybox") or "busybox", "ping"]
            proc = await asyncio.create_subprocess_exec(
                *args, "-q", "-c", "1", "-W", str(max(1, int(timeout))), address,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
            return await asyncio.wait_for(proc.wait(), timeout + 1) == 0
        if kind == "UDP-CONNECT":
            return await asyncio.wait_for(_udp_connect(address, port, timeout), timeout + 1)
        reader, writer = await asyncio.wait_for(asyncio.open_connection(address, port),
                                                timeout)
        try:
            if kind != "HTTP":
                return True  # TCP: the connection is the check
            writer.write(f"{monitor.get('http_method', 'GET')} "
                         f"{monitor.get('url_path', '/')} HTTP/1.0\r\n\r\n".encode())
            line = await asyncio.wait_for(reader.readline(), timeout)
            parts = line.split()
            return len(parts) > 1 and parts[1].decode(errors="replace") in set(
                monitor.get("expected_codes") or ["200"])
        finally:
            writer.close()
    except (OSError, asyncio.TimeoutError, ValueError):
        return False


async def _udp_connect(address: str, port: int, timeout: float) -> bool:
    """Up unless the member's host says the port is closed (ICMP port unreachable) or
    is unreachable within the timeout; an answer or silence is up (nc -uz)."""
    loop = asyncio.get_running_loop()
    with socket.socket(_family(address), socket.SOCK_DGRAM) as sock:
        sock.setblocking(False)
        sock.connect((address, port))
        sock.send(b"")
        try:
            await asyncio.wait_for(loop.sock_recv(sock, 1), timeout)
        except asyncio.TimeoutError:
            return True
        except OSError:
            return False
        return True


async def _monitor(balancer: "Balancer", pool: Pool) -> None:
    monitor = pool.monitor
    delay = float(monitor.get("delay", 5))
    rise, fall = int(monitor.get("max_retries", 3)), int(monitor.get("max_retries_down", 3))
    while True:
        members = [m for m in pool.members if m.enabled]
        results = await asyncio.gather(*(_check(monitor, m) for m in members))
        for member, ok in zip(members, results):
            if ok:
                member.ups, member.downs = member.ups + 1, 0
                if member.state is None or member.ups >= rise:
                    member.state = UP
            else:
                member.downs, member.ups = member.downs + 1, 0
                if member.state is None or member.downs >= fall:
                    member.state = DOWN
        balancer.changed()
        await asyncio.sleep(delay)


# --- the process --------------------------------------------------------------------

class Balancer:
    def __init__(self, folder: str):
        self.folder = folder
        self.loop = asyncio.get_event_loop()
        self.listeners: dict[str, Listener] = {}
        self.pools: dict[str, Pool] = {}
        self.monitors: list[asyncio.Task] = []
        self.last = None

    def load(self) -> None:
        with open(os.path.join(self.folder, CONFIG)) as f:
            conf = json.load(f)
        for task in self.monitors:
            task.cancel()
        pools, wanted = {}, {}
        for li in conf.get("listeners", []):
            wanted[li["id"]] = li
            if li.get("pool"):
                pools[li["pool"]["id"]] = Pool(li["pool"], self.pools.get(li["pool"]["id"]))
        for listener_id, listener in list(self.listeners.items()):
            li = wanted.get(listener_id)
            if li is None or listener.key != (li["address"], int(li["port"])):
                listener.close()
                del self.listeners[listener_id]
        for listener_id, li in wanted.items():
            if listener_id not in self.listeners:
                self.listeners[listener_id] = Listener(self.loop, li)
            pool = pools.get(li["pool"]["id"]) if li.get("pool") else None
            self.listeners[listener_id].configure(li, pool)
        self.pools = pools
        self.monitors = [self.loop.create_task(_monitor(self, pool))
                         for pool in pools.values() if pool.monitor]
        self.changed()

    def changed(self) -> None:
        status = {"members": {}, "listeners": {}}
        for pool in self.pools.values():
            for m in pool.members:
                if not m.enabled:
                    status["members"][m.id] = MAINT
                elif pool.monitor and m.state:
                    status["members"][m.id] = m.state
        for listener_id, listener in self.listeners.items():
            status["listeners"][listener_id] = listener.stats()
        if status == self.last:
            return
        self.last = status
        path = os.path.join(self.folder, STATUS)
        with open(path + ".new", "w") as f:
            json.dump(status, f)
        os.replace(path + ".new", path)

    async def tick(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            for listener in self.listeners.values():
                listener.expire()
            now = time.monotonic()
            for pool in self.pools.values():
                for ip in [ip for ip, (_, until) in pool.sticky.items() if until < now]:
                    del pool.sticky[ip]
            self.changed()

    def reload(self) -> None:
        try:
            self.load()
        except Exception as error:  # noqa: BLE001 - keep serving the configuration it has
            print(f"udp balancer: reload failed: {error}", file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    folder = os.path.abspath(argv[0])
    daemon = "--daemon" in argv[1:]
    ready_w = None
    if daemon:
        ready_r, ready_w = os.pipe()
        if os.fork():
            os.close(ready_w)
            message = os.read(ready_r, 4096).decode()
            if message != "ready":
                print(message or "udp balancer: exited at start", file=sys.stderr)
                return 1
            return 0
        os.close(ready_r)
        os.setsid()
        if os.fork():
            os._exit(0)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        log = os.open(os.path.join(folder, "udp.log"),
                      os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    balancer = Balancer(folder)
    # Before the pid is told: a SIGHUP sent at once must not find the default action.
    loop.add_signal_handler(signal.SIGHUP, balancer.reload)
    loop.add_signal_handler(signal.SIGTERM, loop.stop)
    try:
        balancer.load()
    except Exception as error:  # noqa: BLE001 - told to the caller
        if ready_w is not None:
            os.write(ready_w, f"udp balancer: {error}".encode())
        raise
    with open(os.path.join(folder, PIDFILE + ".new"), "w") as f:
        f.write(f"{os.getpid()}\n")
    os.replace(os.path.join(folder, PIDFILE + ".new"), os.path.join(folder, PIDFILE))
    if ready_w is not None:
        os.write(ready_w, b"ready")
        os.close(ready_w)
    loop.create_task(balancer.tick())
    loop.run_forever()
    for listener in balancer.listeners.values():
        listener.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
